/// Validators and metadata of a complete listing, stored with it.
public struct ListingMetadata: Sendable {
    /// URL the listing came from.
    public var url: String
    /// `ETag` of the response (first page), if any.
    public var etag: String?
    /// `Last-Modified` of the response (first page), if any.
    public var lastModified: String?
    /// Time of this refresh (RFC 3339).
    public var time: String
    /// Accept an empty listing over a non-empty cache (`AllowEmpty=`).
    public var allowEmpty: Bool

    /// Creates listing metadata.
    public init(url: String, etag: String?, lastModified: String?, time: String, allowEmpty: Bool) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.time = time
        self.allowEmpty = allowEmpty
    }
}

/// What a committed listing changed.
public struct ListingOutcome: Sendable, Equatable {
    /// Records in the listing.
    public var count: Int
    /// True when the stored listing is byte-for-byte what it was (same records, same order).
    public var unchanged: Bool

    /// Creates an outcome.
    public init(count: Int, unchanged: Bool) {
        self.count = count
        self.unchanged = unchanged
    }
}

extension StateStore {
    /// Starts staging a new complete listing of `source`. No write transaction is held while pages arrive:
    /// differing chunks wait in a temporary table of this connection, and `ListingWriter.commit` moves them
    /// in one short transaction, so local changes and other sources' refreshes never wait for the paging.
    /// Nothing is visible to readers until `commit` succeeds. The temporary table's page cache is held to
    /// 1 MiB (the rest spills to its file): left at SQLite's default it doubled a 500,000-record sync's peak RSS.
    public func beginListing(source: String) throws(StoreError) -> ListingWriter {
        do {
            try database.execute("""
                PRAGMA temp.cache_size=-1024;
                CREATE TEMP TABLE IF NOT EXISTS staged_chunks (seq INTEGER PRIMARY KEY, records INTEGER NOT NULL, data BLOB NOT NULL);
                DELETE FROM temp.staged_chunks;
                """)
            return try ListingWriter(store: self, source: source)
        } catch {
            throw .sqlite(error)
        }
    }
}

/// Stages the records of one listing (syncd(8) GUARANTEES 3): the new listing replaces the old one whole, in one
/// short transaction taken by `commit` (none is held while pages arrive); records missing from it are gone, changed ones replaced, new ones added; an ID twice is refused.
///
/// Records are framed into chunks of `RecordChunk.capacity`. While the new listing matches the stored one
/// chunk for chunk, nothing is written; from the first differing chunk on, chunks are staged in the
/// connection's temporary table `staged_chunks` and copied into `chunks` at commit. So an
/// identical listing costs reads only, and a listing that changed at its end rewrites only its end.
/// Either `commit` or `rollback` must be called exactly once.
public final class ListingWriter {
    let store: StateStore
    let source: String
    private let storedChunks: Int
    private let stageChunk: Statement
    private var buffer: [UInt8] = []
    private var inBuffer = 0
    private var nextSeq = 0
    private var diverged = false
    private var finished = false
    /// `commit` began its transaction and has not ended it.
    private var inTransaction = false
    private var idHashes = IDHashes()
    /// Records staged so far.
    public private(set) var count = 0

    init(store: StateStore, source: String) throws(SQLiteError) {
        self.store = store
        self.source = source
        storedChunks = try store.chunkCount(source: source)
        stageChunk = try store.database.prepare("INSERT OR REPLACE INTO temp.staged_chunks (seq, records, data) VALUES (?1, ?2, ?3)")
        buffer.reserveCapacity(160 << 10)
    }

    deinit {
        if !finished { discardStaged() }
    }

    /// Stages one record.
    public func add(id: String, idIsInteger: Bool, version: String?, body: UnsafeRawBufferPointer) throws(StoreError) {
        RecordChunk.append(id: id, idIsInteger: idIsInteger, version: version, body: body, to: &buffer)
        idHashes.insert(RecordChunk.hash(id), seq: nextSeq)
        inBuffer += 1
        count += 1
        if inBuffer == RecordChunk.capacity {
            try flushChunk()
        }
    }

