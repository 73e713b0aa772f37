import SyncCore
import SyncRemote
import SyncStore

extension SyncEngine {
    // MARK: Queueing (Put, Delete)

    /// Queues a new or changed record durably and republishes the cache file; returns the record's ID.
    /// A record without an ID gets a UUID string as ID.
    /// Holds the source's lock (`EngineShared.withSourceLock`): a listing commit of the same source on another
    /// engine never runs between deciding create or update and queueing. A push in flight is not waited for.
    public func put(_ record: JSONObject, into source: SourceConfiguration) throws(ManagerError) -> String {
        try shared.withSourceLock(source.name) { () throws(ManagerError) -> String in try putLocked(record, into: source) }
    }

    private func putLocked(_ record: JSONObject, into source: SourceConfiguration) throws(ManagerError) -> String {
        guard source.writable else { throw .notWritable(source: source.name) }
        var record = record
        let id: String
        let isInteger: Bool
        switch record[source.idField] {
        case .string(let text)? where !text.isEmpty:
            (id, isInteger) = (text, false)
        case let number? where number.integerText != nil:
            (id, isInteger) = (number.integerText ?? "", true)
        case nil, .null?:
            id = Identifiers.uuid()
            isInteger = false
            record = JSONObject([(source.idField, .string(id))] + record.members.filter { $0.key != source.idField })
        default:
            throw .invalidParameter(parameter: "record", reason: "the record's \"\(source.idField)\" must be a non-empty string or an integer")
        }
        // A store that cannot be read must not turn an update into a create (a duplicate POST): fail instead.
        let onServer = try serverRecord(source: source.name, id: id)
        let known = try reading("the outbox") { try store.outboxEntries(source: source.name, recordID: id) }.contains { $0.state == .sent }
        let operation: OutboxRecord.Operation = onServer != nil || known ? .update : .create
        // A create carries the client's ID in ClientIDField= (unless the record sets that member), so that the
        // server stores it and a create whose answer is lost is recognised in the listing (docs/local-changes.md).
        if operation == .create, let field = source.clientIDField, field != source.idField,
           record[field] == nil || record[field] == .null || record[field] == .string("") {
            record[field] = .string(id)
        }
        let body = Array(JSONValue.object(record).serialized(.compact).utf8)
        guard body.count <= 1 << 20 else { throw .invalidParameter(parameter: "record", reason: "the record is larger than 1 MiB") }
        try queue(source, id: id, isInteger: isInteger, operation: operation, body: body, baseVersion: onServer?.version)
        return id
    }

    /// Queues the removal of a record durably and republishes the cache file.
    /// Holds the source's lock, like `put`.
    public func delete(id: String, from source: SourceConfiguration) throws(ManagerError) {
        try shared.withSourceLock(source.name) { () throws(ManagerError) in try deleteLocked(id: id, from: source) }
    }

    private func deleteLocked(id: String, from source: SourceConfiguration) throws(ManagerError) {
        guard source.writable else { throw .notWritable(source: source.name) }
        let onServer = try serverRecord(source: source.name, id: id)
        let pending = try reading("the outbox") { try store.outboxEntries(source: source.name, recordID: id) }.last
        guard onServer != nil || (pending != nil && pending?.operation != .delete) else {
            throw .noSuchRecord(source: source.name, id: id)
        }
        // The ID keeps the type the record has (7 stays 7 in the cache file's pending list).
        try queue(source, id: id, isInteger: onServer?.idIsInteger ?? pending?.idIsInteger ?? false, operation: .delete, body: nil,
                  baseVersion: onServer?.version ?? pending?.baseVersion)
    }

    private func queue(_ source: SourceConfiguration, id: String, isInteger: Bool, operation: OutboxRecord.Operation,
                       body: [UInt8]?, baseVersion: String?) throws(ManagerError) {
        try supersedeParked(id, of: source)
        let stored: OutboxRecord?
        do {
            stored = try store.enqueue(source: source.name, recordID: id, idIsInteger: isInteger, operation: operation, body: body,
                                       baseVersion: baseVersion, at: clock().rfc3339, idempotencyKey: Identifiers.uuid())
        } catch {
            throw .storageFailure(reason: "Failed to store the change durably, nothing was queued: \(failureReason(error))")
        }
        // What the outbox holds now, not what was asked: a put behind a create already sent is stored as an
        // update, and a removal of a create never sent cancels both.
        if let stored {
            logger.forSource(source.name).info("queued \(stored.operation.rawValue) of \(id)")
        } else {
            logger.forSource(source.name).info("removed the unsent create of \(id); nothing to push")
        }
        republish(source.name)
    }

