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
    /// Records inserted or updated (content or position).
    public var upserted: Int
    /// Records removed because the listing no longer had them.
    public var removed: Int
    /// Records in the listing.
    public var count: Int
    /// True when the stored records are byte-for-byte what they were.
    public var unchanged: Bool { upserted == 0 && removed == 0 }
}

extension StateStore {
    /// Starts staging a new complete listing of `source` inside one transaction.
    /// Nothing is visible to readers until `ListingWriter.commit` succeeds.
    public func beginListing(source: String) throws(StoreError) -> ListingWriter {
        do {
            try database.execute("BEGIN IMMEDIATE")
        } catch {
            throw .sqlite(error)
        }
        do {
            try database.execute("CREATE TEMP TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY) WITHOUT ROWID; DELETE FROM temp.seen;")
            return try ListingWriter(store: self, source: source)
        } catch {
            try? database.execute("ROLLBACK")
            throw .sqlite(error)
        }
    }
}

/// Stages the records of one listing: duplicate IDs are refused, changed records
/// upserted, and at commit records missing from the listing are removed (SPEC rule 3).
/// Either `commit` or `rollback` must be called exactly once.
public final class ListingWriter {
    let store: StateStore
    let source: String
    private let markSeen: Statement
    private let upsert: Statement
    private var finished = false
    /// Records staged so far.
    public private(set) var count = 0
    private var upserted = 0

    init(store: StateStore, source: String) throws(SQLiteError) {
        self.store = store
        self.source = source
        markSeen = try store.database.prepare("INSERT INTO temp.seen (id) VALUES (?1)")
        // Only rows whose content or position changed are written, so an identical
        // listing writes nothing and `changes` tells whether anything moved.
        upsert = try store.database.prepare("""
            INSERT INTO records (source, id, id_is_integer, position, version, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (source, id) DO UPDATE SET
                id_is_integer = excluded.id_is_integer, position = excluded.position,
                version = excluded.version, body = excluded.body
            WHERE records.body IS NOT excluded.body OR records.position IS NOT excluded.position
               OR records.version IS NOT excluded.version OR records.id_is_integer IS NOT excluded.id_is_integer
            """)
    }

    deinit {
        if !finished { try? store.database.execute("ROLLBACK") }
    }

    /// Stages one record. Throws `StoreError.duplicateID` if its ID was already in this listing.
    public func add(id: String, idIsInteger: Bool, version: String?, body: UnsafeRawBufferPointer) throws(StoreError) {
        do {
            markSeen.reset()
            try markSeen.bind(1, id)
            try markSeen.step()
        } catch {
            throw error.isUniqueViolation ? .duplicateID(id, index: count) : .sqlite(error)
        }
        do {
            upsert.reset()
            try upsert.bind(1, source)
            try upsert.bind(2, id)
            try upsert.bind(3, idIsInteger ? 1 : 0)
            try upsert.bind(4, Int64(count))
            try upsert.bind(5, version)
            try upsert.bind(6, borrowedBlob: body)
            try upsert.step()
            upserted += store.database.changes
            upsert.reset()
            count += 1
        } catch {
            throw .sqlite(error)
        }
    }

    /// Removes records not in the listing, stores validators and commits.
    /// An empty listing over a non-empty store is refused unless `allowEmpty`.
    public func commit(_ metadata: ListingMetadata) throws(StoreError) -> ListingOutcome {
        precondition(!finished, "ListingWriter used after commit or rollback")
        do {
            let previous = try store.state(of: source)
            if count == 0 && previous.recordCount > 0 && !metadata.allowEmpty {
                rollback()
                throw StoreError.emptyListingRefused(existing: previous.recordCount)
            }
            let sweep = try store.database.prepare("DELETE FROM records WHERE source = ?1 AND id NOT IN (SELECT id FROM temp.seen)")
            try sweep.bind(1, source)
            try sweep.step()
            let outcome = ListingOutcome(upserted: upserted, removed: store.database.changes, count: count)
            let saved = outcome.unchanged ? (previous.savedAt ?? metadata.time) : metadata.time
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
            try state.bind(8, outcome.unchanged ? 0 : 1)
            try state.step()
            try store.database.execute("DELETE FROM temp.seen; COMMIT")
            finished = true
            return outcome
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

    /// Discards everything staged; the stored listing stays as it was.
    public func rollback() {
        guard !finished else { return }
        finished = true
        try? store.database.execute("ROLLBACK")
    }
}
