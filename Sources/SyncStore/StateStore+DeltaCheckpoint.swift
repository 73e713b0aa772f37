import SyncCore

/// Where a source's incremental pull stands (docs/architecture.md, "Incremental pull: applying a delta"): the
/// checkpoint the next delta is asked from, and what it is bound to. It is stored with the listing it describes,
/// in the transaction that commits that listing's index (a full listing's or a delta's), and goes with it
/// (`forgetListing`; a logout erases the whole database).
public struct DeltaCheckpoint: Equatable, Sendable {
    /// "watermark" or "token" (SyncCore's `DeltaMode` raw value); opaque to the store.
    public var mode: String
    /// What the checkpoint is bound to (URL, query, paths, account), as SyncCore words it; opaque to the store.
    public var binding: String
    /// The watermark's text or the server's token.
    public var value: String
    /// When the full listing this chain of deltas started from was committed (RFC 3339).
    public var fullListingAt: String
    /// When the last delta was applied (RFC 3339); nil until the first.
    public var deltaAt: String?

    /// Creates a checkpoint.
    public init(mode: String, binding: String, value: String, fullListingAt: String, deltaAt: String?) {
        self.mode = mode
        self.binding = binding
        self.value = value
        self.fullListingAt = fullListingAt
        self.deltaAt = deltaAt
    }
}

extension StateStore {
    /// One row per source with a checkpoint. An older syncd never names the table: going back keeps the file
    /// (its full listings then leave a checkpoint older than the listing, which only makes the next delta
    /// bring again what the listing holds: applying a record twice changes nothing).
    static let deltaCheckpointsTable = """
        CREATE TABLE IF NOT EXISTS delta_checkpoints (
            source TEXT PRIMARY KEY,
            mode TEXT NOT NULL,
            binding TEXT NOT NULL,
            value TEXT NOT NULL,
            full_listing_at TEXT NOT NULL,
            delta_at TEXT
        )
        """

    /// The stored checkpoint of `source`; nil when none, or when the source holds no listing it could describe.
    public func deltaCheckpoint(source: String) throws(StoreError) -> DeltaCheckpoint? {
        do {
            return try storedDeltaCheckpoint(source: source)
        } catch {
            throw .sqlite(error)
        }
    }

    /// `deltaCheckpoint(source:)` inside an operation that reports SQLite's errors itself (`state(of:)`).
    func storedDeltaCheckpoint(source: String) throws(SQLiteError) -> DeltaCheckpoint? {
        guard hasDeltaCheckpoints else { return nil }
        let statement = try database.prepare("""
            SELECT d.mode, d.binding, d.value, d.full_listing_at, d.delta_at FROM delta_checkpoints d
                JOIN sources s ON s.name = d.source WHERE d.source = ?1 AND s.records_start IS NOT NULL
            """)
        try statement.bind(1, source)
        guard try statement.step() else { return nil }
        return DeltaCheckpoint(mode: statement.string(0) ?? "", binding: statement.string(1) ?? "", value: statement.string(2) ?? "",
                               fullListingAt: statement.string(3) ?? "", deltaAt: statement.string(4))
    }

    /// Stores `checkpoint` as the one of `source`, or deletes the stored one when nil; inside the caller's transaction.
    func storeCheckpoint(_ checkpoint: DeltaCheckpoint?, source: String) throws(SQLiteError) {
        guard let checkpoint else {
            try run("DELETE FROM delta_checkpoints WHERE source = ?1", source)
            return
        }
        let statement = try database.prepare("""
            INSERT OR REPLACE INTO delta_checkpoints (source, mode, binding, value, full_listing_at, delta_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        try statement.bind(1, source)
        try statement.bind(2, checkpoint.mode)
        try statement.bind(3, checkpoint.binding)
        try statement.bind(4, checkpoint.value)
        try statement.bind(5, checkpoint.fullListingAt)
        try statement.bind(6, checkpoint.deltaAt)
        try statement.step()
    }
}