    /// A new change of a record supersedes its parked one: that stays in the outbox, marked, for the record
    /// (`syncctl outbox`), and no longer holds the record's changes back.
    func supersedeParked(_ id: String, of source: SourceConfiguration) throws(ManagerError) {
        let parked = ((try? store.outboxEntries(source: source.name, recordID: id)) ?? []).filter { $0.state == .parked && !$0.isSuperseded }
        for entry in parked {
            do {
                try store.markSuperseded(entry.seq)
            } catch {
                throw .storageFailure(reason: "Failed to mark the parked change \(entry.seq) superseded, nothing was queued: \(error)")
            }
            logger.forSource(source.name).notice("the parked \(entry.operation.rawValue) of \(id) (outbox \(entry.seq)) is superseded by a new change")
        }
    }

    /// The record as the last listing had it; nil when it has none. A store error is an error, never "none".
    func serverRecord(source: String, id: String) throws(ManagerError) -> (body: [UInt8], version: String?, idIsInteger: Bool)? {
        var found: (body: [UInt8], version: String?, idIsInteger: Bool)?
        _ = try reading("the stored record") {
            do {
                return try store.record(source: source, id: id) { found = (Array($0.body), $0.version, $0.idIsInteger) }
            } catch {
                // A cache file changed outside syncd is set aside and fetched again; this change is refused meanwhile.
                recoverCacheFile(source, after: error)
                throw error
            }
        }
        return found
    }

    /// Whether the latest listing has the record, for the push: a store failure fails the push (retried).
    func listingHas(_ id: String, of source: SourceConfiguration) throws(RefreshFailure) -> Bool {
        do {
            return try serverRecord(source: source.name, id: id) != nil
        } catch {
            throw RefreshFailure(.transient, "\(error)")
        }
    }

    /// Runs a store read; its failure becomes `.storageFailure` with what was being read, so it is never mistaken
    /// for "not found".
    func reading<T>(_ what: String, _ body: () throws -> T) throws(ManagerError) -> T {
        do { return try body() } catch { throw .storageFailure(reason: "Failed to read \(what): \(failureReason(error)); nothing was changed") }
    }

    /// Rewrites the cache file after a local change, at once or, for a large file, once for a burst of changes
    /// (`CacheFileCoalescing`, `writeScheduledCacheFile`); a failure is logged and retried at the next refresh.
    func republish(_ name: String) {
        shared.withSourceLock(name) {
            do {
                // Durable before the rewrite: a crash before it ends rewrites the file at start.
                try store.markCacheFileBehind(source: name)
                let fileBytes = try store.state(of: name).snapshotFingerprint?.size
                if case .now = shared.decideRewrite(of: name, fileBytes: fileBytes) { try publish(name) }
            } catch {
                logger.forSource(name).error("\(error)")
            }
        }
    }

    /// Runs a rewrite `republish` scheduled for `name`: the cache file then shows every change stored until now.
    /// Returns whether a file was written (nothing is when a refresh wrote it meanwhile).
    @discardableResult
    public func writeScheduledCacheFile(_ name: String) -> Bool {
        shared.withSourceLock(name) { () -> Bool in
            guard shared.takeScheduledRewrite(of: name), (try? store.state(of: name))?.snapshotDirty == true else { return false }
            do {
                try publish(name)
                return true
            } catch {
                logger.forSource(name).error("\(error)")
                return false
            }
        }
    }

    // MARK: Settling by a person

    /// `syncctl outbox --retry SEQ`: a parked change goes back in the queue.
    public func retryOutboxEntry(_ seq: Int64) throws(ManagerError) -> String {
        guard let entry = try reading("the outbox", { try store.outbox(source: nil) }).first(where: { $0.seq == seq }) else {
            throw .noSuchOutboxEntry(seq: seq)
        }
        // Only a change a person has to decide on goes back to the queue. A queued create whose answer was lost
        // in particular keeps that state: sent blind now, the server could get it twice.
        switch entry.state {
        case .parked where entry.isSuperseded:
            // History only: queued again, the older version would go out over the newer change that superseded it.
            throw .invalidParameter(parameter: "seq", reason: "entry \(seq) was superseded by a newer change of its record, which is "
                                    + "the one pushed; drop it with 'syncctl outbox --drop \(seq)', or put the record again")
        case .parked, .conflict:
            break
        case .queued where entry.answerWasLost:
            throw .invalidParameter(parameter: "seq", reason: "entry \(seq) is a create whose answer was lost; syncd sends it again "
                                    + "only if a listing read once LostCreateWaitSec= has passed still lacks it (see 'syncctl status')")
        case .queued:
            throw .invalidParameter(parameter: "seq", reason: "entry \(seq) is queued, not parked: it is pushed at the next refresh")
        case .sent:
            throw .invalidParameter(parameter: "seq", reason: "entry \(seq) was taken by the server; it stays until a listing shows it")
        }
        do { try store.requeue(seq) } catch { throw .storageFailure(reason: "\(error)") }
        return entry.source
    }

