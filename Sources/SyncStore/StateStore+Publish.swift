internal import CSQLite
internal import Glibc
import SyncCore
internal import SyncSystem

/// What `StateStore.settlePendingRename` found.
public enum PendingRenameOutcome: Equatable, Sendable {
    /// No rename was outstanding.
    case none
    /// The temporary file was renamed into place now.
    case finished
    /// The rename had happened; only the store did not know yet.
    case cleared
    /// Neither the temporary file nor the file it became is there: the listing's bodies are gone.
    case lost
}

/// The cache file as the only copy of the bodies (docs/architecture.md, "Storing listings"): writing it for
/// local changes, finishing a commit's rename after a crash, forgetting a listing whose file is gone, and
/// converting a schema-1 file.
extension StateStore {
    /// Rewrites the cache file of `source` for the current outbox, through the same writer as a listing:
    /// the chunks the changes cannot touch are copied from the current file (`feedByCopying`), the others
    /// read from it and the index, each record with its local change applied. When the current file cannot
    /// be copied from (its header or tail does not match the fingerprint), every record is read instead.
    /// When the only changes since the file was written are new local creations, they are appended instead
    /// (`appendCreates`), at the cost of the change rather than of everything queued.
    /// Returns the records the file holds and whether a new file was written.
    @discardableResult
    public func rebuildCacheFile(source: String) throws -> (records: Int, rewritten: Bool) {
        // A schema-1 listing not converted yet (its conversion failed at start) is converted now, with the
        // local changes applied: the index alone would hold none of its records.
        if try legacySources().contains(source) {
            try migrateLegacyListing(source: source)
            return (try self.state(of: source).snapshotRecordCount ?? 0, true)
        }
        // Only new local creations since the file was written: appended, the rest of the file copied as it is.
        if let appended = try appendCreates(source: source) { return appended }
        let state = try state(of: source)
        let writer = try beginWriting(source: source, header: CacheHeader(savedAt: state.savedAt, etag: state.etag), purpose: .rebuild)
        do {
            if try !feedByCopying(writer, source: source) {
                writer.overlaysFound = true
                try forEachRecord(source: source) { record in
                    try writer.add(id: record.id, idIsInteger: record.idIsInteger, version: record.version, body: record.body)
                }
            }
        } catch {
            writer.rollback()
            throw error
        }
        let outcome = try writer.commit(ListingMetadata(url: state.url ?? "", etag: state.etag, lastModified: state.lastModified,
                                                        time: state.savedAt ?? "", allowEmpty: true))
        return (writer.fileRecords, !outcome.unchanged || state.lastSuccess == nil)
    }

    /// Renames a committed file (`output`, whose content hash is `hash`, holding `records` records) into place
    /// and records its final fingerprint (the rename moved its change time). A failed rename keeps the
    /// temporary file, which the store names: the next start finishes it. Throws `.cacheFileNotFlushed` when
    /// all is in place but the folder could not be flushed.
    func install(_ output: CacheFileOutput, source: String, hash: UInt64, records: Int) throws(StoreError) {
        let notFlushed: String?
        do {
            notFlushed = try output.install()
        } catch {
            output.keep()
            throw error
        }
        if let final = output.installedFingerprint(hash: hash) { try recordInstalledFile(source: source, final) }
        if let notFlushed { throw .cacheFileNotFlushed(path: output.path, records: records, reason: notFlushed) }
    }

    /// Records the fingerprint of the file a commit renamed into place, and that no rename is outstanding.
    func recordInstalledFile(source: String, _ fingerprint: SnapshotFingerprint) throws(StoreError) {
        try write("record cache file of \(source)") {
            let statement = try database.prepare("""
                UPDATE sources SET snapshot_size = ?2, snapshot_inode = ?3, snapshot_ctime_ns = ?4, snapshot_hash = ?5,
                    pending_rename = NULL WHERE name = ?1
                """)
            try statement.bind(1, source)
            try statement.bind(2, fingerprint.size)
            try statement.bind(3, Int64(bitPattern: fingerprint.inode))
            try statement.bind(4, fingerprint.changeTime)
            try statement.bind(5, Int64(bitPattern: fingerprint.hash))
            try statement.step()
        }
    }

    /// The temporary files named by outstanding renames (kept when stale temporaries are removed).
    public func pendingRenames() throws(StoreError) -> [String] {
        do {
            return try database.strings("SELECT pending_rename FROM sources WHERE pending_rename IS NOT NULL")
        } catch {
            throw .sqlite(error)
        }
    }

