internal import CSQLite
import SyncCore

/// The change sequence of each source and its bounded log (docs/control-api.md, "Changes"): every change
/// to what a source's cache file holds gets the source's next `seq` (`sources.change_seq`), and the log keeps
/// the IDs it changed and removed, by bytes (`RecordID`: an NFC and an NFD ID are two records). The oldest
/// changes are trimmed first (`ChangeFeed.keptChanges` changes, `ChangeFeed.keptIDs` IDs); `change_floor` is
/// the oldest `since` the log still answers.
///
/// Local changes are logged by triggers on the outbox, whichever code writes it (as `outboxStampTriggers`
/// count them); a listing logs what it changed when it commits (ListingWriter+Changes).
extension StateStore {
    /// The log: one row per record of a change, or one row without an ID for a change too large to list.
    static let changeLogTable = """
        CREATE TABLE IF NOT EXISTS change_log (source TEXT NOT NULL, seq INTEGER NOT NULL, id BLOB,
            removed INTEGER NOT NULL DEFAULT 0)
        """
    static let changeLogIndex = "CREATE INDEX IF NOT EXISTS change_log_by_seq ON change_log (source, seq)"

    /// Logs one change of `source` from a trigger: the next seq, the row, and the trim by count of changes.
    private static func logFromTrigger(source: String, id: String, removed: String) -> String {
        let kept = ChangeFeed.keptChanges
        return """
            INSERT OR IGNORE INTO sources (name) VALUES (\(source));
            UPDATE sources SET change_seq = change_seq + 1 WHERE name = \(source);
            INSERT INTO change_log (source, seq, id, removed)
                SELECT \(source), change_seq, CAST(\(id) AS BLOB), \(removed) FROM sources WHERE name = \(source);
            DELETE FROM change_log WHERE source = \(source) AND seq <= (SELECT change_seq FROM sources WHERE name = \(source)) - \(kept);
            UPDATE sources SET change_floor = max(change_floor, change_seq - \(kept)) WHERE name = \(source);
            """
    }

    /// Triggers logging local changes: one queued (a new outbox row), one whose body or operation changed (a
    /// coalesced change, a restore), and one settled or dropped (the row goes: the record shows the listing's
    /// version again, or stays gone: a create that never reached the server, a removal the server took).
    static let changeLogTriggers = [
        "CREATE TRIGGER IF NOT EXISTS change_log_insert AFTER INSERT ON outbox BEGIN "
            + logFromTrigger(source: "NEW.source", id: "NEW.record_id", removed: "NEW.operation = 'delete'") + " END",
        "CREATE TRIGGER IF NOT EXISTS change_log_update AFTER UPDATE ON outbox WHEN OLD.body IS NOT NEW.body "
            + "OR OLD.operation IS NOT NEW.operation OR OLD.record_id IS NOT NEW.record_id BEGIN "
            + logFromTrigger(source: "NEW.source", id: "NEW.record_id", removed: "NEW.operation = 'delete'") + " END",
        "CREATE TRIGGER IF NOT EXISTS change_log_delete AFTER DELETE ON outbox BEGIN "
            + logFromTrigger(source: "OLD.source", id: "OLD.record_id", removed: "(OLD.operation = 'create' AND OLD.state != 'sent') OR (OLD.operation = 'delete' AND OLD.state = 'sent')") + " END",
    ]

    /// Logs that record `recordID` of `source` is in the view again (a removal settled without the listing
    /// showing it taken: the listing's copy shows). Its own transaction.
    public func logRecordShown(source: String, recordID: String) throws(StoreError) {
        try write("log a change of \(source)") { try logChange(source: source, changed: [Array(recordID.utf8)], removed: [], unlisted: false) }
    }

    /// The log's schema objects, created when a file lacks them (an older syncd never names them).
    static var changeLogSchema: [String] { [changeLogTable, changeLogIndex] + changeLogTriggers }

