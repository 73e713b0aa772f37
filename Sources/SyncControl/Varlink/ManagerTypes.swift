/// Typed forms of the `io.syncd.Manager` reply shapes, so the daemon and `syncctl` agree
/// on field names and types (docs/control-api.md). Each converts to and from a `JSONObject`.

/// A reply of `Refresh`: progress (with `continues`) or the outcome.
public struct RefreshProgress: Sendable, Equatable {
    public var source: String?
    /// `syncing`, `idle`, … as in `SourceStatus.state`.
    public var state: String?
    public var pages: Int64?
    public var bytes: Int64?
    public var records: Int64?
    /// On the final reply of a waited refresh: `success` or `unchanged`; `accepted` without wait.
    public var result: String?
    public var error: String?

    /// Creates a progress report.
    public init(source: String? = nil, state: String? = nil, pages: Int64? = nil, bytes: Int64? = nil, records: Int64? = nil,
                result: String? = nil, error: String? = nil) {
        self.source = source
        self.state = state
        self.pages = pages
        self.bytes = bytes
        self.records = records
        self.result = result
        self.error = error
    }

    /// The reply parameters; absent fields are left out.
    public var json: JSONObject {
        var object = JSONObject()
        if let source { object["source"] = .string(source) }
        if let state { object["state"] = .string(state) }
        if let pages { object["pages"] = .integer(pages) }
        if let bytes { object["bytes"] = .integer(bytes) }
        if let records { object["records"] = .integer(records) }
        if let result { object["result"] = .string(result) }
        if let error { object["error"] = .string(error) }
        return object
    }

    /// Reads the reply parameters.
    public init(json: JSONObject) throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: "")
        source = try fields.optionalString("source")
        state = try fields.optionalString("state")
        pages = try fields.optionalInteger("pages")
        bytes = try fields.optionalInteger("bytes")
        records = try fields.optionalInteger("records")
        result = try fields.optionalString("result")
        error = try fields.optionalString("error")
    }
}

/// A reply of `Watch`.
public struct WatchEvent: Sendable, Equatable {
    public var source: String
    public var records: Int64
    public var pending: Int64
    public var conflicts: Int64
    public var savedAt: String?
    /// What happened (a `Kind`'s raw value; kept as text so a newer daemon's kinds still decode).
    public var event: String
    /// Why the source went stale (`stale` events only), as root and the control group see it.
    public var reason: String?
    /// `reason` for everyone else (no server text, no URL); never sent as such (`publicForm`).
    public var publicReason: String?
    /// The local change a `parked`, `discarded` or `conflict` event is about.
    public var outcome: Outcome?
    /// The source's current change sequence number (docs/control-api.md, "Changes"); nil from an older daemon.
    public var seq: Int64?
    /// `saved` and `local` events: the records changed and removed since the source's previous event (at most
    /// `ChangeFeed.eventListLimit` each); nil when `truncated` or for other events.
    public var changes: (changed: [String], removed: [String])?
    /// True when the event cannot name its records (too many, or the log no longer reaches the previous event).
    public var truncated = false

    public static func == (lhs: WatchEvent, rhs: WatchEvent) -> Bool {
        lhs.source == rhs.source && lhs.records == rhs.records && lhs.pending == rhs.pending && lhs.conflicts == rhs.conflicts
            && lhs.savedAt == rhs.savedAt && lhs.event == rhs.event && lhs.reason == rhs.reason && lhs.publicReason == rhs.publicReason
            && lhs.outcome == rhs.outcome && lhs.seq == rhs.seq && lhs.changes?.changed == rhs.changes?.changed
            && lhs.changes?.removed == rhs.changes?.removed && lhs.truncated == rhs.truncated
    }

    /// What became of one local change (`parked`, `discarded`, `conflict`).
    public struct Outcome: Sendable, Equatable {
        /// The record's ID.
        public var id: String
        /// The change's outbox sequence number (`syncctl outbox`, `syncctl outbox --restore`).
        public var outboxSeq: Int64
        /// The HTTP status that refused it, when one did.
        public var httpStatus: Int?
        /// Why, as root and the control group see it (it may quote the server's answer).
        public var message: String
        /// `message` for everyone else; never sent as such (`publicForm`).
        public var publicMessage: String?

        /// Creates an outcome.
        public init(id: String, outboxSeq: Int64, httpStatus: Int?, message: String, publicMessage: String? = nil) {
            self.id = id
            self.outboxSeq = outboxSeq
            self.httpStatus = httpStatus
            self.message = message
            self.publicMessage = publicMessage
        }
    }

