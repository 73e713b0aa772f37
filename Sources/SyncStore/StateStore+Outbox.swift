import SyncCore

/// One local change waiting to reach the server (docs/local-changes.md).
public struct OutboxRecord: Sendable, Equatable {
    /// What the change does on the server.
    public typealias Operation = ChangeOperation
    /// Where the change stands.
    public typealias State = OutboxState

    public var seq: Int64
    public var source: String
    public var recordID: String
    public var idIsInteger: Bool
    public var operation: Operation
    /// The record's JSON (nil for a removal).
    public var body: [UInt8]?
    /// The server's `VersionField` value the change was made against.
    public var baseVersion: String?
    /// When the change was made (RFC 3339).
    public var createdAt: String
    /// Sent as `Idempotency-Key`, stable across retries.
    public var idempotencyKey: String
    public var state: State
    public var attempts: Int
    /// Listings since the push that did not show it yet.
    public var unconfirmed: Int
    public var lastStatus: Int?
    public var lastError: String?
    /// The boot (`boot_id`) and the milliseconds into it (`CLOCK_BOOTTIME`) at which the latest attempt began, or
    /// since when a create whose answer was lost has waited (`LostCreateWait`); nil when unknown.
    public var attemptBoot: String? = nil
    public var attemptUptime: Int64? = nil
    /// How often syncd sent this create again because a listing read after the wait did not show it.
    public var blindResends: Int = 0

    /// Set on a parked change once a newer change of its record superseded it (`markSuperseded`): kept for the
    /// record, never pushed. Column `superseded`; cleared whenever the change's state or message changes.
    public var superseded: Bool = false
    /// Set while the latest attempt's request cannot have reached the server (`HTTPError.requestNeverSent`):
    /// such a create's outcome is known. Column `not_sent`; cleared by the next attempt.
    public var notSent: Bool = false

    /// The words before `lastError` where a change is shown (`syncctl outbox`, the control API, the journal)
    /// once a newer change superseded it (docs/local-changes.md).
    public static let supersededWords = "superseded by a newer change; was: "
    /// The words before `lastError` where a change whose request never reached the server is shown.
    public static let notSentWords = "not sent: "

    /// A parked change a newer change of the same record superseded: kept for the record, never pushed.
    public var isSuperseded: Bool { state == .parked && superseded }

    /// Whether the local view (the cache file, `List`, `Get`) applies this change: every change but a superseded
    /// one, which stays in the outbox as history only (a newer change of its record, or the server's copy once
    /// that newer change is settled, is what the view shows).
    public var showsInLocalView: Bool { !isSuperseded }

    /// `lastError` as people read it: after the words of its state (superseded, not sent). Nil when there is
    /// no message and no such state.
    public var shownError: String? {
        guard isSuperseded || notSent else { return lastError }
        return (isSuperseded ? OutboxRecord.supersededWords : "") + (notSent ? OutboxRecord.notSentWords : "") + (lastError ?? "")
    }
}

/// The SQL condition, on an `outbox` row, of `OutboxRecord.isSuperseded`.
let superseded = "(state = 'parked' AND superseded != 0)"

/// When an attempt began, on the boot clock of one boot (`boot_id`, milliseconds of `CLOCK_BOOTTIME`), which
/// `LostCreateWait` measures a lost create's wait with.
public struct AttemptTime: Sendable, Equatable {
    public var boot: String
    public var uptime: Int64

    public init(boot: String, uptime: Int64) {
        self.boot = boot
        self.uptime = uptime
    }
}

/// The server's side of a conflict kept for `syncctl conflicts`.
public struct ConflictRecord: Sendable, Equatable {
    public var source: String
    public var recordID: String
    public var remoteBody: [UInt8]?
    public var remoteVersion: String?
    public var detectedAt: String
}