    /// Logs one change of `source` inside the caller's transaction: the next seq for `changed` and `removed`
    /// (UTF-8 bytes of the IDs), or, with `unlisted`, one row without IDs (more records than a change lists).
    /// Then trims the oldest changes to the log's bounds. Returns the new seq.
    @discardableResult
    func logChange(source: String, changed: [[UInt8]], removed: [[UInt8]], unlisted: Bool) throws(SQLiteError) -> Int64 {
        try run("INSERT OR IGNORE INTO sources (name) VALUES (?1)", source)
        try run("UPDATE sources SET change_seq = change_seq + 1 WHERE name = ?1", source)
        let seq = try changeSequence(of: source)
        let insert = try database.prepare("INSERT INTO change_log (source, seq, id, removed) VALUES (?1, ?2, ?3, ?4)")
        func add(_ id: [UInt8]?, removed: Bool) throws(SQLiteError) {
            insert.reset()
            try insert.bind(1, source)
            try insert.bind(2, seq)
            if let id {
                let bound = id.withUnsafeBytes { bytes in Result { () throws(SQLiteError) in try insert.bind(3, blob: bytes) } }
                try bound.get()
            } else {
                try insert.bind(3, nil as Int64?)
            }
            try insert.bind(4, removed ? 1 : 0)
            try insert.step()
        }
        if unlisted {
            // Nothing before it can be replayed past it: the log answers from this change on (a `since` below it
            // is `ChangesExpired` with `oldest` this seq, which it then answers).
            try trimChanges(source: source, through: seq)
        } else {
            for id in changed { try add(id, removed: false) }
            for id in removed { try add(id, removed: true) }
            try trimChanges(source: source, through: seq - ChangeFeed.keptChanges)
            let cut = try database.prepare("SELECT seq FROM change_log WHERE source = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2")
            try cut.bind(1, source)
            try cut.bind(2, Int64(ChangeFeed.keptIDs))
            if try cut.step() {
                let through = cut.int64(0)
                try cut.step()
                try trimChanges(source: source, through: through)
            }
        }
        return seq
    }

    /// Forgets the changes of `source` up to `seq`: `Changes` from before it answers `ChangesExpired`.
    private func trimChanges(source: String, through seq: Int64) throws(SQLiteError) {
        guard seq > 0 else { return }
        let trim = try database.prepare("DELETE FROM change_log WHERE source = ?1 AND seq <= ?2")
        try trim.bind(1, source)
        try trim.bind(2, seq)
        try trim.step()
        let floor = try database.prepare("UPDATE sources SET change_floor = max(change_floor, ?2) WHERE name = ?1")
        try floor.bind(1, source)
        try floor.bind(2, seq)
        try floor.step()
    }

    func changeSequence(of source: String) throws(SQLiteError) -> Int64 {
        let statement = try database.prepare("SELECT change_seq FROM sources WHERE name = ?1")
        try statement.bind(1, source)
        return try statement.step() ? statement.int64(0) : 0
    }

    /// The current seq of `source` and the oldest `since` its log answers (0, 0 for a source never changed).
    public func changeSequence(source: String) throws(StoreError) -> (seq: Int64, floor: Int64) {
        do {
            guard hasChangeLog else { return (0, 0) }
            let statement = try database.prepare("SELECT change_seq, change_floor FROM sources WHERE name = ?1")
            try statement.bind(1, source)
            guard try statement.step() else { return (0, 0) }
            return (statement.int64(0), statement.int64(1))
        } catch {
            throw .sqlite(error)
        }
    }

    /// The log's rows of `source` after `since`, in order, with the current seq and the oldest `since` answered.
    public func changeRows(source: String, since: Int64) throws(StoreError) -> (rows: [ChangeLogRow], seq: Int64, floor: Int64) {
        let sequence = try changeSequence(source: source)
        guard hasChangeLog, since < sequence.seq else { return ([], sequence.seq, sequence.floor) }
        do {
            let statement = try database.prepare("SELECT seq, id, removed FROM change_log WHERE source = ?1 AND seq > ?2 ORDER BY seq, rowid")
            try statement.bind(1, source)
            try statement.bind(2, since)
            var rows: [ChangeLogRow] = []
            while try statement.step() {
                let id = statement.isNull(1) ? nil : statement.withBlob(1) { String(decoding: $0, as: UTF8.self) }
                rows.append(ChangeLogRow(seq: statement.int64(0), id: id, removed: statement.int64(2) != 0))
            }
            return (rows, sequence.seq, sequence.floor)
        } catch {
            throw .sqlite(error)
        }
    }

    /// `Changes(source, since, limit)`: a page of the log (`ChangeFeed.page`).
    public func changes(source: String, since: Int64, limit: Int) throws(StoreError) -> Result<ChangePage, ChangeFeed.Expired> {
        let log = try changeRows(source: source, since: since)
        return ChangeFeed.page(rows: log.rows, since: since, limit: limit, current: log.seq, floor: log.floor)
    }
}

extension StateStore {
    /// Carries the change numbers of an erased account's sources into this (new) store: each source continues
    /// after its old number with one change without IDs (the logout), so an app's `since` from before it is
    /// `ChangesExpired` rather than answered from numbers that started again.
    public func continueChangeSequences(_ sequences: [String: Int64]) throws(StoreError) {
        try write("continue the change numbers") {
            for (source, seq) in sequences.sorted(by: { $0.key < $1.key }) where seq > 0 {
                try run("INSERT OR IGNORE INTO sources (name) VALUES (?1)", source)
                let carry = try database.prepare("UPDATE sources SET change_seq = max(change_seq, ?2) WHERE name = ?1")
                try carry.bind(1, source)
                try carry.bind(2, seq)
                try carry.step()
                try logChange(source: source, changed: [], removed: [], unlisted: true)
            }
        }
    }
}
