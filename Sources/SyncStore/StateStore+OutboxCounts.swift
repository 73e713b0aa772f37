import SyncCore
/// Records with local changes, by where they stand (`SourceState.pendingCount` and the others), counted at
/// the cost of what changed: status is read after every local change, and counting the whole outbox each time
/// made queuing a change cost what was already queued. The counts of each source are kept with the outbox
/// stamp and greatest `seq` they were made at (StateStore+AppendCreates explains the stamp); new queued
/// changes of records without an earlier entry are added to them, and anything else counts the outbox again.
extension StateStore {
    /// The counts of `source`'s outbox, one per record whatever its number of entries.
    func outboxCounts(source: String) throws(SQLiteError) -> OutboxCounts {
        let before = try outboxStamp(source: source)
        if let before, let counted = countedOutboxes[source], before >= counted.stamp {
            if before == counted.stamp { return counted.counts }
            if let added = try newRecordsQueued(source: source, after: counted.seq, changes: before - counted.stamp) {
                var counts = counted.counts
                counts.pending += added.count
                counts.unpushed += added.count
                counts.records += added.count
                countedOutboxes[source] = CountedOutbox(stamp: before, seq: added.seq, counts: counts)
                return counts
            }
        }
        // Records, not changes: one row per record in the outbox's index order, so no temporary
        // table is built (four `count(DISTINCT …)` built four, at every call).
        let statement = try database.prepare("""
            SELECT count(*) FILTER (WHERE pending), count(*) FILTER (WHERE conflicted),
                   count(*) FILTER (WHERE unpushed), count(*) FILTER (WHERE parked), (SELECT max(seq) FROM outbox), count(*)
            FROM (SELECT max(state != 'conflict' AND \(superseded) IS NOT 1) AS pending,
                         max(state = 'conflict') AS conflicted,
                         max(state = 'queued' OR (state = 'parked' AND \(superseded) IS NOT 1)) AS unpushed,
                         max(state = 'parked' AND \(superseded) IS NOT 1) AS parked
                  FROM outbox WHERE source = ?1 GROUP BY record_id)
            """)
        try statement.bind(1, source)
        _ = try statement.step()
        workCounter?.outboxCounts += 1
        let counts = OutboxCounts(pending: Int(statement.int64(0)), conflicts: Int(statement.int64(1)),
                                  unpushed: Int(statement.int64(2)), parked: Int(statement.int64(3)), records: Int(statement.int64(5)))
        let seq = statement.int64(4)
        statement.reset()
        // Kept only when no change was committed meanwhile (the stamp only grows): then the counts are the
        // stamp's.
        if let before, try outboxStamp(source: source) == before {
            countedOutboxes[source] = CountedOutbox(stamp: before, seq: seq, counts: counts)
        } else {
            countedOutboxes[source] = nil
        }
        return counts
    }

    /// When the `changes` outbox changes of `source` since `seq` are all new queued entries, each of a record
    /// with no entry up to `seq` and no other new one: how many, and the greatest `seq`; nil otherwise.
    private func newRecordsQueued(source: String, after seq: Int64, changes: Int64) throws(SQLiteError) -> (count: Int, seq: Int64)? {
        let statement = try database.prepare("SELECT seq, record_id, state FROM outbox WHERE source = ?1 AND seq > ?2 ORDER BY seq")
        try statement.bind(1, source)
        try statement.bind(2, seq)
        var ids: Set<RecordID> = []         // by the IDs' bytes
        var last = seq
        while try statement.step() {
            guard let id = statement.string(1), statement.string(2) == OutboxRecord.State.queued.rawValue,
                  ids.insert(RecordID(id)).inserted, Int64(ids.count) <= changes else { return nil }
            if try hasOutboxEntry(source: source, recordID: id, upTo: seq) { return nil }
            last = statement.int64(0)
        }
        guard Int64(ids.count) == changes else { return nil }
        return (ids.count, last)
    }
}

/// Records with local changes of one source, by where they stand.
struct OutboxCounts: Equatable {
    var pending = 0
    var conflicts = 0
    var unpushed = 0
    var parked = 0
    /// Records with any entry, whatever its state (the local view differs from the listing in each).
    var records = 0
}

/// A source's outbox counts and the outbox stamp and greatest `seq` they were counted at.
struct CountedOutbox {
    var stamp: Int64
    var seq: Int64
    var counts: OutboxCounts
}
