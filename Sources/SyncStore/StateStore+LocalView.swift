/// Reads of the local view (syncd(8) DESCRIPTION: the server's last good listing with the
/// pending local changes applied) for the control API's `List` and `Get`. Both follow
/// `forEachLocalRecord`, the same merge the cache file is written from, so `syncctl list` / `get`
/// and the file never disagree.
extension StateStore {
    /// Calls `body` with up to `limit` records of the local view of `source`, starting at position
    /// `offset` in the order of the cache file; returns the number of records in the local view.
    ///
    /// Without local changes the view is the server's listing and only the chunks holding the page are
    /// read; with some, the whole view is walked, since a removal or a local creation shifts positions.
    public func localRecords(source: String, offset: Int, limit: Int,
                             _ body: (_ id: String, _ json: UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        if try outbox(source: source).isEmpty {
            return try records(source: source, offset: offset, limit: limit) { try body($0.id, $0.body) }
        }
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
        if let change = try outbox(source: source).last(where: { $0.recordID.isSameID(as: id) }) {
            guard change.operation != .delete, let local = change.body else { return false }
            try local.withUnsafeBytes { try body($0) }
            return true
        }
        return try record(source: source, id: id) { try body($0.body) }
    }
}