    /// `syncctl outbox --drop SEQ`: a person gives up a change. Returns its source and what the cache file shows
    /// of the record now: the server's version, a newer local change, or nothing (a create the server never took).
    public func dropOutboxEntry(_ seq: Int64) throws(ManagerError) -> (source: String, shows: DroppedRecordView) {
        guard let entry = try reading("the outbox", { try store.outbox(source: nil) }).first(where: { $0.seq == seq }) else {
            throw .noSuchOutboxEntry(seq: seq)
        }
        // Not while a listing of its source is being committed. A request already out for it is not recalled:
        // the server may still take the change, and the listing then shows it.
        let shows = try shared.withSourceLock(entry.source) { () throws(ManagerError) -> DroppedRecordView in
            do {
                try store.removeOutboxEntry(seq)
                if entry.state == .conflict { try store.removeConflict(source: entry.source, recordID: entry.recordID) }
            } catch {
                throw .storageFailure(reason: "\(error)")
            }
            // Read under the lock that the drop held: what the cache file is republished with below.
            let rest = (try? store.outbox(source: entry.source)) ?? []
            if rest.contains(where: { $0.recordID.isSameID(as: entry.recordID) }) { return .local }
            // Unreadable: the drop is done all the same, and the usual words are said.
            do { return try serverRecord(source: entry.source, id: entry.recordID) == nil ? .nothing : .server } catch { return .server }
        }
        logger.forSource(entry.source).notice("dropped the local \(entry.operation.rawValue) of \(entry.recordID) on request")
        republish(entry.source)
        return (entry.source, shows)
    }

    // MARK: Pushing

    /// Pushes the queued changes of a writable source, oldest first, before its listing is pulled.
    /// Changes to one record go out in order: a record with a parked, conflicting or failing change waits.
    /// One record's trouble never holds up the others: a refusal (`HTTPAnswer.refused`, on the push or on the
    /// check before it) parks that change, and a 500 or 408 leaves it queued while the other records go on; the
    /// first such failure is returned, so the caller pulls and then reports the refresh as failed (retried with
    /// backoff). A 401 or 403 stops the push and is returned: the listing is still pulled. What concerns the
    /// whole server stops the push and is thrown: a network error, a timeout, a 429, a 502/503/504, a
    /// `Retry-After`, three records in a row failing, a storage failure, cancellation.
    ///
    /// Holds no lock while a request is out: a local change of the same source made meanwhile is never merged
    /// into a change being sent (`pushOne`, `StateStore.enqueue`), so `put` and `delete` never wait for the server.
    func push(_ source: SourceConfiguration, token: String?) throws(RefreshFailure) -> RefreshFailure? {
        guard source.writable else { return nil }
        let entries: [OutboxRecord]
        do { entries = try store.outbox(source: source.name) } catch { throw RefreshFailure(.transient, "\(error)") }
        var round = PushRound()
        var changed = false
        var firstFailure: RefreshFailure?
        defer {
            if changed {
                republish(source.name)
                shared.reportState(of: source.name, from: store)
            }
        }
        for (index, entry) in entries.enumerated() {
            let id = RecordID(entry.recordID)
            // A create whose answer was lost (a timeout, a closed connection, a crash): the listing pulled next decides
            // whether it is on the server (settleLostCreates); it is never POSTed again blindly.
            let answerLost = entry.answerWasLost && !shared.memory.withLock({ $0.checkedCreates.contains(entry.seq) })
            guard round.sends(recordID: id, state: entry.state, superseded: entry.isSuperseded, answerLost: answerLost) else { continue }
            // One deadline for the whole refresh: the changes left when it passes stay queued.
            try checkPushDeadline(source, remaining: entries[index...])
            changed = true
            let started = refreshElapsed()
            let outcome: PushRound.Outcome
            var failure: RefreshFailure?
            do {
                try pushOne(entry, source: source, token: token)
                outcome = shared.memory.withLock({ $0.notFoundAnswers[entry.seq] }) != nil ? .awaitingListing : .finished
            } catch {
                if !error.leftCreateUnknown, pushStoppedByDeadline(source, startedAfter: started) {
                    throw pushDeadlineFailure(source, remaining: entries[index...])
                }
                failure = error
                outcome = roundOutcome(of: error)
            }
            let next = round.after(outcome, recordID: id)
            guard let failure else { continue }
            switch (outcome, next) {
            case (.createOutcomeUnknown, .stopAndPull(let failing)):
                // The server may be slow rather than down, and may have the record: no more requests in this push,
                // but the listing is pulled to look for it (settleLostCreates).
                logger.forSource(source.name).warning("\(failure.message); the push stops, the listing is pulled to look for the record")
                return failing ? failure : firstFailure
            case (_, .stopAndPull):
                // The credential, not the record: no more requests in this push; the listing is still pulled
                // (a token may read and not write) and the change stays queued for when the credential is fixed.
                logger.forSource(source.name).warning("\(failure.message); the push stops, the changes stay queued")
                return failure
            case (.recordTrouble, .goOn):
                if firstFailure == nil { firstFailure = failure }
                logger.forSource(source.name).warning("\(failure.message); the other records' changes go on")
            case (.recordTrouble, .fail):
                // Several records in a row failing alike is the server, not the records: stop asking.
                logger.forSource(source.name).warning("\(failure.message); \(PushRound.recordFailuresBeforeStopping) changes in a row "
                                                      + "failed, stopping the push")
                throw failure
            case (_, .fail), (_, .goOn):
                throw failure
            }
        }
        return firstFailure
    }

