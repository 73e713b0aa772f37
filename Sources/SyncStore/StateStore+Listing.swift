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
    /// Where incremental pull stands after this listing or delta, stored in the same transaction as the index;
    /// nil deletes a stored one (a full listing under `Delta=none`). Kept as it is by a rebuild for local changes.
    public var checkpoint: DeltaCheckpoint?

    /// Creates listing metadata.
    public init(url: String, etag: String?, lastModified: String?, time: String, allowEmpty: Bool, checkpoint: DeltaCheckpoint? = nil) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.time = time
        self.allowEmpty = allowEmpty
        self.checkpoint = checkpoint
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

/// What the document's first bytes say about the listing: `savedAt` and `etag` (docs/syncd.8.md, FILES).
public struct CacheHeader: Sendable {
    /// When the listing was saved (RFC 3339); nil before the first.
    public var savedAt: String?
    /// The listing's `ETag`.
    public var etag: String?

    /// Creates a header.
    public init(savedAt: String?, etag: String?) {
        self.savedAt = savedAt
        self.etag = etag
    }
}

extension StateStore {
    /// Starts a new complete listing of `source`, whose cache file gets `header` if it is written. No write
    /// transaction is held while pages arrive: differing index chunks wait in a temporary table of this
    /// connection, the new cache file in a temporary file, and `ListingWriter.commit` takes both in one
    /// short transaction, so local changes and other sources' refreshes never wait for the paging.
    /// Nothing is visible to readers until `commit` succeeds. The temporary table's page cache is held to 256 KiB:
    /// its pages are written once and read once by the commit, so what passes that goes to the temporary file (the
    /// page cache, not this process's memory); with 1 MiB, a first sync of 1M records peaked 1.4 MiB higher for no
    /// measurable speed (docs/benchmarks.md, "First sync against the transfer floor: what changed").
    public func beginListing(source: String, header: CacheHeader = CacheHeader(savedAt: nil, etag: nil)) throws(StoreError) -> ListingWriter {
        try beginWriting(source: source, header: header, purpose: .refresh)
    }

    func beginWriting(source: String, header: CacheHeader, purpose: ListingWriter.Purpose) throws(StoreError) -> ListingWriter {
        guard let folder = cacheFolder else {
            throw .cacheFileWrite(path: source + ".json", reason: "the store was opened without its cache folder")
        }
        do {
            try database.execute("""
                PRAGMA temp.cache_size=-256;
                CREATE TEMP TABLE IF NOT EXISTS staged_chunks (seq INTEGER PRIMARY KEY, records INTEGER NOT NULL,
                    file_bytes INTEGER NOT NULL, file_hash INTEGER NOT NULL, data BLOB NOT NULL);
                DELETE FROM temp.staged_chunks;
                """)
            return try ListingWriter(store: self, source: source, folder: folder, header: header, purpose: purpose)
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corrupt(path: path, reason: "\(error)")
        }
    }
}
