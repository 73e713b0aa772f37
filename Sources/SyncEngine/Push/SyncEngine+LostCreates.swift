import SyncCore
import SyncStore

// Creates whose answer was lost — a timeout or a closed connection after the request went out, or a crash
// of syncd during the POST — are never POSTed again blindly (docs/local-changes.md, "Lost answers").
// `push` holds them back; after the listing is pulled, this looks for them in it.

extension OutboxRecord {
    /// A create whose outcome is unknown: it went out and got no answer (a timeout, a closed connection, a
    /// crash of syncd: the attempt is counted, durably, before the request is sent, and any answer replaces
    /// `lastError`), or a 5xx but 501 and 505 — a gateway's while the server behind it still works on the POST,
    /// or a server that failed after it stored the record. A request that never reached the server is not one.
    var answerWasLost: Bool {
        guard state == .queued, operation == .create, attempts > 0, lastError != nil else { return false }
        if let lastStatus { return HTTPAnswer.leavesCreateUnknown(lastStatus) }
        return !notSent
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
    func listingIDs(of source: SourceConfiguration) -> Set<RecordID> {
        var ids: Set<RecordID> = []
        try? store.forEachRecord(source: source.name) { ids.insert(RecordID($0.id)) }
        return ids
    }

    /// Looks for each lost create in the listing just pulled (whose request began `listedAt` on the boot
    /// clock): by the client's ID (the server kept it), else with `LostCreateSearch` (by `ClientIDField=`, or by
    /// an exact match of every field the create sent, among records that were not in `previousIDs`). One match:
    /// the record is adopted under the server's ID. Several: the change is parked for a person to decide. None:
    /// the next push POSTs it again — but only once the listing began `LostCreateWaitSec=` after the create's
    /// request (`LostCreateWait`); until then the server may still be working on it, and later listings look
    /// again. Sent again once already and still not shown: parked (the server stores it differently, or takes
    /// longer than the wait), so that it is never on the server more than twice.
    func settleLostCreates(_ source: SourceConfiguration, previousIDs: Set<RecordID>, listedAt: Int64) {
        var changed = false
        for entry in lostCreates(of: source) {
            do {
                changed = try settleLostCreate(entry, source: source, previousIDs: previousIDs, listedAt: listedAt) || changed
            } catch {
                logger.forSource(source.name).error("Failed to settle the create of \(entry.recordID) whose answer was lost, will retry: \(error)")
            }
        }
        if changed { republish(source.name) }
    }

    /// Where the wait of the lost create `entry` stands at `uptime` (the boot clock, now by default).
    func lostCreateWait(_ entry: OutboxRecord, source: SourceConfiguration, at uptime: Int64? = nil) -> LostCreateWait.Verdict {
        LostCreateWait.verdict(attemptBoot: entry.attemptBoot, attemptUptime: entry.attemptUptime, boot: clocks.bootID,
                               uptime: uptime ?? clocks.uptimeMilliseconds(), wait: source.lostCreateWait)
    }

    /// When the wait of the lost create `entry` ends, on the wall clock, for people.
    func lostCreateWaitEnds(_ entry: OutboxRecord, source: SourceConfiguration) -> Timestamp {
        let remaining = LostCreateWait.remainingMilliseconds(lostCreateWait(entry, source: source), wait: source.lostCreateWait)
        return Timestamp(secondsSinceEpoch: clock().secondsSinceEpoch + (remaining + 999) / 1000)
    }

    private func settleLostCreate(_ entry: OutboxRecord, source: SourceConfiguration, previousIDs: Set<RecordID>,
                                  listedAt: Int64) throws -> Bool {
        // With SendClientID=no the server never saw the client's ID: a record under it is someone else's.
        if source.sendClientID, try serverRecord(source: source.name, id: entry.recordID) != nil {
            try store.markSent(entry.seq)
            logger.forSource(source.name).info("the create of \(entry.recordID), whose answer was lost, is on the server under its ID")
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
            let verdict = lostCreateWait(entry, source: source, at: listedAt)
            if verdict == .restamp { try store.restampAttempt(entry.seq, at: clocks.attemptTime()) }
            guard verdict == .elapsed else {
                // The first POST may still be running on the server (held, queued, committing after syncd gave
                // up on its answer or stopped): sent again now, both would be created. Later listings look again.
                if shared.memory.withLock({ $0.waitingCreates.insert(entry.seq).inserted }) {
                    // Stamped anew just now, `entry` still holds the old stamp: its verdict is `.restamp`, the whole wait.
                    let ends = lostCreateWaitEnds(entry, source: source)
                    logger.forSource(source.name).info("the create of \(entry.recordID), whose answer was lost, is not in the listing yet; "
                                + "the server may still be working on it: it is sent again only if a listing read after "
                                + "\(ends.rfc3339) still lacks it (LostCreateWaitSec=)")
                }
                return false
            }
            _ = shared.memory.withLock { $0.waitingCreates.remove(entry.seq) }
            guard entry.blindResends == 0 else {
                let message = "it was sent again after the outcome of its POST was unknown (no answer, or a 5xx), the second "
                    + "outcome was unknown too (\(entry.lastError ?? "no answer")), and no listing since shows a record that matches it "
                    + "(the server may store it differently than sent\(source.clientIDField == nil ? "; set ClientIDField=" : ""), "
                    + "refuse it, or take longer than LostCreateWaitSec=); check the server, then 'syncctl outbox --drop' or '--retry'"
                try parkEntry(entry, of: source.name, status: entry.lastStatus ?? 0, message: message)
                logger.forSource(source.name).warning("parked the create of \(entry.recordID): \(message)")
                return true
            }
            try store.markResent(entry.seq)
            _ = shared.memory.withLock { $0.checkedCreates.insert(entry.seq) }
            logger.forSource(source.name).info("the create of \(entry.recordID), whose answer was lost, is not in the listing; sending it again")
            return false
        case .adopt(let id, let idIsInteger):
            _ = shared.memory.withLock { $0.waitingCreates.remove(entry.seq) }
            try store.remapRecordID(source: source.name, from: entry.recordID, to: id, newIDIsInteger: idIsInteger)
            try store.markSent(entry.seq)
            logger.forSource(source.name).info("the create of \(entry.recordID), whose answer was lost, is on the server as \(id); adopted that ID")
            return true
        case .park(let ids):
            let how = source.clientIDField.map { "with \($0)=\(entry.recordID)" } ?? "with every field it sent"
            // The IDs are the server's words: redacted as every other text of the server (syncd(8), SECURITY).
            let message = redaction(for: source).redacting(
                "the answer to its POST was lost and the listing has several new records \(how) "
                + "(\(ids.joined(separator: ", "))); check the server, then 'syncctl outbox --drop' or '--retry'")
            try parkEntry(entry, of: source.name, status: 0, message: message)
            logger.forSource(source.name).warning("parked the create of \(entry.recordID): \(message)")
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
        // Redacted like every notice: the client IDs are the server's (a record may carry the token).
        let notice = duplicateClientIDNotice(source).map { [$0.redacted(by: redaction(for: source))] } ?? []
        shared.memory.withLock { $0.sharedClientIDs[source.name] = notice }
        if let first = notice.first, notice != known { logger.forSource(source.name).warning(first.text) }
    }

    /// With `ClientIDField=`, the warning that records of the listing now stored share one client ID (a create
    /// the server took twice: its first request committed only after syncd had sent it again, or someone else
    /// sent it); nil when none do, or the source has no such field. Parses every record, and once more those
    /// whose client ID may repeat (`ClientIDDuplicates`). Not redacted yet.
    func duplicateClientIDNotice(_ source: SourceConfiguration) -> SourceNotice? {
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
            logger.forSource(source.name).error("Failed to look for records that share one \(field): \(error)")
            return nil
        }
        guard let notice = search.notice, let publicNotice = search.publicNotice else { return nil }
        return SourceNotice(notice, publicText: publicNotice)
    }
}