    /// How a change's failed push ends for the round: a create whose outcome is unknown; the credential refused
    /// (`HTTPAnswer.credentials`); a transient failure that one record's request met (`HTTPAnswer.recordTrouble`
    /// without `Retry-After`); or anything else, which concerns the whole server or the daemon: no answer, 429,
    /// 502/503/504, `Retry-After`, storage, cancellation.
    private func roundOutcome(of failure: RefreshFailure) -> PushRound.Outcome {
        if failure.leftCreateUnknown { return .createOutcomeUnknown }
        guard let status = failure.status else { return .failed }
        switch HTTPAnswer(status: status, answering: .push) {
        case .credentials:
            return .credentialsRefused
        case .recordTrouble where failure.kind == .transient && failure.retryAfter == nil:
            return .recordTrouble
        default:
            return .failed
        }
    }

    /// The failure for a 401 or 403 from `what`: the source's credential, never one record's. `publicWhat`: `what`
    /// as callers outside ControlGroup= may read it (docs/control-api.md, "Secrets").
    private func credentialFailure(_ status: Int, from what: String, publicWhat: String? = nil, _ doing: String) -> RefreshFailure {
        func text(_ from: String) -> String { "\(doing): HTTP \(status) from \(from): check the credentials (BearerTokenCredential=)" }
        return RefreshFailure(.permanent, text(what), publicMessage: publicWhat.flatMap { $0 == what ? nil : text($0) }, status: status)
    }

