import SyncCore

/// A local change a `ConflictPolicy=` discarded (server-wins, or the older side of last-write-wins), kept with
/// the server's side for `DiscardedRetentionSec=` so that a person can see it and queue it again
/// (docs/local-changes.md, "Discarded changes").
public struct DiscardedChange: Sendable, Equatable {
    /// The outbox entry's sequence number; `syncctl outbox --restore SEQ` names it.
    public var seq: Int64
    public var source: String
    public var recordID: String
    public var idIsInteger: Bool
    public var operation: OutboxRecord.Operation
    /// The record's JSON as the change had it (nil for a removal).
    public var body: [UInt8]?
    /// The server's `VersionField` value the change was made against.
    public var baseVersion: String?
    /// When the change was made (RFC 3339).
    public var createdAt: String
    /// When the policy discarded it (RFC 3339).
    public var discardedAt: String
    /// Why: the conflict and the policy that settled it.
    public var reason: String
    /// The server's record when the change was discarded; nil when it was not read or the server removed it.
    public var serverBody: [UInt8]?
    /// The server's `VersionField` value then; nil when not known.
    public var serverVersion: String?
}

extension StateStore {
    /// The discarded changes. An older syncd never names the table: going back keeps the file. `seq` is the
    /// outbox's own number (unique in the file: the outbox's numbers are never reused).
    static let discardedTable = """
        CREATE TABLE IF NOT EXISTS discarded (
            seq INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            record_id TEXT NOT NULL,
            id_is_integer INTEGER NOT NULL DEFAULT 0,
            operation TEXT NOT NULL,
            body BLOB,
            base_version TEXT,
            created_at TEXT NOT NULL,
            discarded_at TEXT NOT NULL,
            reason TEXT NOT NULL,
            server_body BLOB,
            server_version TEXT
        )
        """

    /// Moves the outbox entry `seq` to the discarded changes, with the server's side and why, in one durable
    /// transaction: the change is either still queued or kept as discarded, never lost. Returns what was kept;
    /// nil when the entry is gone (nothing changed).
    @discardableResult
    public func discard(_ seq: Int64, reason: String, serverBody: [UInt8]?, serverVersion: String?,
                        at time: String) throws(StoreError) -> DiscardedChange? {
        var kept: DiscardedChange?
        try durableWrite("keep a discarded change") {
            guard let entry = try outboxEntry(seq) else { return }
            let insert = try database.prepare("""
                INSERT INTO discarded (seq, source, record_id, id_is_integer, operation, body, base_version, created_at,
                                       discarded_at, reason, server_body, server_version)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                """)
            try insert.bind(1, entry.seq)
            try insert.bind(2, entry.source)
            try insert.bind(3, entry.recordID)
            try insert.bind(4, Int64(entry.idIsInteger ? 1 : 0))
            try insert.bind(5, entry.operation.rawValue)
            if let body = entry.body { try body.withUnsafeBytes { try insert.bind(6, blob: $0) } } else { try insert.bind(6, nil as String?) }
            try insert.bind(7, entry.baseVersion)
            try insert.bind(8, entry.createdAt)
            try insert.bind(9, time)
            try insert.bind(10, reason)
            if let serverBody { try serverBody.withUnsafeBytes { try insert.bind(11, blob: $0) } } else { try insert.bind(11, nil as String?) }
            try insert.bind(12, serverVersion)
            try insert.step()
            let remove = try database.prepare("DELETE FROM outbox WHERE seq = ?1")
            try remove.bind(1, seq)
            try remove.step()
            kept = DiscardedChange(seq: entry.seq, source: entry.source, recordID: entry.recordID, idIsInteger: entry.idIsInteger,
                                   operation: entry.operation, body: entry.body, baseVersion: entry.baseVersion,
                                   createdAt: entry.createdAt, discardedAt: time, reason: reason,
                                   serverBody: serverBody, serverVersion: serverVersion)
        }
        return kept
    }

    /// The discarded changes, oldest first; of one source, or of all when `source` is nil. A file without the
    /// table (opened read-only before the daemon added it) has none.
    public func discarded(source: String?) throws -> [DiscardedChange] {
        guard hasDiscardedTable else { return [] }
        let statement = try database.prepare("""
            SELECT seq, source, record_id, id_is_integer, operation, body, base_version, created_at, discarded_at, reason,
                   server_body, server_version
            FROM discarded WHERE ?1 IS NULL OR source = ?1 ORDER BY seq
            """)
        try statement.bind(1, source)
        var changes: [DiscardedChange] = []
        while try statement.step() {
            changes.append(DiscardedChange(
                seq: statement.int64(0), source: statement.string(1) ?? "", recordID: statement.string(2) ?? "",
                idIsInteger: statement.int64(3) != 0, operation: OutboxRecord.Operation(rawValue: statement.string(4) ?? "") ?? .update,
                body: statement.isNull(5) ? nil : statement.bytes(5), baseVersion: statement.string(6),
                createdAt: statement.string(7) ?? "", discardedAt: statement.string(8) ?? "", reason: statement.string(9) ?? "",
                serverBody: statement.isNull(10) ? nil : statement.bytes(10), serverVersion: statement.string(11)))
        }
        return changes
    }

    /// One discarded change by its sequence number; nil when there is none.
    public func discardedChange(_ seq: Int64) throws -> DiscardedChange? {
        try discarded(source: nil).first { $0.seq == seq }
    }

    /// Forgets the discarded changes of `source` discarded before `cutoff` (RFC 3339, as `Timestamp.rfc3339`
    /// writes it: fixed width, so the text compares as the time); returns how many. Looks first: with none to
    /// forget (nearly every refresh) it writes nothing, and costs no commit.
    @discardableResult
    public func pruneDiscarded(source: String, before cutoff: String) throws(StoreError) -> Int {
        guard hasDiscardedTable else { return 0 }
        do {
            let old = try database.prepare("SELECT count(*) FROM discarded WHERE source = ?1 AND discarded_at < ?2")
            try old.bind(1, source)
            try old.bind(2, cutoff)
            _ = try old.step()
            if old.int64(0) == 0 { return 0 }
        } catch {
            throw .sqlite(error)
        }
        var removed = 0
        try write("prune the discarded changes of \(source)") {
            let statement = try database.prepare("DELETE FROM discarded WHERE source = ?1 AND discarded_at < ?2")
            try statement.bind(1, source)
            try statement.bind(2, cutoff)
            try statement.step()
            removed = database.changes
        }
        return removed
    }

    /// Queues the discarded change `seq` again as a new outbox entry (`operation`, `body`, against `baseVersion`,
    /// made at `time`) and forgets the discarded one, in one durable transaction: it is never in both lists, nor
    /// in neither. The new entry coalesces with a queued change of the record like any other (`enqueue`).
    /// Returns false, changing nothing, when there is no such discarded change.
    public func restoreDiscarded(_ seq: Int64, operation: OutboxRecord.Operation, body: [UInt8]?, baseVersion: String?,
                                 at time: String, idempotencyKey: String) throws(StoreError) -> Bool {
        var restored = false
        try durableWrite("queue a discarded change again") {
            guard let change = try discardedChange(seq) else { return }
            let remove = try database.prepare("DELETE FROM discarded WHERE seq = ?1")
            try remove.bind(1, seq)
            try remove.step()
            _ = try enqueueRow(source: change.source, recordID: change.recordID, idIsInteger: change.idIsInteger, operation: operation,
                               body: body, baseVersion: baseVersion, at: time, idempotencyKey: idempotencyKey)
            restored = true
        }
        return restored
    }
}
