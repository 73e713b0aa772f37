import SyncCore
/// Reads of the local view (syncd(8) DESCRIPTION: the server's last good listing with the pending
/// local changes applied) for the control API's `List` and `Get`. Both apply the outbox to the listing as
/// `forEachLocalRecord` does, the same merge the cache file is written from, so `syncctl list` / `get`
/// and the file never disagree.
extension StateStore {
    /// Calls `body` with up to `limit` records of the local view of `source`, starting at position
    /// `offset` in the order of the cache file; returns the number of records in the local view.
    ///
    /// Only the chunks holding the page are read, with or without local changes: the ID index places each
    /// record with a change in the listing, so the page's first listing position is the offset moved past
    /// the records removed before it, and records created locally follow the listing. The cost is the page's
    /// plus one index lookup per record with a change, never the listing's (besides the chunks' record counts,
    /// one small row each, summed to find where a chunk starts). When the ID index cannot answer
    /// (a listing written before it), the whole view is walked.
    public func localRecords(source: String, offset: Int, limit: Int,
                             _ body: (_ id: String, _ json: UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let entries = try outbox(source: source)
        if entries.isEmpty {
            return try records(source: source, offset: offset, limit: limit) { try body($0.id, $0.body) }
        }
        let overlay = LocalOverlay(entries)
        var removed: [Int] = []
        var created: [String] = []
        // Where each chunk starts, summed once for every record with a change (a delta may have left chunks short).
        let starts = try chunkStarts(source: source)
        for recordID in overlay.madeOrder {
            let id = recordID.key
            let kept = overlay.localBody(of: id) != nil
            switch try listingPosition(source: source, id: id, chunkStarts: starts) {
            case .unknown: return try walkedLocalRecords(source: source, offset: offset, limit: limit, body)
            case .at(let position): if !kept { removed.append(position) }
            case .absent: if kept { created.append(id) }
            }
        }
        removed.sort()
        let listed = try state(of: source).recordCount - removed.count
        let total = listed + created.count
        guard limit > 0, offset < total else { return total }
        var delivered = 0
        if offset < listed {
            // The listing position of the page's first record: past every removed record up to it.
            var start = offset
            for position in removed {
                guard position <= start else { break }
                start += 1
            }
            let page = try self.chunk(holding: start, source: source)
            var position = page.first
            try walkListing(source: source, first: page.seq) { record in
                position += 1
                guard position > start else { return true }
                if overlay.changed(record.id) {
                    guard let local = overlay.localBody(of: record.id) else { return true }
                    try local.withUnsafeBytes { try body(record.id, $0) }
                } else {
                    try body(record.id, record.body)
                }
                delivered += 1
                return delivered < limit
            }
        }
        for id in created.dropFirst(max(0, offset - listed)) where delivered < limit {
            guard let local = overlay.localBody(of: id) else { continue }
            try local.withUnsafeBytes { try body(id, $0) }
            delivered += 1
        }
        return total
    }

    /// `localRecords` by walking the whole view, for a listing the ID index cannot place records in.
    private func walkedLocalRecords(source: String, offset: Int, limit: Int,
                                    _ body: (_ id: String, _ json: UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        var position = 0
        try forEachLocalRecord(source: source) { id, json in
            if position >= offset && position - offset < limit { try body(id, json) }
            position += 1
        }
        return position
    }

    /// Calls `body` with the record of the local view of `source` whose ID is `id`; returns false if the
    /// view has none (never had one, or it was removed locally). The merge of `forEachLocalRecord` for one
    /// ID: its latest local change if it has one (nothing for a removal), else the server's record, found
    /// through the ID index.
    public func localRecord(source: String, id: String,
                            _ body: (_ json: UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if let change = try outboxEntries(source: source, recordID: id).last(where: \.showsInLocalView) {
            guard change.operation != .delete, let local = change.body else { return false }
            try local.withUnsafeBytes { try body($0) }
            return true
        }
        return try record(source: source, id: id) { try body($0.body) }
    }
}

/// A source's outbox as the local view applies it: the latest change of each record, and the order the
/// records were first changed in (the order of local creations in the view).
struct LocalOverlay {
    /// Keyed by the IDs' bytes (`RecordID`): canonically equivalent IDs are different records.
    private var latest: [RecordID: OutboxRecord] = [:]
    /// Each changed record's ID once, in the order of its first change.
    private(set) var madeOrder: [RecordID] = []

    /// The overlay of `entries` (oldest first).
    init(_ entries: [OutboxRecord]) {
        for entry in entries where entry.showsInLocalView {
            let id = RecordID(entry.recordID)
            if latest[id] == nil { madeOrder.append(id) }
            latest[id] = entry
        }
    }

    /// Whether record `id` has a local change.
    func changed(_ id: String) -> Bool { latest[RecordID(id)] != nil }

    /// The body the view shows for changed record `id`; nil when it was removed locally (or is unchanged).
    func localBody(of id: String) -> [UInt8]? {
        guard let change = latest[RecordID(id)], change.operation != .delete else { return nil }
        return change.body
    }
}