    /// Pushes one change. `force`: the policy chose the local version after the server refused it with
    /// 409 or 412, so the version check and `If-Match` are left out and a second refusal parks the change.
    ///
    /// The attempt is counted first (`markAttempt`), which also reads the change as it stands: a local change
    /// made from then on becomes a new entry after this one instead of being merged into it, so this push
    /// needs no lock while its requests are out, and a `put` never waits for one.
    private func pushOne(_ queued: OutboxRecord, source: SourceConfiguration, token: String?, force: Bool = false) throws(RefreshFailure) {
        let claimed: OutboxRecord?
        do { claimed = try store.markAttempt(queued.seq, at: clocks.attemptTime()) } catch { throw RefreshFailure(.transient, "\(error)") }
        // Gone (a create removed again before it was sent) or no longer queued: nothing to send.
        guard var entry = claimed else { return }
        let itemURL = source.itemURL.url(for: entry.recordID)
        let plan = PushPlan(operation: entry.operation, baseVersion: entry.baseVersion, comparesVersions: source.versionField != nil,
                            policy: source.conflictPolicy, forced: force)
        var step = plan.first
        if step == .check {
            // Before an update or removal, see whether the server moved on from the version the change was made against;
            // the record's ETag, if the server gives one, then guards the push itself (If-Match; a 412 is a conflict).
            let remote: Remote
            do {
                remote = try fetchRemote(itemURL, source: source, token: token)
            } catch {
                try? store.noteFailure(entry.seq, status: error.status, error: error.message)
                throw error
            }
            let check = pushCheck(remote, of: entry, source: source)
            step = plan.afterCheck(check, listed: check == .missing ? try listingHas(entry.recordID, of: source) : false)
            switch step {
            case .park(let status):
                // The item URL does not serve GET (405), or the server refuses the check for good: this change
                // is parked with the server's answer; the other records' changes and the listing go on.
                let redaction = Redaction(source: source, token: token)
                let what = redaction.redacting("GET \(itemURL)") + " (the check before the \(entry.operation == .delete ? "DELETE" : "PUT"))"
                return try park(entry, source: source, status: status, answer: remote.body ?? [], what: what, redaction: redaction)
            case .awaitListing:
                return try awaitListing(entry, source: source, url: itemURL)
            case .settle(let reason):
                // Already there: an earlier push of it landed though its answer was lost (docs/local-changes.md).
                return try settled(entry, source: source, as: reason)
            case .parkUnreadable(let status, let reason):
                // Without the server's version there is nothing to compare: not a conflict, and never dropped.
                let place = source.recordEnvelope.isEmpty ? "" : " at RecordEnvelope=\(source.recordEnvelopeText)"
                return try parkUnreadableVersion(entry, source: source, status: status, reason: reason
                    ?? "the server's copy (GET \(Redaction(source: source, token: token).redacting(itemURL))) has no \"\(source.versionField ?? "")\" "
                    + "(VersionField=) in its record\(place), so its version cannot be compared")
            case .conflict(let reason, _):
                if try conflict(entry, source: source, remoteBody: remote.body, remoteVersion: remote.version, reason: reason) { return }
                // The policy keeps the local version: pushed against the server's.
                step = plan.afterPushingLocal(over: check)
            default:
                break
            }
            if case .send(_, rebase: true) = step {
                entry = try rebase(entry, source: source, remoteBody: remote.body, remoteVersion: remote.version)
            }
        }
        guard case .send(let ifMatch, _) = step else { return }
        if entry.operation == .create { _ = shared.memory.withLock { $0.checkedCreates.remove(entry.seq) } }
        var request = HTTPRequest(url: entry.operation == .create ? source.url : itemURL)
        request.method = entry.operation == .create ? "POST" : entry.operation == .update ? "PUT" : "DELETE"
        request.timeout = pushRequestTimeout(source)
        request.maxBytes = 1 << 20
        request.bearerToken = token
        request.origins = source.originPolicy
        // SendClientID=no leaves the ID out of a create; RecordEnvelope= wraps the record (Kinto: {"data": {...}}).
        request.body = entry.operation == .delete ? nil : entry.body.map { body in
            RecordEnvelope.wrap(entry.operation == .create ? CreateBody.bytes(body, idField: source.idField, sendClientID: source.sendClientID) : body,
                                in: source.recordEnvelope)
        }
        request.headers = source.headers.map { (name: $0.name, value: $0.value) }
        request.headers.append((name: "Content-Type", value: "application/json"))
        request.headers.append((name: "Accept", value: "application/json"))
        request.headers.append((name: "Idempotency-Key", value: entry.idempotencyKey))
        if let ifMatch { request.headers.append((name: "If-Match", value: ifMatch)) }
        var answer: [UInt8] = []
        let head: HTTPResponseHead
        do {
            head = try client.perform(request) { chunk in
                if answer.count < 1 << 20 { answer += chunk }
            }
        } catch .cancelled {
            throw RefreshFailure(.cancelled, "cancelled")
        } catch {
            // A request that cannot have reached the server is not a lost answer (OutboxRecord.answerWasLost).
            try? store.noteFailure(entry.seq, status: nil, error: "\(error)", notSent: error.requestNeverSent)
            var failure = RefreshFailure(.transient, "pushing \(entry.operation.rawValue) of \(entry.recordID): \(error)",
                                         publicMessage: "pushing \(entry.operation.rawValue) of \(entry.recordID): \(error.publicDescription)")
            failure.leftCreateUnknown = plan.afterNoAnswer(neverSent: error.requestNeverSent) == .createOutcomeUnknown
            throw failure
        }
        // The redirect's target and the body are the server's words: redacted before any message quotes them.
        let redaction = Redaction(source: source, token: token)
        let what = redaction.redacting("\(request.method) \(request.url)" + (head.redirects.isEmpty ? "" : " (redirected to \(head.redirects.last ?? ""))"))
        // Callers outside ControlGroup= are not shown where the server redirected to (docs/control-api.md, "Secrets").
        let publicWhat = redaction.redacting("\(request.method) \(request.url)" + (head.redirects.isEmpty ? "" : " (after a redirect)"))
        // A 404 for a record the listing has is settled by the listing pulled next (awaitListing).
        let mayBeListed = entry.operation != .create && HTTPAnswer(status: head.status, answering: .push) == .notFound
        switch plan.afterAnswer(status: head.status, listed: mayBeListed ? try listingHas(entry.recordID, of: source) : false) {
        case .done:
            if let existing = heldAlready(entry, source: source, status: head.status, answer: answer) {
                // The ID was the server's already and it kept its own copy: the change meets that copy as an edit
                // made without seeing it, settled by ConflictPolicy= (docs/local-changes.md, "Conflicts").
                let reason = "the server already holds \(entry.recordID): it answered the create HTTP \(head.status) with its own copy"
                if try conflict(entry, source: source, remoteBody: existing.body, remoteVersion: existing.version, reason: reason,
                                status: head.status) { return }
                // The policy keeps the local version: sent as a change of the server's record, against its version.
                do { try store.requeue(entry.seq, as: .update) } catch { throw RefreshFailure(.transient, "\(error)") }
                var update = entry
                update.operation = .update
                update = try rebase(update, source: source, remoteBody: existing.body, remoteVersion: existing.version)
                try pushOne(update, source: source, token: token, force: true)
                return
            }
            try taken(entry, source: source, status: head.status, answer: answer)
        case .parkSeeOther:
            // RFC 9110 §15.4.4: the answer is elsewhere, to be fetched with GET; the write itself was not taken.
            let message = "HTTP \(head.status) See Other from \(what) to \(redaction.redacting(head.header("location") ?? "nowhere")): the server did not take the "
                + "\(request.method); check URL= and ItemURL="
            do { try parkEntry(entry, of: source.name, status: head.status, message: message) } catch { throw RefreshFailure(.transient, "\(error)") }
            logger.forSource(source.name).warning("\(message); parked the \(entry.operation.rawValue) of \(entry.recordID), see 'syncctl outbox'")
        case .awaitListing:
            try awaitListing(entry, source: source, url: itemURL)
        case .settle(let reason):
            try settled(entry, source: source, as: reason)
        case .conflict:
            var remote = try? fetchRemote(itemURL, source: source, token: token)
            if case .refused? = remote { remote = nil }
            if case .unreadable(_, let reason)? = remote {
                return try parkUnreadableVersion(entry, source: source, status: head.status, reason: "HTTP \(head.status) from \(what), and \(reason)")
            }
            if try conflict(entry, source: source, remoteBody: remote?.body, remoteVersion: remote?.version,
                            reason: "HTTP \(head.status) from \(what)", status: head.status) { return }
            // The policy keeps the local version: push it once more, unguarded, against the server's version.
            if remote != nil { _ = try rebase(entry, source: source, remoteBody: remote?.body, remoteVersion: remote?.version) }
            try pushOne(entry, source: source, token: token, force: true)
        case .stopForCredentials(let status):
            let failure = credentialFailure(status, from: what, publicWhat: publicWhat, "pushing \(entry.operation.rawValue) of \(entry.recordID)")
            try? store.noteFailure(entry.seq, status: status, error: failure.message)
            throw failure
        case .retryLater:
            // The server's own words, as for a parked 4xx: a 500's body often says what broke.
            let snippet = ErrorSnippet.text(answer, limit: 300, redaction: redaction)
            let summary = "HTTP \(head.status) from \(what)"
            try? store.noteFailure(entry.seq, status: head.status, error: summary + (snippet.isEmpty ? "" : ": \(snippet)"))
            throw RefreshFailure(.transient, "pushing \(entry.operation.rawValue) of \(entry.recordID): \(summary)", excerpt: snippet,
                                 publicSummary: publicWhat == what ? nil
                                     : "pushing \(entry.operation.rawValue) of \(entry.recordID): HTTP \(head.status) from \(publicWhat)",
                                 status: head.status, retryAfter: head.header("retry-after"))
        case .park(let status):
            try park(entry, source: source, status: status, answer: answer, what: what, redaction: redaction)
        case .check, .send, .parkUnreadable, .createOutcomeUnknown:
            // Not answers to a write (PushPlan.afterAnswer never gives them).
            break
        }
    }