    /// The event as a caller outside the control group receives it: the public words in place of the server's
    /// (docs/control-api.md, "Secrets").
    public var publicForm: WatchEvent {
        var event = self
        if let publicReason { event.reason = publicReason }
        if let publicMessage = outcome?.publicMessage { event.outcome?.message = publicMessage }
        return event
    }

    /// The events `Watch` sends, as its interface description lists them.
    public enum Kind: String, Sendable, CaseIterable {
        /// The source as it is when the watch starts: one per source, before any other event.
        case current
        /// A refresh rewrote the cache file (a new listing, or a push that settled local changes).
        case saved
        /// A local change was queued or settled (`Put`, `Delete`, `Resolve`, `RetryOutbox`, `DropOutbox`, `RestoreDiscarded`).
        case local
        /// `Logout` erased the source's cache file and state.
        case logout
        /// A refresh failed after the last one succeeded: the cached copy is served but may be out of date
        /// (`reason` says why). Once per stale period: the failures after it send nothing until `fresh`.
        case stale
        /// The first refresh that succeeded after `stale`: the cached copy is current again.
        case fresh
        /// The server refused a local change, or its outcome could not be settled: it waits in the outbox
        /// (`outcome` names it; `syncctl outbox` shows it in full).
        case parked
        /// `ConflictPolicy=` discarded a local change; `syncctl outbox --restore` can queue it again.
        case discarded
        /// `ConflictPolicy=manual`: a local change conflicts with the server's version; both are kept until
        /// `syncctl resolve`.
        case conflict
    }

    /// Creates an event.
    public init(source: String, records: Int64, pending: Int64, conflicts: Int64, savedAt: String?, event: String,
                reason: String? = nil) {
        self.source = source
        self.records = records
        self.pending = pending
        self.conflicts = conflicts
        self.savedAt = savedAt
        self.event = event
        self.reason = reason
    }

    /// The reply parameters (`reason` and the outcome's members only where the event has them).
    public var json: JSONObject {
        var object: JSONObject = [
            "source": .string(source), "records": .integer(records), "pending": .integer(pending),
            "conflicts": .integer(conflicts), "savedAt": .string(savedAt), "event": .string(event)]
        if let reason { object["reason"] = .string(reason) }
        if let seq { object["seq"] = .integer(seq) }
        if let changes {
            object["changed"] = .array(changes.changed.map { .string($0) })
            object["removed"] = .array(changes.removed.map { .string($0) })
        }
        if truncated { object["truncated"] = true }
        if let outcome {
            object["id"] = .string(outcome.id)
            object["outboxSeq"] = .integer(outcome.outboxSeq)
            object["httpStatus"] = outcome.httpStatus.map { .int($0) } ?? .null
            object["message"] = .string(outcome.message)
        }
        return object
    }

    /// Reads the reply parameters.
    public init(json: JSONObject) throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: "")
        source = try fields.string("source")
        records = try fields.integer("records")
        pending = try fields.integer("pending")
        conflicts = try fields.integer("conflicts")
        savedAt = try fields.optionalString("savedAt")
        event = try fields.string("event")
        reason = try fields.optionalString("reason")
        seq = try fields.optionalInteger("seq")
        if let changed = try fields.optionalStrings("changed") {
            changes = (changed, try fields.optionalStrings("removed") ?? [])
        }
        truncated = try fields.optionalBool("truncated") ?? false
        if let id = try fields.optionalString("id") {
            outcome = Outcome(id: id, outboxSeq: try fields.integer("outboxSeq"),
                              httpStatus: try fields.optionalInteger("httpStatus").map { Int($0) }, message: try fields.string("message"))
        }
    }
}

/// `OutboxEntry`.
public struct OutboxEntry: Sendable, Equatable {
    public var seq: Int64
    public var source: String
    public var id: String
    /// `create`, `update` or `delete`.
    public var operation: String
    public var createdAt: String
    /// `queued` or `parked`.
    public var state: String
    public var attempts: Int64
    public var lastStatus: Int64?
    public var lastError: String?
    /// A parked change a newer change of its record superseded: history, never pushed (sent only when true).
    public var superseded: Bool

    /// Creates an entry.
    public init(seq: Int64, source: String, id: String, operation: String, createdAt: String, state: String,
                attempts: Int64, lastStatus: Int64?, lastError: String?, superseded: Bool = false) {
        self.seq = seq
        self.source = source
        self.id = id
        self.operation = operation
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.superseded = superseded
    }

