internal import Glibc
import SyncCore
internal import SyncSystem

/// Rebuilding the cache file after local creations by appending them (docs/architecture.md, "Storing
/// listings", local changes): when the store shows that the only changes to the outbox since the file was
/// written are new records created locally, the new file is the old one with those records added after the
/// local creations it holds and their IDs added at the end of `pending` — the bytes a whole rebuild would
/// write, at the cost of the change: no outbox entry, index entry or record of the old file is looked at.
///
/// How the store knows: triggers count every row written to or removed from a source's outbox in
/// `sources.outbox_stamp`, and each written file records the stamp and the greatest outbox `seq` it applied
/// (`file_outbox_stamp`, `file_outbox_seq`). If the stamp grew by exactly the number of rows after that
/// `seq`, those rows are new and nothing else changed.
extension StateStore {
    /// The outbox stamp of `source`; nil when it has no row in `sources`.
    func outboxStamp(source: String) throws(SQLiteError) -> Int64? {
        let statement = try database.prepare("SELECT outbox_stamp FROM sources WHERE name = ?1")
        try statement.bind(1, source)
        guard try statement.step() else { return nil }
        return statement.int64(0)
    }

    /// Rewrites the cache file of `source` by appending the records created locally since it was written,
    /// when those are the only changes; nil (nothing done) otherwise, and the caller rebuilds the whole file.
    /// A file whose status or content hash is not the one recorded is never appended to.
    func appendCreates(source: String) throws -> (records: Int, rewritten: Bool)? {
        guard let folder = cacheFolder, let mark = try appendMark(source: source) else { return nil }
        let added = try outboxRows("source = ?1 AND seq > ?2") { statement in
            try statement.bind(1, source)
            try statement.bind(2, mark.fileSeq)
        }
        guard mark.stamp - mark.fileStamp == Int64(added.count) else { return nil }
        if added.isEmpty { return try confirmCurrent(source: source, mark: mark, path: folder.path(of: source)) }
        var ids: Set<RecordID> = []         // by the IDs' bytes
        for entry in added {
            guard entry.state == .queued, entry.operation != .delete, entry.body != nil, ids.insert(RecordID(entry.recordID)).inserted,
                  try !hasOutboxEntry(source: source, recordID: entry.recordID, upTo: mark.fileSeq),
                  case .absent = try listingPosition(source: source, id: entry.recordID) else { return nil }
        }
        let header = CacheFolder.header(source: source, account: folder.account, savedAt: mark.savedAt, etag: mark.etag)
        let chunks = try chunkLayouts(source: source)
        guard header.count == mark.layout.recordsStart,
              mark.layout.recordsStart + chunks.reduce(0, { $0 + $1.fileBytes }) == mark.layout.listingEnd else { return nil }
        let path = folder.path(of: source)
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard let current = fingerprint(of: fd, hash: mark.expected.hash), current == mark.expected else { return nil }
        var oldHeader = [UInt8](repeating: 0, count: header.count)
        try readExactly(fd, path: path, into: &oldHeader, at: 0)
        var oldTail = [UInt8](repeating: 0, count: Int(mark.expected.size) - mark.layout.listingEnd)
        try readExactly(fd, path: path, into: &oldTail, at: mark.layout.listingEnd)
        guard oldHeader == header, composedHash(header: header, chunks: chunks, tail: oldTail) == mark.expected.hash,
              let tail = CreatedTail(oldTail, precededByListing: mark.layout.listingEnd > mark.layout.recordsStart) else { return nil }
        let newTail = tail.appending(added)
        workCounter?.appendedCreates += added.count
        let output = try CacheFileOutput(folder: folder, source: source)
        output.rangeCopier = rangeCopier
        output.syncer = fileSyncer
        // As a whole rebuild does: the header written, the listing's records copied.
        try output.write(header)
        try output.copyRange(from: fd, sourcePath: path, offset: mark.layout.recordsStart,
                             count: mark.layout.listingEnd - mark.layout.recordsStart)
        try output.write(newTail)
        let hash = composedHash(header: header, chunks: chunks, tail: newTail)
        let written = try output.finish(hash: hash)
        let records = mark.records + added.count
        guard try recordAppended(source: source, mark: mark, written: written, records: records,
                                 seq: added.last?.seq ?? mark.fileSeq, temporaryName: output.temporaryName) else {
            output.discard()
            return nil
        }
        try install(output, source: source, hash: hash, records: records)
        return (records, true)
    }

    /// Nothing the file shows changed since it was written (a failed push only noted its attempt): when the
    /// file's status is the one recorded (as a 304 trusts it), only the dirty mark is cleared; nil otherwise.
    private func confirmCurrent(source: String, mark: AppendMark, path: String) throws -> (records: Int, rewritten: Bool)? {
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard let current = fingerprint(of: fd, hash: mark.expected.hash), current == mark.expected else { return nil }
        var confirmed = false
        try write("confirm cache file of \(source)") {
            guard try appendMark(source: source) == mark else { return }
            try run("UPDATE sources SET snapshot_dirty = 0 WHERE name = ?1", source)
            confirmed = true
        }
        return confirmed ? (mark.records, false) : nil
    }

