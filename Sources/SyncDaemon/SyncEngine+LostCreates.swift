import SyncControl
import SyncCore
import SyncStore

// Creates whose answer was lost — a timeout or a closed connection after the request went out, or a crash
// of syncd during the POST — are never POSTed again blindly (docs/local-changes.md, "Lost answers").
// `push` holds them back; after the listing is pulled, this looks for them in it.

extension OutboxRecord {
    /// A create that went out and got no answer: a timeout, a closed connection, or a crash of syncd (the
    /// attempt is counted, durably, before the request is sent; any answer replaces `lastError`).
    var answerWasLost: Bool {
        state == .queued && operation == .create && attempts > 0 && lastStatus == nil && lastError != nil
    }
}

extension SyncEngine {
    /// The creates of `source` waiting for this check (the push held them back).
    func lostCreates(of source: SourceConfiguration) -> [OutboxRecord] {
        guard source.writable else { return [] }
        let entries = (try? store.outbox(source: source.name)) ?? []
        let checked = shared.memory.withLock { $0.checkedCreates }
        return entries.filter { $0.answerWasLost && !checked.contains($0.seq) }
    }

    /// The IDs of the listing as it was before the pull: records that were in it cannot be the lost create.
    func listingIDs(of source: SourceConfiguration) -> Set<String> {
        var ids: Set<String> = []
        try? store.forEachRecord(source: source.name) { ids.insert($0.id) }
        return ids
    }

    /// Looks for each lost create in the listing just pulled: by the client's ID (the server kept it), else
    /// with `LostCreateSearch` (by `ClientIDField=`, or by an exact match of every field the create sent among
    /// records that were not in `previousIDs`). One match: the record is adopted under the server's ID. None: the next push POSTs it
    /// again. Several: the change is parked for a person to decide.
    func settleLostCreates(_ source: SourceConfiguration, previousIDs: Set<String>) {
        var changed = false
        for entry in lostCreates(of: source) {
            do {
                changed = try settleLostCreate(entry, source: source, previousIDs: previousIDs) || changed
            } catch {
                logger.error("\(source.name): Failed to settle the create of \(entry.recordID) whose answer was lost, will retry: \(error)")
            }
        }
        if changed { republish(source.name) }
    }

    private func settleLostCreate(_ entry: OutboxRecord, source: SourceConfiguration, previousIDs: Set<String>) throws -> Bool {
        if try serverRecord(source: source.name, id: entry.recordID) != nil {
            try store.markSent(entry.seq)
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is on the server under its ID")
            return true
        }
        guard case .object(let sent)? = entry.body.flatMap({ try? JSONValue(parsing: $0) }) else {
            _ = shared.memory.withLock { $0.checkedCreates.insert(entry.seq) }
            return false
        }
        var search = LostCreateSearch(clientID: entry.recordID, sent: sent, idField: source.idField,
                                      clientIDField: source.clientIDField, previousIDs: previousIDs)
        try store.forEachRecord(source: source.name) { record in
            guard search.wantsMore, let body = try? JSONValue(parsing: Array(record.body)) else { return }
            search.consider(id: record.id, idIsInteger: record.idIsInteger, body: body)
        }
        switch search.decision {
        case .resend:
            _ = shared.memory.withLock { $0.checkedCreates.insert(entry.seq) }
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is not in the listing; sending it again")
            return false
        case .adopt(let id, let idIsInteger):
            try store.remapRecordID(source: source.name, from: entry.recordID, to: id, newIDIsInteger: idIsInteger)
            try store.markSent(entry.seq)
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is on the server as \(id); adopted that ID")
            return true
        case .park(let ids):
            let how = source.clientIDField.map { "with \($0)=\(entry.recordID)" } ?? "with every field it sent"
            let message = "the answer to its POST was lost and the listing has several new records \(how) "
                + "(\(ids.joined(separator: ", "))); check the server, then 'syncctl outbox --drop' or '--retry'"
            try store.park(entry.seq, status: 0, error: message)
            logger.warning("\(source.name): parked the create of \(entry.recordID): \(message)")
            return true
        }
    }
}