    private func flushChunk() throws(StoreError) {
        guard inBuffer > 0 else { return }
        do {
            if !diverged {
                let stored = nextSeq < storedChunks ? try store.chunk(source: source, seq: nextSeq) : nil
                diverged = stored != buffer
            }
            if diverged {
                stageChunk.reset()
                try stageChunk.bind(1, Int64(nextSeq))
                try stageChunk.bind(2, Int64(inBuffer))
                try buffer.withUnsafeBytes { try stageChunk.bind(3, borrowedBlob: $0) }
                try stageChunk.step()
                stageChunk.reset()
            }
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .sqlite(SQLiteError(code: 1, operation: "store chunk \(nextSeq) of \(source)", message: "\(error)"))
        }
        nextSeq += 1
        buffer.removeAll(keepingCapacity: true)
        inBuffer = 0
    }

    /// Checks for duplicate IDs, removes what the listing no longer has, stores validators and commits.
    /// An empty listing over a non-empty store is refused unless `allowEmpty`.
    public func commit(_ metadata: ListingMetadata) throws(StoreError) -> ListingOutcome {
        precondition(!finished, "ListingWriter used after commit or rollback")
        do {
            try flushChunk()
            try store.database.execute("BEGIN IMMEDIATE")
            inTransaction = true
            let previous = try store.state(of: source)
            if count == 0 && previous.recordCount > 0 && !metadata.allowEmpty {
                throw StoreError.emptyListingRefused(existing: previous.recordCount)
            }
            let move = try store.database.prepare("""
                INSERT OR REPLACE INTO chunks (source, seq, records, data) SELECT ?1, seq, records, data FROM temp.staged_chunks
                """)
            try move.bind(1, source)
            _ = try move.step()
            try checkDuplicates()
            let sweep = try store.database.prepare("DELETE FROM chunks WHERE source = ?1 AND seq >= ?2")
            try sweep.bind(1, source)
            try sweep.bind(2, Int64(nextSeq))
            try sweep.step()
            let unchanged = !diverged && nextSeq == storedChunks && previous.lastSuccess != nil
            let saved = unchanged ? (previous.savedAt ?? metadata.time) : metadata.time
            let state = try store.database.prepare("""
                INSERT INTO sources (name, url, etag, last_modified, saved_at, last_success, last_attempt, last_error, record_count, snapshot_dirty)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, NULL, ?7, ?8)
                ON CONFLICT (name) DO UPDATE SET url = ?2, etag = ?3, last_modified = ?4, saved_at = ?5,
                    last_success = ?6, last_attempt = ?6, last_error = NULL, record_count = ?7,
                    snapshot_dirty = max(snapshot_dirty, ?8)
                """)
            try state.bind(1, source)
            try state.bind(2, metadata.url)
            try state.bind(3, metadata.etag)
            try state.bind(4, metadata.lastModified)
            try state.bind(5, saved)
            try state.bind(6, metadata.time)
            try state.bind(7, Int64(count))
            try state.bind(8, unchanged ? 0 : 1)
            try state.step()
            try store.writeIDIndex(source: source, hashes: &idHashes, chunks: nextSeq,
                                   stamp: StateStore.idIndexStamp(savedAt: saved, count: count), unchanged: unchanged)
            idHashes = IDHashes()  // 8 bytes a record, not to be held while the cache file is written
            try store.database.execute("COMMIT")
            inTransaction = false
            finished = true
            discardStaged()
            return ListingOutcome(count: count, unchanged: unchanged)
        } catch let error as SQLiteError {
            rollback()
            throw .sqlite(error)
        } catch let error as StoreError {
            rollback()
            throw error
        } catch {
            rollback()
            throw .sqlite(SQLiteError(code: 1, operation: "commit listing", message: "\(error)"))
        }
    }

    /// Equal ID hashes are candidates, confirmed by comparing the IDs themselves, so a hash collision
    /// never refuses a valid listing.
    private func checkDuplicates() throws {
        let suspects = idHashes.repeated()
        guard !suspects.isEmpty else { return }
        var seen: Set<String> = []
        var position = 0
        try store.forEachRecord(source: source) { record in
            if suspects.contains(RecordChunk.hash(record.id) >> 16) && !seen.insert(record.id).inserted {
                throw StoreError.duplicateID(record.id, index: position)
            }
            position += 1
        }
    }

    /// Discards everything staged; the stored listing stays as it was.
    public func rollback() {
        guard !finished else { return }
        finished = true
        discardStaged()
    }

    /// Ends the transaction `commit` may have begun and empties the staging table (a failure to empty it
    /// is harmless: the next listing empties it first).
    private func discardStaged() {
        if inTransaction { try? store.database.execute("ROLLBACK") }
        inTransaction = false
        try? store.database.execute("DELETE FROM temp.staged_chunks")
    }
}