    /// Finishes the rename of a listing committed just before a crash: the temporary file named by
    /// `pending_rename` becomes the cache file (and the folder is flushed); if it is gone and the cache
    /// file is the one it became, the mark is only cleared.
    public func settlePendingRename(source: String) throws -> PendingRenameOutcome {
        guard let folder = cacheFolder, let layout = try fileLayout(source: source), let name = layout.pendingRename,
              let expected = layout.fingerprint else { return .none }
        let temporary = folder.directory + "/" + name
        let path = folder.path(of: source)
        var outcome = PendingRenameOutcome.cleared
        if access(temporary, F_OK) == 0 {
            guard rename(temporary, path) == 0 else {
                throw StoreError.cacheFileWrite(path: path, failed: "replace \(path)")
            }
            let directory = open(folder.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                _ = retryingEINTR { fsync(directory) }
                Glibc.close(directory)
            }
            outcome = .finished
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { if fd >= 0 { Glibc.close(fd) } }
        guard fd >= 0, let current = fingerprint(of: fd, hash: expected.hash), current.size == expected.size, current.inode == expected.inode else {
            try run("UPDATE sources SET pending_rename = NULL WHERE name = ?1", source)
            return .lost
        }
        try recordInstalledFile(source: source, current)
        return outcome
    }

    /// Forgets the listing of `source` after its cache file was lost or damaged: the index, the ID index and
    /// the validators and the delta checkpoint go (so the next refresh fetches the whole listing
    /// unconditionally); the outbox, conflicts and retry state stay.
    public func forgetListing(source: String) throws(StoreError) {
        try write("forget the listing of \(source)") {
            try run("DELETE FROM chunks WHERE source = ?1", source)
            try run("DELETE FROM id_index WHERE source = ?1", source)
            try run("""
                UPDATE sources SET etag = NULL, last_modified = NULL, saved_at = NULL, record_count = 0, snapshot_dirty = 0, snapshot_size = NULL,
                    snapshot_inode = NULL, snapshot_ctime_ns = NULL, snapshot_hash = NULL, snapshot_records = NULL,
                    records_start = NULL, listing_end = NULL, pending_rename = NULL, id_index_stamp = NULL,
                    file_outbox_stamp = NULL, file_outbox_seq = NULL WHERE name = ?1
                """, source)
            // The checkpoint describes the listing: without it the next refresh is a full listing.
            if hasDeltaCheckpoints { try storeCheckpoint(nil, source: source) }
            try logChange(source: source, changed: [], removed: [], unlisted: true)
        }
    }

    /// Runs `sql` with `source` as its first parameter.
    func run(_ sql: String, _ source: String) throws(SQLiteError) {
        let statement = try database.prepare(sql)
        try statement.bind(1, source)
        try statement.step()
    }
}

/// Converting a schema-1 file, whose `chunks` (now `v1_chunks`) held every body (docs/architecture.md,
/// "Upgrading from schema 1"): each source's listing is published through the new writer, which writes the
/// cache file and the index and deletes the source's old rows in one transaction, so a crash resumes.
extension StateStore {
    /// Sources that still have schema-1 rows.
    public func legacySources() throws(StoreError) -> [String] {
        do {
            guard try hasLegacyTable() else { return [] }
            return try database.strings("SELECT DISTINCT source FROM v1_chunks ORDER BY source")
        } catch {
            throw .sqlite(error)
        }
    }

    func hasLegacyTable() throws(SQLiteError) -> Bool {
        let statement = try database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'v1_chunks'")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0) != 0
    }

    private func legacyRowCount() throws(SQLiteError) -> Int64 {
        let statement = try database.prepare("SELECT count(*) FROM v1_chunks")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0)
    }

    /// Publishes the schema-1 listing of `source` as its cache file and index; returns its record count.
    @discardableResult
    public func migrateLegacyListing(source: String) throws -> Int {
        let state = try state(of: source)
        let writer = try beginWriting(source: source, header: CacheHeader(savedAt: state.savedAt, etag: state.etag), purpose: .migration)
        do {
            let statement = try database.prepare("SELECT data FROM v1_chunks WHERE source = ?1 ORDER BY seq")
            try statement.bind(1, source)
            while try statement.step() {
                try statement.withBlob(0) { blob in
                    try LegacyRecordChunk.forEach(in: blob) { record in
                        try writer.add(id: record.id, idIsInteger: record.idIsInteger, version: record.version, body: record.body)
                    }
                }
            }
        } catch {
            writer.rollback()
            throw error
        }
        _ = try writer.commit(ListingMetadata(url: state.url ?? "", etag: state.etag, lastModified: state.lastModified,
                                              time: state.savedAt ?? "", allowEmpty: true))
        return writer.count
    }

    /// Drops the emptied schema-1 table and gives its pages back (`VACUUM`); nothing when rows remain.
    public func finishLegacyMigration() throws(StoreError) {
        do {
            guard try hasLegacyTable(), try legacyRowCount() == 0 else { return }
            try database.execute("DROP TABLE v1_chunks")
            try database.execute("VACUUM")
        } catch {
            throw .sqlite(error)
        }
    }
}
