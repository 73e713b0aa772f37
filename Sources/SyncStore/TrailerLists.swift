import SyncCore

/// The ID lists of a cache file's trailer (`pending`, `parked`, `conflicts`), from a source's outbox in
/// order: each ID once, where its first entry puts it. Sets keep the dedupe linear in the entries (a
/// search of the list so far made every local change cost the square of those queued).
struct TrailerLists {
    /// IDs with a change not in conflict (queued, sent or parked, not superseded), in the order of their first such entry.
    private(set) var pending: [RecordID] = []
    /// IDs with a parked change that nothing superseded.
    private(set) var parked: [RecordID] = []
    /// IDs with a change in conflict.
    private(set) var conflicts: [RecordID] = []

    /// The lists of `entries` (oldest first).
    init(_ entries: [OutboxRecord]) {
        // By the IDs' bytes (`RecordID`): canonically equivalent IDs are different records.
        var inPending: Set<RecordID> = [], inParked: Set<RecordID> = [], inConflicts: Set<RecordID> = []
        for entry in entries where entry.showsInLocalView {
            let id = RecordID(key: entry.recordID, kind: entry.idIsInteger ? .integer : .string)
            if entry.state == .conflict {
                if inConflicts.insert(id).inserted { conflicts.append(id) }
            } else if inPending.insert(id).inserted {
                pending.append(id)
            }
            if entry.state == .parked && !entry.isSuperseded && inParked.insert(id).inserted { parked.append(id) }
        }
    }
}
