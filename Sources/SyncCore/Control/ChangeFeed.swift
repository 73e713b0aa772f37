/// One row of a source's change log (docs/control-api.md, "Changes"): a record changed or removed by the
/// change numbered `seq`. A change that touched more records than the log lists keeps one row without an ID.
public struct ChangeLogRow: Sendable, Equatable {
    /// The source's change sequence number of the change.
    public var seq: Int64
    /// The record's ID (its UTF-8 bytes as the server or the app wrote them); nil: too many records to list.
    public var id: String?
    /// True when the record is gone from the local view after this change.
    public var removed: Bool

    /// Creates a row.
    public init(seq: Int64, id: String?, removed: Bool) {
        self.seq = seq
        self.id = id
        self.removed = removed
    }
}

/// One answer of `Changes`: the records changed and removed after `since`, each once in its latest state.
public struct ChangePage: Sendable, Equatable {
    /// IDs whose record is present (new or changed) after the page's last change, in the order of their latest change.
    public var changed: [String]
    /// IDs whose record is gone after the page's last change, in the order of their latest change.
    public var removed: [String]
    /// The `since` that asks for the rest; nil when this page reaches the current `seq`.
    public var next: Int64?
    /// The source's current change sequence number.
    public var seq: Int64

    /// Creates a page.
    public init(changed: [String], removed: [String], next: Int64?, seq: Int64) {
        self.changed = changed
        self.removed = removed
        self.next = next
        self.seq = seq
    }
}

/// The change feed's rules (docs/control-api.md, "Changes"): what the log keeps, how `Changes` pages it and
/// how a `Watch` event names records. Pure: the store supplies the rows.
public enum ChangeFeed {
    /// Changes (sequence numbers) kept per source: older ones are trimmed first.
    public static let keptChanges: Int64 = 1_000
    /// Record IDs kept per source: the oldest changes are trimmed until the log holds at most this many.
    public static let keptIDs = 50_000
    /// IDs one listing logs; a listing that changed more is logged as one change without IDs, and `Changes`
    /// from before it answers `ChangesExpired` (the app lists the source again).
    public static let listedPerListing = 10_000
    /// Records of a listing compared with the stored ones to find what it changed: those of the index chunks
    /// that differ, which are all of them once a record inserted or removed near the start shifts the rest. A
    /// listing that differs in more is logged as one change without IDs.
    public static let comparedPerListing = 100_000
    /// IDs a `Watch` event names in each of `changed` and `removed`; more set `truncated`.
    public static let eventListLimit = 1_000

    /// Why `Changes` cannot answer from the log.
    public struct Expired: Error, Sendable, Equatable {
        /// The oldest `since` the log can answer.
        public var oldest: Int64

        /// Creates the error.
        public init(oldest: Int64) { self.oldest = oldest }
    }

    /// The first page of changes after `since`, given the log's rows with `seq > since` in order (by seq, then
    /// as written), the source's current `seq` and the oldest `since` the log answers (`floor`). The page ends
    /// after the change that brings it to `limit` distinct IDs (a change's IDs are never split across pages).
    /// A `since` below `floor`, above the current `seq` (the account's data was erased since) or before a change
    /// logged without IDs is `Expired`.
    public static func page(rows: [ChangeLogRow], since: Int64, limit: Int, current: Int64, floor: Int64) -> Result<ChangePage, Expired> {
        guard since >= floor, since <= current else { return .failure(Expired(oldest: floor)) }
        var latest: [RecordID: Int] = [:]
        var entries: [(id: String, removed: Bool, live: Bool)] = []
        var index = 0
        var next: Int64?
        while index < rows.count {
            let seq = rows[index].seq
            while index < rows.count, rows[index].seq == seq {
                let row = rows[index]
                index += 1
                guard let id = row.id else { return .failure(Expired(oldest: seq)) }
                let key = RecordID(id)
                if let earlier = latest[key] { entries[earlier].live = false }
                latest[key] = entries.count
                entries.append((id, row.removed, true))
            }
            if latest.count >= max(limit, 1), index < rows.count {
                next = seq
                break
            }
        }
        let live = entries.filter(\.live)
        return .success(ChangePage(changed: live.filter { !$0.removed }.map(\.id), removed: live.filter(\.removed).map(\.id),
                                   next: next, seq: current))
    }

    /// What a `Watch` event says of the records changed between two of its source's events: the lists, or nil
    /// when they would exceed `eventListLimit` each or the log cannot tell (then `truncated`: the app calls
    /// `Changes` or lists the source again).
    public static func eventLists(rows: [ChangeLogRow], since: Int64, current: Int64, floor: Int64) -> (changed: [String], removed: [String])? {
        guard case .success(let page) = page(rows: rows, since: since, limit: Int.max, current: current, floor: floor),
              page.changed.count <= eventListLimit, page.removed.count <= eventListLimit else { return nil }
        return (page.changed, page.removed)
    }
}
