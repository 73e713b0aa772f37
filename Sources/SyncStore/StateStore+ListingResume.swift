import SyncCore

/// Where an interrupted full listing stands (docs/architecture.md, "Resuming an interrupted listing"): the pages
/// received so far, each committed with the point the listing continues from, in one transaction per page. A crash
/// between pages leaves the pages before it and their resume point; nothing of a page is kept without its point.
public struct ListingResumePoint: Equatable, Sendable {
    /// What the pages are bound to (SyncCore's `ListingResume.binding`); opaque to the store.
    public var binding: String
    /// "next-page" or "watermark" (SyncCore's `ListingResume.Method` raw value); opaque to the store.
    public var method: String
    /// Where the listing continues: the next page's URL, or the watermark's checkpoint to ask the delta from.
    public var next: String
    /// How many of the staged records a resumed listing replays (all of them for "next-page"; for "watermark",
    /// those stamped at or below `next`).
    public var keep: Int
    /// Pages and records staged, and the listing's bytes received for them (`MaxBytes=` counts them on resume).
    public var pages: Int
    public var records: Int
    public var bytes: Int64
    /// `Delta=watermark`: the first page's highest stamp (the full listing's checkpoint) and the highest stamp of
    /// the records kept.
    public var firstPageStamp: String?
    public var highestStamp: String?
    /// When the listing began (RFC 3339).
    public var startedAt: String

    /// Creates a resume point.
    public init(binding: String, method: String, next: String, keep: Int, pages: Int, records: Int, bytes: Int64,
                firstPageStamp: String?, highestStamp: String?, startedAt: String) {
        self.binding = binding
        self.method = method
        self.next = next
        self.keep = keep
        self.pages = pages
        self.records = records
        self.bytes = bytes
        self.firstPageStamp = firstPageStamp
        self.highestStamp = highestStamp
        self.startedAt = startedAt
    }
}

extension StateStore {
    /// The staged pages and the resume point of each source with an interrupted full listing. An older syncd never
    /// names the tables: going back keeps the file (and starts such a listing over).
    static let listingResumeSchema = [
        """
        CREATE TABLE IF NOT EXISTS listing_resume (
            source TEXT PRIMARY KEY,
            binding TEXT NOT NULL,
            method TEXT NOT NULL,
            next TEXT NOT NULL,
            keep INTEGER NOT NULL,
            pages INTEGER NOT NULL,
            records INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            first_page_stamp TEXT,
            highest_stamp TEXT,
            started_at TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS listing_resume_pages (
            source TEXT NOT NULL,
            page INTEGER NOT NULL,
            records BLOB NOT NULL,
            PRIMARY KEY (source, page)
        )
        """,
    ]

    /// Stages page `page` of the full listing of `source` under way: `records`, the page's records as the server
    /// sent them, separated by commas (the inside of a JSON array), and `point`, where the listing continues after
    /// it, in one transaction. Page 1 starts the staging afresh (pages of an earlier listing go).
    public func stageListingPage(source: String, page: Int, records: [UInt8], point: ListingResumePoint) throws(StoreError) {
        try write("stage page \(page) of the listing of \(source)") {
            if page == 1 { try run("DELETE FROM listing_resume_pages WHERE source = ?1", source) }
            let insert = try database.prepare("INSERT OR REPLACE INTO listing_resume_pages (source, page, records) VALUES (?1, ?2, ?3)")
            try insert.bind(1, source)
            try insert.bind(2, Int64(page))
            try records.withUnsafeBytes { try insert.bind(3, blob: $0) }
            try insert.step()
            let statement = try database.prepare("""
                INSERT OR REPLACE INTO listing_resume (source, binding, method, next, keep, pages, records, bytes, first_page_stamp,
                    highest_stamp, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """)
            try statement.bind(1, source)
            try statement.bind(2, point.binding)
            try statement.bind(3, point.method)
            try statement.bind(4, point.next)
            try statement.bind(5, Int64(point.keep))
            try statement.bind(6, Int64(point.pages))
            try statement.bind(7, Int64(point.records))
            try statement.bind(8, point.bytes)
            try statement.bind(9, point.firstPageStamp)
            try statement.bind(10, point.highestStamp)
            try statement.bind(11, point.startedAt)
            try statement.step()
        }
    }

    /// The resume point of `source`'s interrupted full listing, if any.
    public func listingResumePoint(source: String) throws(StoreError) -> ListingResumePoint? {
        do {
            return try storedListingResumePoint(source: source)
        } catch {
            throw .sqlite(error)
        }
    }

    /// `listingResumePoint(source:)` inside an operation that reports SQLite's errors itself (`state(of:)`).
    func storedListingResumePoint(source: String) throws(SQLiteError) -> ListingResumePoint? {
        guard hasListingResume else { return nil }
        let statement = try database.prepare("""
            SELECT binding, method, next, keep, pages, records, bytes, first_page_stamp, highest_stamp, started_at
                FROM listing_resume WHERE source = ?1
            """)
        try statement.bind(1, source)
        guard try statement.step() else { return nil }
        return ListingResumePoint(binding: statement.string(0) ?? "", method: statement.string(1) ?? "", next: statement.string(2) ?? "",
                                  keep: Int(statement.int64(3)), pages: Int(statement.int64(4)), records: Int(statement.int64(5)),
                                  bytes: statement.int64(6), firstPageStamp: statement.string(7), highestStamp: statement.string(8),
                                  startedAt: statement.string(9) ?? "")
    }

    /// Calls `body` with each staged page of `source`'s interrupted listing in order (the bytes valid only during
    /// the call); stops early when `body` returns false.
    public func forEachStagedPage(source: String, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        let statement = try database.prepare("SELECT records FROM listing_resume_pages WHERE source = ?1 ORDER BY page")
        try statement.bind(1, source)
        while try statement.step() {
            guard try statement.withBlob(0, body) else { return }
        }
    }

    /// Cuts the staged pages of `source` after the first `bytes` bytes of page `lastPage` (a resumed `.watermark`
    /// listing keeps only the records below its last stamp: the rest come again).
    public func cutStagedPages(source: String, lastPage: Int, bytes: Int) throws(StoreError) {
        try write("cut the staged listing of \(source)") {
            let statement = try database.prepare("UPDATE listing_resume_pages SET records = substr(records, 1, ?3) WHERE source = ?1 AND page = ?2")
            try statement.bind(1, source)
            try statement.bind(2, Int64(lastPage))
            try statement.bind(3, Int64(bytes))
            try statement.step()
            let drop = try database.prepare("DELETE FROM listing_resume_pages WHERE source = ?1 AND page > ?2")
            try drop.bind(1, source)
            try drop.bind(2, Int64(lastPage))
            try drop.step()
        }
    }

    /// Drops the staged pages and the resume point of `source` (the listing completed, or starts over).
    public func discardListingResume(source: String) throws(StoreError) {
        guard hasListingResume else { return }
        try write("drop the staged listing of \(source)") { try dropListingResume(source: source) }
    }

    /// `discardListingResume(source:)` inside the caller's transaction.
    func dropListingResume(source: String) throws(SQLiteError) {
        guard hasListingResume else { return }
        try run("DELETE FROM listing_resume_pages WHERE source = ?1", source)
        try run("DELETE FROM listing_resume WHERE source = ?1", source)
    }
}