    /// What an append needs to know of `source` as the store recorded it; nil when no file with a known outbox
    /// stamp is recorded, or a rename is outstanding.
    private func appendMark(source: String) throws -> AppendMark? {
        let statement = try database.prepare("""
            SELECT outbox_stamp, file_outbox_stamp, file_outbox_seq, records_start, listing_end, pending_rename,
                   snapshot_size, snapshot_inode, snapshot_ctime_ns, snapshot_hash, snapshot_records, saved_at, etag
            FROM sources WHERE name = ?1
            """)
        try statement.bind(1, source)
        guard try statement.step(), !statement.isNull(1), !statement.isNull(2), !statement.isNull(3), !statement.isNull(4),
              statement.isNull(5), !statement.isNull(6), !statement.isNull(10) else { return nil }
        let expected = SnapshotFingerprint(size: statement.int64(6), inode: UInt64(bitPattern: statement.int64(7)),
                                           changeTime: statement.int64(8), hash: UInt64(bitPattern: statement.int64(9)))
        return AppendMark(stamp: statement.int64(0), fileStamp: statement.int64(1), fileSeq: statement.int64(2),
                          layout: FileLayout(recordsStart: Int(statement.int64(3)), listingEnd: Int(statement.int64(4)),
                                             pendingRename: nil, fingerprint: expected),
                          expected: expected, records: Int(statement.int64(10)), savedAt: statement.string(11), etag: statement.string(12))
    }

    /// Whether `recordID` of `source` has an outbox entry with a `seq` up to `seq` (the index `outbox_by_record`).
    func hasOutboxEntry(source: String, recordID: String, upTo seq: Int64) throws(SQLiteError) -> Bool {
        let statement = try database.prepare("SELECT 1 FROM outbox WHERE source = ?1 AND record_id = ?2 AND seq <= ?3 LIMIT 1")
        try statement.bind(1, source)
        try statement.bind(2, recordID)
        try statement.bind(3, seq)
        return try statement.step()
    }

    /// Records the appended file in one transaction, as a listing commit does (`pending_rename` names the
    /// temporary file until it is in place); false, with nothing recorded, when the outbox or the file
    /// changed since `mark` was read (the caller then rebuilds the whole file).
    private func recordAppended(source: String, mark: AppendMark, written: SnapshotFingerprint, records: Int, seq: Int64,
                                temporaryName: String) throws -> Bool {
        var recorded = false
        try write("record cache file of \(source)") {
            guard try appendMark(source: source) == mark else { return }
            let statement = try database.prepare("""
                UPDATE sources SET snapshot_dirty = 0, snapshot_size = ?2, snapshot_inode = ?3, snapshot_ctime_ns = ?4,
                    snapshot_hash = ?5, snapshot_records = ?6, pending_rename = ?7, file_outbox_stamp = ?8, file_outbox_seq = ?9
                WHERE name = ?1
                """)
            try statement.bind(1, source)
            try statement.bind(2, written.size)
            try statement.bind(3, Int64(bitPattern: written.inode))
            try statement.bind(4, written.changeTime)
            try statement.bind(5, Int64(bitPattern: written.hash))
            try statement.bind(6, Int64(records))
            try statement.bind(7, temporaryName)
            try statement.bind(8, mark.stamp)
            try statement.bind(9, seq)
            try statement.step()
            recorded = true
        }
        return recorded
    }

    /// The fingerprint hash (`CacheFileDigest`) of a file with these parts.
    private func composedHash(header: [UInt8], chunks: [ChunkLayout], tail: [UInt8]) -> UInt64 {
        var digest = CacheFileDigest()
        digest.add(bytes: header)
        for chunk in chunks { digest.add(chunk.fileHash) }
        digest.add(bytes: tail)
        return digest.finalize()
    }
}

/// What the store recorded of a source's cache file and outbox, read before an append and checked again when
/// recording it.
private struct AppendMark: Equatable {
    var stamp: Int64
    var fileStamp: Int64
    var fileSeq: Int64
    var layout: FileLayout
    var expected: SnapshotFingerprint
    var records: Int
    var savedAt: String?
    var etag: String?

    static func == (lhs: AppendMark, rhs: AppendMark) -> Bool {
        lhs.stamp == rhs.stamp && lhs.fileStamp == rhs.fileStamp && lhs.fileSeq == rhs.fileSeq && lhs.expected == rhs.expected
            && lhs.layout.recordsStart == rhs.layout.recordsStart && lhs.layout.listingEnd == rhs.layout.listingEnd
            && lhs.records == rhs.records && lhs.savedAt == rhs.savedAt && lhs.etag == rhs.etag
    }
}