extension StateStore {
    /// Queues a change durably: the transaction is committed with `synchronous=FULL` (the WAL is flushed to
    /// disk) before this returns. Successive changes to one record coalesce into one while it was never
    /// attempted: create+update → create, update+update → update, update+delete → delete, and a create
    /// followed by a delete disappears. A change is never merged into one that was attempted (a request may
    /// be on the wire or its answer lost, `markAttempt`) nor into a sent one: it becomes a new entry after
    /// it, pushed once that one is settled, and a create after a create or update becomes an update
    /// (docs/local-changes.md, "Changes made while one is out"). Returns the entry as queued (nil when it vanished).
    @discardableResult
    public func enqueue(source: String, recordID: String, idIsInteger: Bool, operation: OutboxRecord.Operation,
                        body: [UInt8]?, baseVersion: String?, at time: String, idempotencyKey: String) throws(StoreError) -> OutboxRecord? {
        var result: OutboxRecord?
        try durableWrite("queue a change to \(recordID) of \(source)") {
            result = try enqueueRow(source: source, recordID: recordID, idIsInteger: idIsInteger, operation: operation, body: body,
                                    baseVersion: baseVersion, at: time, idempotencyKey: idempotencyKey)
        }
        return result
    }

    /// `enqueue` inside the caller's transaction (also `restoreDiscarded`'s).
    func enqueueRow(source: String, recordID: String, idIsInteger: Bool, operation: OutboxRecord.Operation,
                    body: [UInt8]?, baseVersion: String?, at time: String, idempotencyKey: String) throws -> OutboxRecord? {
        try noteUnwritten(source: source, recordID: recordID)
        // The record's latest change that is, or may be, on its way to the server or on it.
        let latest = try outboxEntries(source: source, recordID: recordID).last { $0.state == .queued || $0.state == .sent }
        if let existing = latest, existing.state == .queued, existing.attempts == 0 {
            let merged: OutboxRecord.Operation?
            switch (existing.operation, operation) {
            case (.create, .delete): merged = nil
            case (.create, _): merged = .create
            case (.update, .create): merged = .update
            case (_, let new): merged = new
            }
            guard let merged else {
                try run("DELETE FROM outbox WHERE seq = ?1", existing.seq)
                return nil
            }
            let statement = try database.prepare("UPDATE outbox SET operation = ?2, body = ?3, created_at = ?4 WHERE seq = ?1")
            try statement.bind(1, existing.seq)
            try statement.bind(2, merged.rawValue)
            if let body { try body.withUnsafeBytes { try statement.bind(3, blob: $0) } } else { try statement.bind(3, nil as String?) }
            try statement.bind(4, time)
            try statement.step()
            return try outboxEntry(existing.seq)
        }
        var operation = operation
        if operation == .create, let latest, latest.operation != .delete { operation = .update }
        let statement = try database.prepare("""
            INSERT INTO outbox (source, record_id, id_is_integer, operation, body, base_version, created_at, idempotency_key)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        try statement.bind(1, source)
        try statement.bind(2, recordID)
        try statement.bind(3, idIsInteger ? 1 : 0)
        try statement.bind(4, operation.rawValue)
        if let body { try body.withUnsafeBytes { try statement.bind(5, blob: $0) } } else { try statement.bind(5, nil as String?) }
        try statement.bind(6, baseVersion)
        try statement.bind(7, time)
        try statement.bind(8, idempotencyKey)
        try statement.step()
        return try outboxEntry(database.lastInsertRowID)
    }

    /// Every outbox entry, oldest first; of one source, or of all when `source` is nil.
    public func outbox(source: String?) throws -> [OutboxRecord] {
        try outboxRows("?1 IS NULL OR source = ?1") { try $0.bind(1, source) }
    }

    /// The outbox entries of `recordID` of `source`, oldest first: one lookup in the index `outbox_by_record`,
    /// whatever else is queued.
    public func outboxEntries(source: String, recordID: String) throws -> [OutboxRecord] {
        try outboxRows("source = ?1 AND record_id = ?2") { statement in
            try statement.bind(1, source)
            try statement.bind(2, recordID)
        }
    }

    /// The outbox entries matching the SQL condition `condition` (parameters bound by `bind`), oldest first.
    func outboxRows(_ condition: String, bind: (Statement) throws -> Void) throws -> [OutboxRecord] {
        let statement = try database.prepare("""
            SELECT seq, source, record_id, id_is_integer, operation, body, base_version, created_at, idempotency_key,
                   state, attempts, unconfirmed, last_status, last_error, attempt_boot, attempt_uptime_ms, blind_resends,
                   superseded, not_sent
            FROM outbox WHERE \(condition) ORDER BY seq
            """)
        try bind(statement)
        var entries: [OutboxRecord] = []
        while try statement.step() {
            workCounter?.outboxEntriesRead += 1
            entries.append(OutboxRecord(
                seq: statement.int64(0), source: statement.string(1) ?? "", recordID: statement.string(2) ?? "",
                idIsInteger: statement.int64(3) != 0, operation: OutboxRecord.Operation(rawValue: statement.string(4) ?? "") ?? .update,
                body: statement.isNull(5) ? nil : statement.bytes(5), baseVersion: statement.string(6),
                createdAt: statement.string(7) ?? "", idempotencyKey: statement.string(8) ?? "",
                state: OutboxRecord.State(rawValue: statement.string(9) ?? "") ?? .queued, attempts: Int(statement.int64(10)),
                unconfirmed: Int(statement.int64(11)), lastStatus: statement.isNull(12) ? nil : Int(statement.int64(12)),
                lastError: statement.string(13), attemptBoot: statement.string(14),
                attemptUptime: statement.isNull(15) ? nil : statement.int64(15), blindResends: Int(statement.int64(16)),
                superseded: statement.int64(17) != 0, notSent: statement.int64(18) != 0))
        }
        return entries
    }

    /// What `last_error` says while a request is out; still there after a crash, it tells that the answer was lost.
    public static let answerPending = "sent; no answer received yet"

    /// Counts the attempt before the request goes out, so a crash mid-request is known afterwards, and returns
    /// the entry as it stands then, in the same transaction: from here on no change is merged into it
    /// (`enqueue`), so what is returned is exactly what goes out. `time` is kept as when the attempt began.
    /// Nil when the entry is gone or no longer queued.
    public func markAttempt(_ seq: Int64, at time: AttemptTime) throws(StoreError) -> OutboxRecord? {
        var claimed: OutboxRecord?
        try durableWrite("count an attempt") {
            let statement = try database.prepare("""
                UPDATE outbox SET attempts = attempts + 1, last_status = NULL, last_error = '\(StateStore.answerPending)',
                                  superseded = 0, not_sent = 0,
                                  attempt_boot = ?2, attempt_uptime_ms = ?3
                WHERE seq = ?1 AND state = 'queued'
                """)
            try statement.bind(1, seq)
            try statement.bind(2, time.boot)
            try statement.bind(3, time.uptime)
            try statement.step()
            claimed = try outboxEntry(seq).flatMap { $0.state == .queued ? $0 : nil }
        }
        return claimed
    }

    /// One outbox entry by its sequence number; nil when there is none.
    public func outboxEntry(_ seq: Int64) throws -> OutboxRecord? {
        try outboxRows("seq = ?1") { try $0.bind(1, seq) }.first
    }

    /// A create whose answer was lost and whose attempt is of another boot (or unknown) waits from `time` on
    /// (`LostCreateWait`).
    public func restampAttempt(_ seq: Int64, at time: AttemptTime) throws(StoreError) {
        try durableWrite("stamp a lost create's wait") {
            let statement = try database.prepare("UPDATE outbox SET attempt_boot = ?2, attempt_uptime_ms = ?3 WHERE seq = ?1")
            try statement.bind(1, seq)
            try statement.bind(2, time.boot)
            try statement.bind(3, time.uptime)
            try statement.step()
        }
    }

    /// Counts a create sent again because a listing read after its wait did not show it.
    public func markResent(_ seq: Int64) throws(StoreError) {
        try durableWrite("count a create sent again") {
            try run("UPDATE outbox SET blind_resends = blind_resends + 1 WHERE seq = ?1", seq)
        }
    }

    /// The server accepted the change; it stays as an overlay until a listing shows it.
    public func markSent(_ seq: Int64) throws(StoreError) {
        try durableWrite("mark a change sent") {
            try run("UPDATE outbox SET state = 'sent', last_status = NULL, last_error = NULL, \(StateStore.noMarks) WHERE seq = ?1", seq)
        }
    }

    /// Maps every change of `source` to `oldID` onto the server-assigned `newID`.
    public func remapRecordID(source: String, from oldID: String, to newID: String, newIDIsInteger: Bool) throws(StoreError) {
        try durableWrite("map \(oldID) to \(newID)") {
            let statement = try database.prepare("UPDATE outbox SET record_id = ?3, id_is_integer = ?4 WHERE source = ?1 AND record_id = ?2")
            try statement.bind(1, source)
            try statement.bind(2, oldID)
            try statement.bind(3, newID)
            try statement.bind(4, Int64(newIDIsInteger ? 1 : 0))
            try statement.step()
        }
    }

    /// Parks a change the server refused, with its answer, for a person to act on.
    public func park(_ seq: Int64, status: Int, error: String) throws(StoreError) {
        try durableWrite("park a change") {
            let statement = try database.prepare("UPDATE outbox SET state = 'parked', last_status = ?2, last_error = ?3, \(StateStore.noMarks) WHERE seq = ?1")
            try statement.bind(1, seq)
            try statement.bind(2, Int64(status))
            try statement.bind(3, error)
            try statement.step()
        }
    }

    /// Records a transient failure on a change that stays queued; `notSent` when its request cannot have
    /// reached the server.
    public func noteFailure(_ seq: Int64, status: Int?, error: String, notSent: Bool = false) throws(StoreError) {
        try durableWrite("note a failed push") {
            let statement = try database.prepare("UPDATE outbox SET last_status = ?2, last_error = ?3, superseded = 0, not_sent = ?4 WHERE seq = ?1")
            try statement.bind(1, seq)
            try statement.bind(2, status.map(Int64.init))
            try statement.bind(3, error)
            try statement.bind(4, Int64(notSent ? 1 : 0))
            try statement.step()
        }
    }

    /// Marks a parked change superseded by a newer change of its record: history from now on, never pushed,
    /// applied by no view (`OutboxRecord.isSuperseded`). Its message stays. Nothing happens to a change no
    /// longer parked.
    public func markSuperseded(_ seq: Int64) throws(StoreError) {
        try durableWrite("mark a parked change superseded") {
            try run("UPDATE outbox SET superseded = 1 WHERE seq = ?1 AND state = 'parked'", seq)
        }
    }

    /// The SQL assignments that clear an entry's state columns: a change whose state or message changes
    /// is neither superseded nor unsent any more.
    static let noMarks = "superseded = 0, not_sent = 0"

    /// Puts a parked or conflicting change back in the queue; with `baseVersion`, against that version, and
    /// with `body`, as that text (the change rebased onto the server's version, `VersionRebase`).
    public func requeue(_ seq: Int64, baseVersion: String?? = nil, body: [UInt8]? = nil,
                        as operation: OutboxRecord.Operation? = nil) throws(StoreError) {
        try durableWrite("requeue a change") {
            try run("UPDATE outbox SET state = 'queued', last_status = NULL, last_error = NULL, \(StateStore.noMarks) WHERE seq = ?1", seq)
            if let baseVersion { try setBase(seq, version: baseVersion, body: body) }
            if let operation {
                let statement = try database.prepare("UPDATE outbox SET operation = ?2 WHERE seq = ?1")
                try statement.bind(1, seq)
                try statement.bind(2, operation.rawValue)
                try statement.step()
            }
        }
    }

    /// Makes a change one against the server's version `baseVersion`, its text `body` when given (the
    /// policy chose the local version after a conflict: `VersionRebase`). Its state stays as it is.
    public func rebase(_ seq: Int64, baseVersion: String?, body: [UInt8]?) throws(StoreError) {
        try durableWrite("rebase a change") { try setBase(seq, version: baseVersion, body: body) }
    }

    private func setBase(_ seq: Int64, version: String?, body: [UInt8]?) throws {
        let statement = try database.prepare("UPDATE outbox SET base_version = ?2, body = coalesce(?3, body) WHERE seq = ?1")
        try statement.bind(1, seq)
        try statement.bind(2, version)
        if let body { try body.withUnsafeBytes { try statement.bind(3, blob: $0) } } else { try statement.bind(3, nil as String?) }
        try statement.step()
    }

    /// Removes a change (done, or dropped by a person; one a `ConflictPolicy=` discards is kept: `discard`).
    public func removeOutboxEntry(_ seq: Int64) throws(StoreError) {
        try durableWrite("remove a change") { try run("DELETE FROM outbox WHERE seq = ?1", seq) }
    }

    /// Counts a listing that did not show a sent change yet.
    public func markUnconfirmed(_ seq: Int64) throws(StoreError) {
        try durableWrite("note an unconfirmed change") { try run("UPDATE outbox SET unconfirmed = unconfirmed + 1 WHERE seq = ?1", seq) }
    }

    /// Marks a change as conflicting and keeps the server's side of it; `status` and `reason` say what
    /// showed the conflict (an HTTP 409/412, or the server's version read before the push).
    public func recordConflict(_ seq: Int64, remoteBody: [UInt8]?, remoteVersion: String?, at time: String,
                               status: Int?, reason: String) throws(StoreError) {
        try durableWrite("record a conflict") {
            guard let entry = try outboxEntry(seq) else { return }
            let mark = try database.prepare("UPDATE outbox SET state = 'conflict', last_status = ?2, last_error = ?3, \(StateStore.noMarks) WHERE seq = ?1")
            try mark.bind(1, seq)
            try mark.bind(2, status.map(Int64.init))
            try mark.bind(3, reason)
            try mark.step()
            let statement = try database.prepare("""
                INSERT OR REPLACE INTO conflicts (source, record_id, remote_body, remote_version, detected_at) VALUES (?1, ?2, ?3, ?4, ?5)
                """)
            try statement.bind(1, entry.source)
            try statement.bind(2, entry.recordID)
            if let remoteBody { try remoteBody.withUnsafeBytes { try statement.bind(3, blob: $0) } } else { try statement.bind(3, nil as String?) }
            try statement.bind(4, remoteVersion)
            try statement.bind(5, time)
            try statement.step()
        }
    }

    /// The server's side of every conflict; of one source, or of all.
    public func conflicts(source: String?) throws -> [ConflictRecord] {
        let statement = try database.prepare("""
            SELECT source, record_id, remote_body, remote_version, detected_at FROM conflicts
            WHERE ?1 IS NULL OR source = ?1 ORDER BY source, record_id
            """)
        try statement.bind(1, source)
        var result: [ConflictRecord] = []
        while try statement.step() {
            result.append(ConflictRecord(source: statement.string(0) ?? "", recordID: statement.string(1) ?? "",
                                         remoteBody: statement.isNull(2) ? nil : statement.bytes(2),
                                         remoteVersion: statement.string(3), detectedAt: statement.string(4) ?? ""))
        }
        return result
    }

    /// Forgets the server's side of a settled conflict.
    public func removeConflict(source: String, recordID: String) throws(StoreError) {
        try durableWrite("settle a conflict") {
            let statement = try database.prepare("DELETE FROM conflicts WHERE source = ?1 AND record_id = ?2")
            try statement.bind(1, source)
            try statement.bind(2, recordID)
            try statement.step()
        }
    }

    /// Calls `body` with the local view of `source`, in order: the server's listing with the local changes
    /// applied (a removed record left out, a changed one replaced), then records created locally.
    public func forEachLocalRecord(source: String, _ body: (_ id: String, _ json: UnsafeRawBufferPointer) throws -> Void) throws {
        // Keyed by the IDs' bytes (`RecordID`): canonically equivalent IDs are different records.
        let overlay = LocalOverlay(try outbox(source: source))
        var seen: Set<RecordID> = []
        try forEachRecord(source: source) { record in
            guard overlay.changed(record.id) else { return try body(record.id, record.body) }
            seen.insert(RecordID(record.id))
            if let local = overlay.localBody(of: record.id) {
                try local.withUnsafeBytes { try body(record.id, $0) }
            }
        }
        for id in overlay.madeOrder where !seen.contains(id) {
            if let local = overlay.localBody(of: id.key) {
                try local.withUnsafeBytes { try body(id.key, $0) }
            }
        }
    }

    /// IDs with changes not yet confirmed by the server, and IDs in conflict, for the cache file.
    public func pendingAndConflicts(source: String) throws -> (pending: [RecordID], conflicts: [RecordID]) {
        let lists = TrailerLists(try outbox(source: source))
        return (lists.pending, lists.conflicts)
    }

    /// IDs with a parked change that nothing superseded: the part of `pending` waiting for a person.
    public func parkedIDs(source: String) throws -> [RecordID] {
        TrailerLists(try outbox(source: source)).parked
    }

    private func run(_ sql: String, _ values: Int64...) throws(SQLiteError) {
        let statement = try database.prepare(sql)
        for (index, value) in values.enumerated() { try statement.bind(Int32(index + 1), value) }
        try statement.step()
    }

    /// A write whose commit is flushed to disk before it returns (`synchronous=FULL`): local changes are
    /// never lost to a crash or a power cut once the caller was told they are stored.
    func durableWrite(_ what: String, _ body: () throws -> Void) throws(StoreError) {
        do {
            try database.execute("PRAGMA synchronous=FULL")
        } catch {
            throw .sqlite(error)
        }
        defer { try? database.execute("PRAGMA synchronous=NORMAL") }
        try write(what, body)
    }
}