    /// The object.
    public var json: JSONObject {
        var object: JSONObject = [
            "seq": .integer(seq), "source": .string(source), "id": .string(id), "operation": .string(operation),
            "createdAt": .string(createdAt), "state": .string(state), "attempts": .integer(attempts),
            "lastStatus": .int(lastStatus), "lastError": .string(lastError)]
        if superseded { object["superseded"] = .bool(true) }
        return object
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "entry") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        seq = try fields.integer("seq")
        source = try fields.string("source")
        id = try fields.string("id")
        operation = try fields.string("operation")
        createdAt = try fields.string("createdAt")
        state = try fields.string("state")
        attempts = try fields.integer("attempts")
        lastStatus = try fields.optionalInteger("lastStatus")
        lastError = try fields.optionalString("lastError")
        superseded = try fields.optionalBool("superseded") ?? false
    }
}

/// `DiscardedChange`: a local change a `ConflictPolicy=` discarded, kept for `DiscardedRetentionSec=`.
public struct DiscardedEntry: Sendable, Equatable {
    public var seq: Int64
    public var source: String
    public var id: String
    /// `create`, `update` or `delete`.
    public var operation: String
    /// The record as the change had it; nil for a removal.
    public var record: JSONObject?
    public var baseVersion: String?
    public var createdAt: String
    public var discardedAt: String
    /// The conflict and the policy that settled it.
    public var reason: String
    /// The server's record when the change was discarded; nil when not read or removed.
    public var server: JSONObject?
    public var serverVersion: String?

    /// Creates an entry.
    public init(seq: Int64, source: String, id: String, operation: String, record: JSONObject?, baseVersion: String?,
                createdAt: String, discardedAt: String, reason: String, server: JSONObject?, serverVersion: String?) {
        self.seq = seq
        self.source = source
        self.id = id
        self.operation = operation
        self.record = record
        self.baseVersion = baseVersion
        self.createdAt = createdAt
        self.discardedAt = discardedAt
        self.reason = reason
        self.server = server
        self.serverVersion = serverVersion
    }

    /// The object.
    public var json: JSONObject {
        ["seq": .integer(seq), "source": .string(source), "id": .string(id), "operation": .string(operation),
         "record": record.map(JSONValue.object) ?? .null, "baseVersion": .string(baseVersion), "createdAt": .string(createdAt),
         "discardedAt": .string(discardedAt), "reason": .string(reason), "server": server.map(JSONValue.object) ?? .null,
         "serverVersion": .string(serverVersion)]
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "discarded") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        seq = try fields.integer("seq")
        source = try fields.string("source")
        id = try fields.string("id")
        operation = try fields.string("operation")
        record = try fields.optionalObject("record")
        baseVersion = try fields.optionalString("baseVersion")
        createdAt = try fields.string("createdAt")
        discardedAt = try fields.string("discardedAt")
        reason = try fields.string("reason")
        server = try fields.optionalObject("server")
        serverVersion = try fields.optionalString("serverVersion")
    }
}

/// `Conflict`.
public struct ConflictEntry: Sendable, Equatable {
    public var source: String
    public var id: String
    public var local: JSONObject?
    public var remote: JSONObject?
    public var localVersion: String?
    public var remoteVersion: String?
    public var detectedAt: String

    /// Creates a conflict.
    public init(source: String, id: String, local: JSONObject?, remote: JSONObject?, localVersion: String?,
                remoteVersion: String?, detectedAt: String) {
        self.source = source
        self.id = id
        self.local = local
        self.remote = remote
        self.localVersion = localVersion
        self.remoteVersion = remoteVersion
        self.detectedAt = detectedAt
    }

    /// The object.
    public var json: JSONObject {
        ["source": .string(source), "id": .string(id), "local": local.map(JSONValue.object) ?? .null,
         "remote": remote.map(JSONValue.object) ?? .null, "localVersion": .string(localVersion),
         "remoteVersion": .string(remoteVersion), "detectedAt": .string(detectedAt)]
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "conflict") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        source = try fields.string("source")
        id = try fields.string("id")
        local = try fields.optionalObject("local")
        remote = try fields.optionalObject("remote")
        localVersion = try fields.optionalString("localVersion")
        remoteVersion = try fields.optionalString("remoteVersion")
        detectedAt = try fields.string("detectedAt")
    }
}

/// The reply of `Changes` (docs/control-api.md, "Changes").
extension ChangePage {
    /// The reply parameters.
    public var json: JSONObject {
        ["changed": .array(changed.map { .string($0) }), "removed": .array(removed.map { .string($0) }),
         "next": next.map { .integer($0) } ?? .null, "seq": .integer(seq)]
    }

    /// Reads the reply parameters.
    public init(json: JSONObject) throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: "")
        self.init(changed: try fields.strings("changed"), removed: try fields.strings("removed"),
                  next: try fields.optionalInteger("next"), seq: try fields.integer("seq"))
    }
}
