internal import CSQLite
internal import Glibc
internal import SyncSystem

/// A store built aside (`StateStore.init(buildingAside:)`): how it is put in place, and what a run that never
/// finished leaves.
extension StateStore {
    /// Whether this store was built aside and `finishCreation()` has yet to put it in place.
    public var isBuiltAside: Bool { asideTarget != nil }

    /// The files a store built aside for the database file at `path` may leave when its run never finished.
    static func asideFiles(of path: String) -> [String] {
        let temporary = asidePath(of: path)
        return [temporary, temporary + "-journal", temporary + "-wal", temporary + "-shm"]
    }

    /// Removes what a store built aside for the database file at `path` left when its run was killed (nothing
    /// of it is ever used: it was not in place). Returns the names removed, to be said. Only while no store is
    /// being built there (the caller holds the instance lock).
    /// Tries every file: one that cannot be removed does not keep the others; the first failure is thrown after.
    public static func removeLeftAside(of path: String) throws(StoreError) -> [String] {
        var removed: [String] = []
        var failure: StoreError?
        for file in asideFiles(of: path) {
            if unlink(file) == 0 {
                removed.append(file)
            } else if errno != ENOENT, failure == nil {
                failure = systemFailure("remove \(file), left by a run that did not finish")
            }
        }
        if let failure { throw failure }
        return removed
    }

    /// Puts a store built aside in place and closes it: switches the file to write-ahead logging (as every
    /// later open expects it), flushes it to disk, renames it to the database file and flushes the folder.
    /// Does nothing for a store opened in place (nor a second time).
    ///
    /// Throws when a step fails; the store is closed either way. A failure before the rename removes the file
    /// aside (never used once its run is over; on a full file system it would hold the space that failed): the
    /// database file does not exist, and the next run starts with an empty store, as if this one had never run,
    /// and fetches its listings whole. A failed flush of the folder comes after the rename: the file is in place,
    /// but the rename may not survive a power cut. A file system that is full or read-only fails with the error
    /// SQLite gives for it (`SQLiteError.isFull`, `isReadOnly`), whichever call met it.
    public func finishCreation() throws(StoreError) {
        guard let target = asideTarget else { return }
        let temporary = database.path
        asideTarget = nil
        var placed = false
        defer {
            database.close()
            if !placed {
                for file in StateStore.asideFiles(of: target) + [target + "-wal", target + "-shm"] { unlink(file) }
            }
        }
        do throws(SQLiteError) {
            let mode = try database.strings("PRAGMA journal_mode=WAL")
            guard mode == ["wal"] else {
                throw SQLiteError(code: SQLITE_ERROR, operation: "switch \(temporary) to write-ahead logging",
                                  message: "SQLite kept journal mode \(mode.joined())")
            }
        } catch {
            throw .sqlite(error.withSystemErrno(sqlite3_system_errno(database.handle)))
        }
        // Starts the log with the header page as it is, as a checkpoint of a log in place leaves it
        // (`checkpointIfWriteAheadLog`): the next run's first write then appends to a log that has its header,
        // instead of writing one and flushing it and the folder (~1 ms of the 304 right after a first sync).
        // Only that: should it fail, the next run writes the header. Lost in a crash, the frame is no loss
        // either: the file holds the same page.
        try? database.execute("PRAGMA user_version = \(StateStore.schemaVersion)")
        database.close()
        // The log and the shared-memory file go with the file (the next process to open it rebuilds the index of
        // the latter). Should a rename fail, the next run creates them.
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
        placed = true
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

    /// A failed system call as the error SQLite would report for it: a full file system (ENOSPC, EDQUOT) as
    /// SQLITE_FULL, a read-only one as SQLITE_READONLY, anything else as SQLITE_IOERR (all storage failures).
    static func systemFailure(_ operation: String, errno code: Int32 = errno) -> StoreError {
        .sqlite(SQLiteError(code: SQLiteError.code(forSystemErrno: code, else: SQLITE_IOERR), operation: operation,
                            message: String(cString: strerror(code))))
    }
}

extension SQLiteError {
    /// The SQLite result code that says what `errno` says of the file system: SQLITE_FULL for ENOSPC and EDQUOT,
    /// SQLITE_READONLY for EROFS, else `fallback`.
    static func code(forSystemErrno errno: Int32, else fallback: Int32) -> Int32 {
        switch errno {
        case ENOSPC, EDQUOT: SQLITE_FULL
        case EROFS: SQLITE_READONLY
        default: fallback
        }
    }

    /// This error, said as the file system's when SQLite's own code hides it: an I/O error (such as a
    /// shared-memory file that could not grow, SQLITE_IOERR_SHMSIZE) whose system call failed with ENOSPC is a
    /// full file system. `errno` is `sqlite3_system_errno` right after the failure.
    func withSystemErrno(_ errno: Int32) -> SQLiteError {
        guard code & 0xff == SQLITE_IOERR, case let code = SQLiteError.code(forSystemErrno: errno, else: self.code), code != self.code else {
            return self
        }
        return SQLiteError(code: code, operation: operation, message: "\(message): \(String(cString: strerror(errno)))")
    }
}
