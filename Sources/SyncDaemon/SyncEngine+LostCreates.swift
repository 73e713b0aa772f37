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
        return entries.filter { $0.answerWasLost && !checkedCreates.contains($0.seq) }
    }

    /// The IDs of the listing as it was before the pull: records that were in it cannot be the lost create.
    func listingIDs(of source: SourceConfiguration) -> Set<String> {
        var ids: Set<String> = []
        try? store.forEachRecord(source: source.name) { ids.insert($0.id) }
        return ids
    }

    /// Looks for each lost create in the listing just pulled: by the client's ID (the server kept it), by
    /// `ClientIDField=`, else by an exact match of every field the create sent among records that were not in
    /// `previousIDs`. One match: the record is adopted under the server's ID. None: the next push POSTs it
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
            checkedCreates.insert(entry.seq)
            return false
        }
        var matches: [(id: String, isInteger: Bool)] = []
        try store.forEachRecord(source: source.name) { record in
            guard matches.count < 2 || source.clientIDField == nil else { return }
            guard case .object(let found)? = try? JSONValue(parsing: Array(record.body)) else { return }
            if let field = source.clientIDField {
                if found[field]?.stringValue == entry.recordID || found[field]?.integerValue.map(String.init) == entry.recordID {
                    matches.append((record.id, record.idIsInteger))
                }
            } else if !previousIDs.contains(record.id),
                      sent.members.allSatisfy({ $0.key == source.idField || found[$0.key] == $0.value }) {
                matches.append((record.id, record.idIsInteger))
            }
        }
        switch matches.count {
        case 0:
            checkedCreates.insert(entry.seq)
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is not in the listing; sending it again")
            return false
        case 1:
            try store.remapRecordID(source: source.name, from: entry.recordID, to: matches[0].id, newIDIsInteger: matches[0].isInteger)
            try store.markSent(entry.seq)
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is on the server as \(matches[0].id); adopted that ID")
            return true
        default:
            let how = source.clientIDField.map { "with \($0)=\(entry.recordID)" } ?? "with every field it sent"
            let message = "the answer to its POST was lost and the listing has several new records \(how) "
                + "(\(matches.map(\.id).prefix(5).joined(separator: ", "))); check the server, then 'syncctl outbox --drop' or '--retry'"
            try store.park(entry.seq, status: 0, error: message)
            logger.warning("\(source.name): parked the create of \(entry.recordID): \(message)")
            return true
        }
    }
}