    /// A create answered 200 (not 201 Created) with a record of its own ID that does not hold what was sent: the
    /// server had the ID already and kept its copy (Kinto answers a POST of a known ID so). That record and its
    /// version; nil for any other answer. A create is queued for an ID no listing held, such as during a first sync.
    private func heldAlready(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, answer: [UInt8]) -> (body: [UInt8], version: String?)? {
        guard entry.operation == .create, status == 200, let sentBytes = entry.body,
              case .success(let (record, bytes)) = RecordEnvelope.unwrap(answer, at: source.recordEnvelope),
              let sent = try? JSONValue(parsing: sentBytes).objectValue else { return nil }
        let answeredID = record[source.idField].flatMap { $0.stringValue ?? $0.integerText }
        guard answeredID == entry.recordID, !PushPlan.holds(sent, in: record, versionField: source.versionField) else { return nil }
        return (bytes, SyncEngine.version(of: record, field: source.versionField))
    }

    /// The write was taken (2xx): a server-given ID replaces the local one, the change is sent, and the version
    /// the server answered with is remembered as the engine's own (`notePushedVersion`).
    private func taken(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, answer: [UInt8]) throws(RefreshFailure) {
        var newID: String?
        var newIDIsInteger = false
        if entry.operation == .create, case .success(let (object, _)) = RecordEnvelope.unwrap(answer, at: source.recordEnvelope) {
            switch object[source.idField] {
            case .string(let id)?: newID = id
            case let id? where id.integerText != nil: (newID, newIDIsInteger) = (id.integerText, true)
            default: break
            }
        }
        if let newID, newID != entry.recordID {
            logger.forSource(source.name).info("the server gave \(entry.recordID) the ID \(newID)")
            do {
                try store.remapRecordID(source: source.name, from: entry.recordID, to: newID, newIDIsInteger: newIDIsInteger)
            } catch {
                throw RefreshFailure(.transient, "\(error)")
            }
        }
        do { try store.markSent(entry.seq) } catch { throw RefreshFailure(.transient, "\(error)") }
        notePushedVersion(of: entry, recordID: newID ?? entry.recordID, source: source, answer: answer)
        logger.forSource(source.name).info("pushed \(entry.operation.rawValue) of \(newID ?? entry.recordID) (HTTP \(status))")
    }

