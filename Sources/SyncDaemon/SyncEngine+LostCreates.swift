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

    /// Looks for each lost create in the listing just pulled (whose request began at `listedAt`): by the
    /// client's ID (the server kept it), else with `LostCreateSearch` (by `ClientIDField=`, or by an exact match
    /// of every field the create sent among records that were not in `previousIDs`). One match: the record is
    /// adopted under the server's ID. None: the next push POSTs it again — but only once the listing was read
    /// `LostCreateWaitSec=` after the create's request began; until then the server may still be working on
    /// it, and later listings look again. Several: the change is parked for a person to decide.
    func settleLostCreates(_ source: SourceConfiguration, previousIDs: Set<String>, listedAt: Timestamp) {
        var changed = false
        for entry in lostCreates(of: source) {
            do {
                changed = try settleLostCreate(entry, source: source, previousIDs: previousIDs, listedAt: listedAt) || changed
            } catch {
                logger.error("\(source.name): Failed to settle the create of \(entry.recordID) whose answer was lost, will retry: \(error)")
            }
        }
        if changed { republish(source.name) }
    }

    /// The moment from which a listing that lacks the lost create `entry` shows it is not coming: its request
    /// began `LostCreateWaitSec=` before. A create attempted before syncd kept that time counts from the upgrade.
    static func resendAllowed(_ entry: OutboxRecord, source: SourceConfiguration) -> Timestamp {
        let (seconds, attoseconds) = source.lostCreateWait.components
        return Timestamp(secondsSinceEpoch: (entry.attemptedAt ?? 0) + seconds + (attoseconds > 0 ? 1 : 0))
    }

    private func settleLostCreate(_ entry: OutboxRecord, source: SourceConfiguration, previousIDs: Set<String>,
                                  listedAt: Timestamp) throws -> Bool {
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
        case .resend where listedAt < Self.resendAllowed(entry, source: source):
            // The first POST may still be running on the server (held, queued, committing after syncd gave up
            // on its answer or stopped): sent again now, both would be created. Later listings look again.
            let first = shared.memory.withLock { $0.waitingCreates.insert(entry.seq).inserted }
            if first {
                logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is not in the listing yet; "
                            + "the server may still be working on it: it is sent again only if a listing read after "
                            + "\(Self.resendAllowed(entry, source: source).rfc3339) still lacks it (LostCreateWaitSec=)")
            }
            return false
        case .resend:
            _ = shared.memory.withLock { $0.checkedCreates.insert(entry.seq); $0.waitingCreates.remove(entry.seq) }
            logger.info("\(source.name): the create of \(entry.recordID), whose answer was lost, is not in the listing; sending it again")
            return false
        case .adopt(let id, let idIsInteger):
            _ = shared.memory.withLock { $0.waitingCreates.remove(entry.seq) }
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

extension SyncEngine {
    /// With `ClientIDField=`, looks for records of the listing now stored that share one client ID after each
    /// new listing, and after a 304 when this run has not looked yet: the warning is in the status
    /// (`notices`) and logged when it appears or changes.
    func checkClientIDs(_ source: SourceConfiguration, newListing: Bool) {
        guard source.clientIDField != nil else { return }
        let known = shared.memory.withLock { $0.sharedClientIDs[source.name] }
        guard newListing || known == nil else { return }
        let notice = duplicateClientIDNotice(source) ?? ""
        shared.memory.withLock { $0.sharedClientIDs[source.name] = notice }
        if !notice.isEmpty && notice != known { logger.warning("\(source.name): \(notice)") }
    }

    /// With `ClientIDField=`, the warning that records of the listing now stored share one client ID (a create
    /// the server took twice: its first request committed only after syncd had sent it again, or someone else
    /// sent it); nil when none do, or the source has no such field. Parses every record, and once more those
    /// whose client ID may repeat (`ClientIDDuplicates`).
    func duplicateClientIDNotice(_ source: SourceConfiguration) -> String? {
        guard let field = source.clientIDField else { return nil }
        var search = ClientIDDuplicates(field: field)
        do {
            try store.forEachRecord(source: source.name) { record in
                if let body = try? JSONValue(parsing: Array(record.body)) { search.tally(body) }
            }
            guard search.needsSecondPass() else { return nil }
            try store.forEachRecord(source: source.name) { record in
                if let body = try? JSONValue(parsing: Array(record.body)) { search.collect(id: record.id, body: body) }
            }
        } catch {
            logger.error("\(source.name): Failed to look for records that share one \(field): \(error)")
            return nil
        }
        return search.notice
    }
}
