internal import CSQLite
internal import Glibc
internal import SyncSystem

/// A store built aside (`StateStore.init(buildingAside:)`): how it is put in place.
extension StateStore {
    /// Whether this store was built aside and `finishCreation()` has yet to put it in place.
    public var isBuiltAside: Bool { asideTarget != nil }

    /// Puts a store built aside in place and closes it: switches the file to write-ahead logging (as every
    /// later open expects it), flushes it to disk, renames it to the database file and flushes the folder.
    /// Does nothing for a store opened in place (nor a second time).
    ///
    /// Throws when a step fails; the store is closed either way. Until the rename, the database file does not
    /// exist and the file aside stays for the next creation to remove: the next run starts with an empty store,
    /// as if this one had never run, and fetches its listings whole. A failed flush of the folder comes after
    /// the rename: the file is in place, but the rename may not survive a power cut.
    public func finishCreation() throws(StoreError) {
        guard let target = asideTarget else { return }
        let temporary = database.path
        asideTarget = nil
        defer { database.close() }
        do throws(SQLiteError) {
            let mode = try database.strings("PRAGMA journal_mode=WAL")
            guard mode == ["wal"] else {
                throw SQLiteError(code: SQLITE_ERROR, operation: "switch \(temporary) to write-ahead logging",
                                  message: "SQLite kept journal mode \(mode.joined())")
            }
            // Starts the log with the header page as it is, as a checkpoint of a log in place leaves it
            // (`checkpointIfWriteAheadLog`): the next run's first write then appends to a log that has its header,
            // instead of writing one and flushing it and the folder (~1 ms of the 304 right after a first sync).
            // Lost in a crash, the frame is no loss: the file holds the same page.
            try database.execute("PRAGMA user_version = \(StateStore.schemaVersion)")
        } catch {
            throw .sqlite(error)
        }
        database.close()
        // The log and the shared-memory file go with the file (the next process to open it rebuilds the index of
        // the latter). Should a rename fail, the next run creates them; one left aside waits for the next
        // creation to remove it.
        for suffix in ["-wal", "-shm"] where rename(temporary + suffix, target + suffix) != 0 {
            unlink(temporary + suffix)
        }
        let fd = retryingEINTR { open(temporary, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { throw StateStore.systemFailure("open \(temporary) to flush it") }
        let flushed = retryingEINTR { fdatasync(fd) } == 0
        let flushError = errno
        Glibc.close(fd)
        guard flushed else { throw StateStore.systemFailure("flush \(temporary) to disk", errno: flushError) }
        guard rename(temporary, target) == 0 else { throw StateStore.systemFailure("rename \(temporary) to \(target)") }
        let folder = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
        let directory = retryingEINTR { open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard directory >= 0 else { throw StateStore.systemFailure("open \(folder) to flush the rename of \(target)") }
        let folderFlushed = retryingEINTR { fsync(directory) } == 0
        let folderError = errno
        Glibc.close(directory)
        guard folderFlushed else {
            throw StateStore.systemFailure("flush \(folder) after renaming \(temporary) to \(target)", errno: folderError)
        }
    }

    /// A failed system call of `finishCreation()` as the I/O error SQLite would report (a storage failure).
    private static func systemFailure(_ operation: String, errno code: Int32 = errno) -> StoreError {
        .sqlite(SQLiteError(code: SQLITE_IOERR, operation: operation, message: String(cString: strerror(code))))
    }
}