    /// What the check found, for `PushPlan.afterCheck`: whether the server's record already holds the update and
    /// whether its version is the engine's own latest push of it.
    private func pushCheck(_ remote: Remote, of entry: OutboxRecord, source: SourceConfiguration) -> PushCheck {
        switch remote {
        case .found(let body, let version, let etag, let status):
            return .found(status: status, version: version, etag: etag, holdsTheChange: serverHolds(entry, record: body, source: source),
                          ownWrite: isOwnWrite(version, recordID: entry.recordID, source: source))
        case .missing: return .missing
        case .refused(let status, _): return .refused(status: status)
        case .unreadable(let status, let reason): return .unreadable(status: status, reason: reason)
        }
    }

    /// The server's record: its JSON (unwrapped from `RecordEnvelope=`), its `VersionField` value, its `ETag` and
    /// the answer's status; or none; or the server refused the check (`HTTPAnswer.refused`: its status and answer),
    /// which parks the change; or, with `VersionField=` set, an answer whose record cannot be read, with its status
    /// and why.
    private enum Remote {
        case found([UInt8], String?, String?, Int), missing, refused(Int, [UInt8]), unreadable(Int, String)

        /// The record found, or the answer of a refusal.
        var body: [UInt8]? {
            switch self {
            case .found(let body, _, _, _), .refused(_, let body): return body
            case .missing, .unreadable: return nil
            }
        }

        /// The version of the record found.
        var version: String? {
            if case .found(_, let version, _, _) = self { return version }
            return nil
        }
    }

    /// `GET URL/ID`: the server's current record and its `VersionField` value. With `VersionField=` set, an
    /// answer that is not JSON or has no record where `RecordEnvelope=` points is `.unreadable`.
    private func fetchRemote(_ url: String, source: SourceConfiguration, token: String?) throws(RefreshFailure) -> Remote {
        var request = HTTPRequest(url: url)
        request.origins = source.originPolicy
        request.timeout = pushRequestTimeout(source)
        request.maxBytes = 1 << 20
        request.bearerToken = token
        request.headers = source.headers.map { (name: $0.name, value: $0.value) } + [(name: "Accept", value: "application/json")]
        var body: [UInt8] = []
        let head: HTTPResponseHead
        do {
            head = try client.perform(request) { body += $0 }
        } catch .cancelled {
            throw RefreshFailure(.cancelled, "cancelled")
        } catch {
            throw RefreshFailure(.transient, "checking \(url): \(error)")
        }
        switch HTTPAnswer(status: head.status, answering: .prePushCheck) {
        case .success:
            let record: JSONObject, bytes: [UInt8]
            switch RecordEnvelope.unwrap(body, at: source.recordEnvelope) {
            case .success(let unwrapped):
                (record, bytes) = unwrapped
            case .failure where source.versionField == nil:
                // No version to compare: the answer is only shown beside a 409/412 conflict, as the server wrote it.
                return .found(body, nil, head.header("etag"), head.status)
            case .failure(let problem):
                return .unreadable(head.status, "the answer to GET \(Redaction(source: source, token: token).redacting(url)) gives no version to compare: "
                                   + problem.message(pointerText: source.recordEnvelopeText))
            }
            return .found(bytes, SyncEngine.version(of: record, field: source.versionField), head.header("etag"), head.status)
        case .notFound:
            return .missing
        case .refused, .notModified, .seeOther, .conflict:
            return .refused(head.status, body)
        case .credentials:
            throw credentialFailure(head.status, from: Redaction(source: source, token: token).redacting("GET \(url)"), "checking the server's version")
        case .recordTrouble, .serverTrouble:
            throw RefreshFailure(.transient, "HTTP \(head.status) checking \(url)", status: head.status, retryAfter: head.header("retry-after"))
        }
    }

    func settled(_ entry: OutboxRecord, source: SourceConfiguration, as reason: String) throws(RefreshFailure) {
        do { try store.markSent(entry.seq) } catch { throw RefreshFailure(.transient, "\(error)") }
        logger.forSource(source.name).info("\(entry.operation.rawValue) of \(entry.recordID) \(reason)")
    }

    /// A 404 for a record the listing had: the listing pulled next decides (`settleNotFound`). The change
    /// stays queued meanwhile, and the record's later changes wait behind it.
    private func awaitListing(_ entry: OutboxRecord, source: SourceConfiguration, url: String) throws(RefreshFailure) {
        shared.memory.withLock { $0.notFoundAnswers[entry.seq] = url }
        try? store.noteFailure(entry.seq, status: 404, error: "HTTP 404 from \(url); checking the listing")
        logger.forSource(source.name).info("HTTP 404 from \(url) for \(entry.recordID), which the listing had; checking the listing")
    }

