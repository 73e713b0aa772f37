import SyncControl
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
        case .integer(let number)?:
            (id, isInteger) = (String(number), true)
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
        // A new change of a record supersedes its parked one: that stays in the outbox, marked, for the record
        // (`syncctl outbox`), and no longer holds the record's changes back.
        let parked = ((try? store.outboxEntries(source: source.name, recordID: id)) ?? []).filter { $0.state == .parked && !$0.isSuperseded }
        for entry in parked {
            do {
                try store.noteFailure(entry.seq, status: entry.lastStatus, error: OutboxRecord.supersededMark + (entry.lastError ?? ""))
            } catch {
                throw .storageFailure(reason: "Failed to mark the parked change \(entry.seq) superseded, nothing was queued: \(error)")
            }
            logger.forSource(source.name).notice("the parked \(entry.operation.rawValue) of \(id) (outbox \(entry.seq)) is superseded by a new change")
        }
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

    /// Rewrites the cache file after a local change; a failure is logged and retried at the next refresh.
    func republish(_ name: String) {
        shared.withSourceLock(name) {
            do {
                try store.setSnapshotDirty(source: name, true)
                try publish(name)
            } catch {
                logger.forSource(name).error("\(error)")
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

    /// `syncctl outbox --drop SEQ`: a person gives up a change; the cache file shows the server's version again.
    public func dropOutboxEntry(_ seq: Int64) throws(ManagerError) -> String {
        guard let entry = try reading("the outbox", { try store.outbox(source: nil) }).first(where: { $0.seq == seq }) else {
            throw .noSuchOutboxEntry(seq: seq)
        }
        // Not while a listing of its source is being committed. A request already out for it is not recalled:
        // the server may still take the change, and the listing then shows it.
        try shared.withSourceLock(entry.source) { () throws(ManagerError) in
            do {
                try store.removeOutboxEntry(seq)
                if entry.state == .conflict { try store.removeConflict(source: entry.source, recordID: entry.recordID) }
            } catch {
                throw .storageFailure(reason: "\(error)")
            }
        }
        logger.forSource(entry.source).notice("dropped the local \(entry.operation.rawValue) of \(entry.recordID) on request")
        republish(entry.source)
        return entry.source
    }

    // MARK: Pushing

    /// Pushes the queued changes of a writable source, oldest first, before its listing is pulled.
    /// Changes to one record go out in order: a record with a parked, conflicting or failing change waits.
    /// One record's trouble never holds up the others: a 4xx parks that change, and a 500 or 408 leaves it
    /// queued while the other records go on; the first such failure is returned, so the caller pulls and
    /// then reports the refresh as failed (retried with backoff). What concerns the whole server stops the
    /// push and is thrown: a network error, a timeout, a 429, a 502/503/504, a `Retry-After`, three
    /// records in a row failing, a storage failure, cancellation.
    ///
    /// Holds no lock while a request is out: a local change of the same source made meanwhile is never merged
    /// into a change being sent (`pushOne`, `StateStore.enqueue`), so `put` and `delete` never wait for the server.
    func push(_ source: SourceConfiguration, token: String?) throws(RefreshFailure) -> RefreshFailure? {
        guard source.writable else { return nil }
        let entries: [OutboxRecord]
        do { entries = try store.outbox(source: source.name) } catch { throw RefreshFailure(.transient, "\(error)") }
        var blocked: Set<String> = []
        var changed = false
        var firstFailure: RefreshFailure?
        var failuresInARow = 0
        defer {
            if changed {
                republish(source.name)
                shared.reportState(of: source.name, from: store)
            }
        }
        for entry in entries {
            guard entry.state == .queued else {
                if (entry.state == .parked && !entry.isSuperseded) || entry.state == .conflict { blocked.insert(entry.recordID) }
                continue
            }
            guard !blocked.contains(entry.recordID) else { continue }
            if entry.answerWasLost && !shared.memory.withLock({ $0.checkedCreates.contains(entry.seq) }) {
                // Its answer was lost (a timeout, a closed connection, a crash): the listing pulled next decides
                // whether it is on the server (settleLostCreates); it is never POSTed again blindly.
                blocked.insert(entry.recordID)
                continue
            }
            changed = true
            do {
                try pushOne(entry, source: source, token: token)
                if shared.memory.withLock({ $0.notFoundAnswers[entry.seq] }) != nil { blocked.insert(entry.recordID) }
                failuresInARow = 0
            } catch where error.leftCreateUnknown {
                // The server may be slow rather than down, and may have the record: no more requests in this push,
                // but the listing is pulled to look for it (settleLostCreates).
                blocked.insert(entry.recordID)
                logger.forSource(source.name).warning("\(error.message); the push stops, the listing is pulled to look for the record")
                return firstFailure ?? error
            } catch where concernsOnlyItsRecord(error) {
                blocked.insert(entry.recordID)
                if firstFailure == nil { firstFailure = error }
                failuresInARow += 1
                // Several records in a row failing alike is the server, not the records: stop asking.
                guard failuresInARow < SyncEngine.pushFailuresBeforeStopping else {
                    logger.forSource(source.name).warning("\(error.message); \(failuresInARow) changes in a row failed, stopping the push")
                    throw error
                }
                logger.forSource(source.name).warning("\(error.message); the other records' changes go on")
            }
        }
        return firstFailure
    }

    /// Consecutive per-record failures after which the push stops as if the server were down.
    static let pushFailuresBeforeStopping = 3

    /// A transient failure that one record's request met (HTTP 500, 501, 505+ or 408), as opposed to one
    /// that concerns the whole server or the daemon: no answer, 429, 502/503/504 (the server or its gateway
    /// is down or overloaded), any answer with `Retry-After`, storage, cancellation.
    private func concernsOnlyItsRecord(_ failure: RefreshFailure) -> Bool {
        guard failure.kind == .transient, let status = failure.status, failure.retryAfter == nil else { return false }
        return status == 408 || ((500...599).contains(status) && !(502...504).contains(status))
    }

    /// Pushes one change. `force`: the policy chose the local version after the server refused it with
    /// 409 or 412, so the version check and `If-Match` are left out and a second refusal parks the change.
    ///
    /// The attempt is counted first (`markAttempt`), which also reads the change as it stands: a local change
    /// made from then on becomes a new entry after this one instead of being merged into it, so this push
    /// needs no lock while its requests are out, and a `put` never waits for one.
    private func pushOne(_ queued: OutboxRecord, source: SourceConfiguration, token: String?, force: Bool = false) throws(RefreshFailure) {
        let claimed: OutboxRecord?
        do { claimed = try store.markAttempt(queued.seq, at: attemptTime()) } catch { throw RefreshFailure(.transient, "\(error)") }
        // Gone (a create removed again before it was sent) or no longer queued: nothing to send.
        guard var entry = claimed else { return }
        let itemURL = source.itemURL.url(for: entry.recordID)
        // Before an update or removal, see whether the server moved on from the version the change was made against;
        // the record's ETag, if the server gives one, then guards the push itself (If-Match; a 412 is a conflict).
        var ifMatch: String?
        if !force, entry.operation != .create, source.versionField != nil, source.conflictPolicy != .clientWins {
            let remote: Remote
            do {
                remote = try fetchRemote(itemURL, source: source, token: token)
            } catch {
                try? store.noteFailure(entry.seq, status: error.status, error: error.message)
                throw error
            }
            switch remote {
            case .missing where try listingHas(entry.recordID, of: source):
                return try awaitListing(entry, source: source, url: itemURL)
            case .missing where entry.operation == .delete:
                return try settled(entry, source: source, as: "already removed on the server")
            case .missing:
                if try conflict(entry, source: source, remoteBody: nil, remoteVersion: nil, reason: "the server removed it") { return }
            case .found(let body, let version?, let etag) where entry.baseVersion == nil:
                // Made against a record with no server version: one syncd created, whose POST was still out (or
                // its answer lost) when the change was made. The version its create got is the base, not a
                // conflict: pushed against it, guarded by the record's ETag.
                if entry.operation == .update { entry = try rebase(entry, source: source, remoteBody: body, remoteVersion: version) }
                ifMatch = etag
            case .found(let body, let version, _) where version != entry.baseVersion:
                if try conflict(entry, source: source, remoteBody: body, remoteVersion: version,
                                reason: "the server's version is \(version ?? "none"), the change was made against \(entry.baseVersion ?? "none")") { return }
                // The policy keeps the local version: pushed against the server's.
                entry = try rebase(entry, source: source, remoteBody: body, remoteVersion: version)
            case .found(_, _, let etag):
                ifMatch = etag
            }
        }
        if entry.operation == .create { _ = shared.memory.withLock { $0.checkedCreates.remove(entry.seq) } }
        var request = HTTPRequest(url: entry.operation == .create ? source.url : itemURL)
        request.method = entry.operation == .create ? "POST" : entry.operation == .update ? "PUT" : "DELETE"
        request.timeout = source.timeout
        request.maxBytes = 1 << 20
        request.bearerToken = token
        request.origins = source.originPolicy
        request.body = entry.operation == .delete ? nil : entry.body
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
            try? store.noteFailure(entry.seq, status: nil, error: (error.requestNeverSent ? OutboxRecord.notSentMark : "") + "\(error)")
            var failure = RefreshFailure(.transient, "pushing \(entry.operation.rawValue) of \(entry.recordID): \(error)",
                                         publicMessage: "pushing \(entry.operation.rawValue) of \(entry.recordID): \(error.publicDescription)")
            failure.leftCreateUnknown = entry.operation == .create && !error.requestNeverSent
            throw failure
        }
        // The redirect's target and the body are the server's words: redacted before any message quotes them.
        let redaction = Redaction(source: source, token: token)
        let what = redaction.redacting("\(request.method) \(request.url)" + (head.redirects.isEmpty ? "" : " (redirected to \(head.redirects.last ?? ""))"))
        // Callers outside ControlGroup= are not shown where the server redirected to (docs/control-api.md, "Secrets").
        let publicWhat = redaction.redacting("\(request.method) \(request.url)" + (head.redirects.isEmpty ? "" : " (after a redirect)"))
        // A 404 for a record the listing has is settled by the listing pulled next (awaitListing).
        let listed = head.status == 404 && entry.operation != .create ? try listingHas(entry.recordID, of: source) : false
        switch head.status {
        case 200..<300:
            var newID: String?
            var newIDIsInteger = false
            if entry.operation == .create, case .object(let object)? = try? JSONValue(parsing: answer) {
                switch object[source.idField] {
                case .string(let id)?: newID = id
                case .integer(let id)?: (newID, newIDIsInteger) = (String(id), true)
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
            logger.forSource(source.name).info("pushed \(entry.operation.rawValue) of \(newID ?? entry.recordID) (HTTP \(head.status))")
        case 303:
            // RFC 9110 §15.4.4: the answer is elsewhere, to be fetched with GET; the write itself was not taken.
            let message = "HTTP 303 See Other from \(what) to \(redaction.redacting(head.header("location") ?? "nowhere")): the server did not take the "
                + "\(request.method); check URL= and ItemURL="
            do { try store.park(entry.seq, status: 303, error: message) } catch { throw RefreshFailure(.transient, "\(error)") }
            logger.forSource(source.name).warning("\(message); parked the \(entry.operation.rawValue) of \(entry.recordID), see 'syncctl outbox'")
        case 404 where listed:
            try awaitListing(entry, source: source, url: itemURL)
        case 404 where entry.operation == .delete:
            try settled(entry, source: source, as: "already removed on the server (HTTP 404)")
        case 409 where !force, 412 where !force:
            let remote = try? fetchRemote(itemURL, source: source, token: token)
            var body: [UInt8]?, version: String?
            if case .found(let b, let v, _)? = remote { (body, version) = (b, v) }
            if try conflict(entry, source: source, remoteBody: body, remoteVersion: version,
                            reason: "HTTP \(head.status) from \(what)", status: head.status) { return }
            // The policy keeps the local version: push it once more, unguarded, against the server's version.
            if remote != nil { _ = try rebase(entry, source: source, remoteBody: body, remoteVersion: version) }
            try pushOne(entry, source: source, token: token, force: true)
        case 408, 429, 500...599:
            // The server's own words, as for a parked 4xx: a 500's body often says what broke.
            let snippet = ErrorSnippet.text(answer, limit: 300, redaction: redaction)
            let summary = "HTTP \(head.status) from \(what)"
            try? store.noteFailure(entry.seq, status: head.status, error: summary + (snippet.isEmpty ? "" : ": \(snippet)"))
            throw RefreshFailure(.transient, "pushing \(entry.operation.rawValue) of \(entry.recordID): \(summary)", excerpt: snippet,
                                 publicSummary: publicWhat == what ? nil
                                     : "pushing \(entry.operation.rawValue) of \(entry.recordID): HTTP \(head.status) from \(publicWhat)",
                                 status: head.status, retryAfter: head.header("retry-after"))
        default:
            try park(entry, source: source, status: head.status, answer: answer, what: what, redaction: redaction)
        }
    }

    /// The server's record: its JSON, its `VersionField` value and its `ETag`.
    private enum Remote { case found([UInt8], String?, String?), missing }

    /// `GET URL/ID`: the server's current record and its `VersionField` value.
    private func fetchRemote(_ url: String, source: SourceConfiguration, token: String?) throws(RefreshFailure) -> Remote {
        var request = HTTPRequest(url: url)
        request.origins = source.originPolicy
        request.timeout = source.timeout
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
        switch head.status {
        case 200..<300:
            var version: String?
            if let field = source.versionField, case .object(let object)? = try? JSONValue(parsing: body) {
                switch object[field] {
                case .string(let text)?: version = text
                case .integer(let number)?: version = String(number)
                case .number(let number)?: version = "\(number)"
                default: break
                }
            }
            return .found(body, version, head.header("etag"))
        case 404, 410:
            return .missing
        case 408, 429, 500...599:
            throw RefreshFailure(.transient, "HTTP \(head.status) checking \(url)", status: head.status, retryAfter: head.header("retry-after"))
        default:
            throw RefreshFailure(.transient, "HTTP \(head.status) checking \(url)", status: head.status)
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
        let message = "HTTP \(status) from \(url), yet the server's listing has record \(entry.recordID): the item URL is likely wrong; "
            + "set ItemURL= (e.g. ItemURL=\(source.itemURL.example)) to the server's URL of one record, then 'syncctl outbox --retry'"
        do { try store.park(entry.seq, status: status, error: message) } catch { throw RefreshFailure(.transient, "\(error)") }
        logger.forSource(source.name).warning("parked the \(entry.operation.rawValue) of \(entry.recordID): \(message)")
    }

    private func park(_ entry: OutboxRecord, source: SourceConfiguration, status: Int, answer: [UInt8], what: String,
                      redaction: Redaction) throws(RefreshFailure) {
        let snippet = ErrorSnippet.text(answer, limit: 300, redaction: redaction)
        let message = "HTTP \(status) from \(what)" + (snippet.isEmpty ? "" : ": \(snippet)")
        do { try store.park(entry.seq, status: status, error: message) } catch { throw RefreshFailure(.transient, "\(error)") }
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