    /// After a pull, the changes that met a 404 (`awaitListing`): a record the listing no longer has was
    /// removed on the server (a removal is done; a change is a conflict for `ConflictPolicy`); a record it
    /// still has means the item URL is wrong, and the change is parked, never dropped, whatever the policy.
    func settleNotFound(_ source: SourceConfiguration) {
        guard !shared.memory.withLock({ $0.notFoundAnswers.isEmpty }), let entries = try? store.outbox(source: source.name) else { return }
        var changed = false
        for entry in entries {
            guard let url = shared.memory.withLock({ $0.notFoundAnswers.removeValue(forKey: entry.seq) }) else { continue }
            changed = true
            do {
                if try serverRecord(source: source.name, id: entry.recordID) != nil {
                    try parkMisdirected(entry, source: source, status: 404, url: url)
                } else if entry.operation == .delete {
                    try settled(entry, source: source, as: "already removed on the server (HTTP 404)")
                } else {
                    _ = try conflict(entry, source: source, remoteBody: nil, remoteVersion: nil, reason: "the server removed it")
                }
            } catch {
                logger.forSource(source.name).error("Failed to settle the change of \(entry.recordID) after HTTP 404, will retry: \(error)")
            }
        }
        if changed { republish(source.name) }
    }

    /// A 404 for a record the latest listing has: the item URL is wrong, not the record gone. Whatever
    /// the conflict policy, the change is parked (never dropped) with the URL it used named.
    private func parkMisdirected(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, url: String) throws(RefreshFailure) {
        // The template that produced the failing URL is never suggested again (ItemURL.alternative).
        let message = "HTTP \(status) from \(url), yet the server's listing has record \(entry.recordID): the item URL "
            + "\(source.itemURL.example) is likely wrong; set ItemURL= to the server's URL of one record"
            + (source.itemURL.alternative.map { " (perhaps ItemURL=\($0))" } ?? "") + ", then 'syncctl outbox --retry'"
        do { try parkEntry(entry, of: source.name, status: status, message: message) } catch { throw RefreshFailure(.transient, "\(error)") }
        logger.forSource(source.name).warning("parked the \(entry.operation.rawValue) of \(entry.recordID): \(message)")
    }

    /// The server's copy has no version syncd can read (`Remote.unreadable`): whether the change conflicts
    /// cannot be known, so it is parked with the reason, whatever `ConflictPolicy=` says (docs/local-changes.md).
    private func parkUnreadableVersion(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, reason: String) throws(RefreshFailure) {
        let message = "\(reason); check VersionField= and RecordEnvelope=, then 'syncctl outbox --retry \(entry.seq)'"
        do { try parkEntry(entry, of: source.name, status: status, message: message) } catch { throw RefreshFailure(.transient, "\(error)") }
        logger.forSource(source.name).warning("parked the \(entry.operation.rawValue) of \(entry.recordID): \(message)")
    }

    private func park(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, answer: [UInt8], what: String,
                      redaction: Redaction) throws(RefreshFailure) {
        let snippet = ErrorSnippet.text(answer, limit: 300, redaction: redaction)
        let message = "HTTP \(status) from \(what)" + (snippet.isEmpty ? "" : ": \(snippet)")
        do { try parkEntry(entry, of: source.name, status: status, message: message) } catch { throw RefreshFailure(.transient, "\(error)") }
        logger.forSource(source.name).warning("the server refused the \(entry.operation.rawValue) of \(entry.recordID), parked it: \(message); see 'syncctl outbox'")
    }

    /// After a pull: a sent change the listing shows is done; one it does not show yet stays as an overlay
    /// (a listing older than the push must not undo it) for up to three listings.
    func confirmSent(_ source: SourceConfiguration) {
        guard source.writable else { return }
        var changed = false
        do {
            for entry in try store.outbox(source: source.name) where entry.state == .sent {
                let present = try serverRecord(source: source.name, id: entry.recordID) != nil
                let confirmed = entry.operation == .delete ? !present : present
                logger.forSource(source.name).debug("\(entry.operation.rawValue) of \(entry.recordID) \(confirmed ? "confirmed" : "not yet shown") by the listing")
                if confirmed || entry.unconfirmed >= 2 {
                    if !confirmed {
                        logger.forSource(source.name).warning("the server's listing still does not reflect the \(entry.operation.rawValue) of \(entry.recordID) after three refreshes; showing the server's version")
                    }
                    try store.removeOutboxEntry(entry.seq)
                    // A removal taken leaves the record gone (logged removed); one the listing still shows brings it back.
                    if !confirmed && entry.operation == .delete { try store.logRecordShown(source: source.name, recordID: entry.recordID) }
                    changed = true
                } else {
                    try store.markUnconfirmed(entry.seq)
                }
            }
        } catch {
            logger.forSource(source.name).error("Failed to confirm pushed changes, will try at the next refresh: \(failureReason(error))")
        }
        if changed { republish(source.name) }
    }
}
