/// Typed forms of the `io.syncd.Manager` reply shapes, so the daemon and `syncctl` agree
/// on field names and types (docs/control-api.md). Each converts to and from a `JSONObject`.

/// A reply field was missing or of the wrong type.
public struct ReplyShapeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field, e.g. `sources[0].state`.
    public let field: String
    public var description: String { "unexpected reply from syncd: field '\(field)' missing or of the wrong type" }
}

/// `DaemonStatus`.
public struct DaemonStatus: Sendable, Equatable {
    public var version: String
    public var account: String
    public var online: Bool
    public var links: String
    public var reachable: Bool?
    public var uptimeSec: Int64
    /// Why the last reload was rejected (`FILE:LINE: message`); nil when the last reload succeeded or none ran.
    public var reloadRejected: String?

    /// Creates a status.
    public init(version: String, account: String, online: Bool, links: String, reachable: Bool?, uptimeSec: Int64,
                reloadRejected: String? = nil) {
        self.version = version
        self.account = account
        self.online = online
        self.links = links
        self.reachable = reachable
        self.uptimeSec = uptimeSec
        self.reloadRejected = reloadRejected
    }

    /// The object, fields in docs/control-api.md order.
    public var json: JSONObject {
        ["version": .string(version), "account": .string(account), "online": .bool(online), "links": .string(links),
         "reachable": .bool(reachable), "uptimeSec": .integer(uptimeSec), "reloadRejected": .string(reloadRejected)]
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "daemon") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        version = try fields.string("version")
        account = try fields.string("account")
        online = try fields.bool("online")
        links = try fields.string("links")
        reachable = try fields.optionalBool("reachable")
        uptimeSec = try fields.integer("uptimeSec")
        // Absent from daemons older than the field.
        reloadRejected = try fields.optionalString("reloadRejected")
    }
}

/// `SourceStatus`.
public struct SourceStatus: Sendable, Equatable {
    public var name: String
    public var url: String
    /// `idle`, `syncing`, `backoff`, `offline` or `error`.
    public var state: String
    public var records: Int64
    public var pending: Int64
    /// Records with a change the server refused, waiting for `syncctl outbox --retry/--drop`.
    public var parked: Int64
    public var conflicts: Int64
    /// Warnings of the latest listing that did not fail it, e.g. a next page `Pagination=` does not follow.
    public var warnings: [String]
    public var lastSuccess: String?
    public var lastAttempt: String?
    public var lastError: String?
    public var stale: Bool
    public var attempt: Int64
    public var nextAttempt: String?

    /// Creates a status.
    public init(name: String, url: String, state: String, records: Int64, pending: Int64, parked: Int64 = 0, conflicts: Int64,
                warnings: [String] = [], lastSuccess: String?, lastAttempt: String?, lastError: String?, stale: Bool, attempt: Int64, nextAttempt: String?) {
        self.name = name
        self.url = url
        self.state = state
        self.records = records
        self.pending = pending
        self.parked = parked
        self.conflicts = conflicts
        self.warnings = warnings
        self.lastSuccess = lastSuccess
        self.lastAttempt = lastAttempt
        self.lastError = lastError
        self.stale = stale
        self.attempt = attempt
        self.nextAttempt = nextAttempt
    }

    /// The object, fields in docs/control-api.md order.
    public var json: JSONObject {
        ["name": .string(name), "url": .string(url), "state": .string(state), "records": .integer(records),
         "pending": .integer(pending), "parked": .integer(parked), "conflicts": .integer(conflicts),
         "warnings": .array(warnings.map { .string($0) }), "lastSuccess": .string(lastSuccess),
         "lastAttempt": .string(lastAttempt), "lastError": .string(lastError), "stale": .bool(stale),
         "attempt": .integer(attempt), "nextAttempt": .string(nextAttempt)]
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "source") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        name = try fields.string("name")
        url = try fields.string("url")
        state = try fields.string("state")
        records = try fields.integer("records")
        pending = try fields.integer("pending")
        // Absent from daemons before parked changes were counted apart.
        parked = json["parked"] == nil ? 0 : try fields.integer("parked")
        conflicts = try fields.integer("conflicts")
        warnings = json["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        lastSuccess = try fields.optionalString("lastSuccess")
        lastAttempt = try fields.optionalString("lastAttempt")
        lastError = try fields.optionalString("lastError")
        stale = try fields.bool("stale")
        attempt = try fields.integer("attempt")
        nextAttempt = try fields.optionalString("nextAttempt")
    }
}

/// `FailedSource`: a `.source` file the daemon skipped because of a configuration error.
public struct FailedSourceStatus: Sendable, Equatable {
    /// `Name=`, or the file stem when the name could not be read.
    public var name: String
    /// The `.source` file.
    public var file: String
    /// The first problem, `FILE:LINE: message`.
    public var problem: String

    /// Creates a failed source.
    public init(name: String, file: String, problem: String) {
        self.name = name
        self.file = file
        self.problem = problem
    }

    /// The object.
    public var json: JSONObject {
        ["name": .string(name), "file": .string(file), "problem": .string(problem)]
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "failed") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        name = try fields.string("name")
        file = try fields.string("file")
        problem = try fields.string("problem")
    }
}

/// The reply of `GetStatus` (and `syncctl status --json`).
public struct ManagerStatus: Sendable, Equatable {
    public var daemon: DaemonStatus
    public var sources: [SourceStatus]
    /// Sources left out because their `.source` file has an error.
    public var failed: [FailedSourceStatus]

    /// Creates a status.
    public init(daemon: DaemonStatus, sources: [SourceStatus], failed: [FailedSourceStatus] = []) {
        self.daemon = daemon
        self.sources = sources
        self.failed = failed
    }

    /// The reply parameters.
    public var json: JSONObject {
        ["daemon": .object(daemon.json), "sources": .array(sources.map { .object($0.json) }),
         "failed": .array(failed.map { .object($0.json) })]
    }

    /// Reads the reply parameters.
    public init(json: JSONObject) throws(ReplyShapeError) {
        guard let daemonObject = json["daemon"]?.objectValue else { throw ReplyShapeError(field: "daemon") }
        guard let sourceValues = json["sources"]?.arrayValue else { throw ReplyShapeError(field: "sources") }
        daemon = try DaemonStatus(json: daemonObject)
        var sources: [SourceStatus] = []
        for (index, value) in sourceValues.enumerated() {
            guard let object = value.objectValue else { throw ReplyShapeError(field: "sources[\(index)]") }
            sources.append(try SourceStatus(json: object, path: "sources[\(index)]"))
        }
        self.sources = sources
        // Absent from daemons older than the field.
        var failed: [FailedSourceStatus] = []
        for (index, value) in (json["failed"]?.arrayValue ?? []).enumerated() {
            guard let object = value.objectValue else { throw ReplyShapeError(field: "failed[\(index)]") }
            failed.append(try FailedSourceStatus(json: object, path: "failed[\(index)]"))
        }
        self.failed = failed
    }
}

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

    /// The events `Watch` sends, as its interface description lists them.
    public enum Kind: String, Sendable, CaseIterable {
        /// The source as it is when the watch starts: one per source, before any other event.
        case current
        /// A refresh rewrote the cache file (a new listing, or a push that settled local changes).
        case saved
        /// A local change was queued or settled (`Put`, `Delete`, `Resolve`, `RetryOutbox`, `DropOutbox`).
        case local
        /// `Logout` erased the source's cache file and state.
        case logout
    }

    /// Creates an event.
    public init(source: String, records: Int64, pending: Int64, conflicts: Int64, savedAt: String?, event: String) {
        self.source = source
        self.records = records
        self.pending = pending
        self.conflicts = conflicts
        self.savedAt = savedAt
        self.event = event
    }

    /// The reply parameters.
    public var json: JSONObject {
        ["source": .string(source), "records": .integer(records), "pending": .integer(pending),
         "conflicts": .integer(conflicts), "savedAt": .string(savedAt), "event": .string(event)]
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

    /// Creates an entry.
    public init(seq: Int64, source: String, id: String, operation: String, createdAt: String, state: String,
                attempts: Int64, lastStatus: Int64?, lastError: String?) {
        self.seq = seq
        self.source = source
        self.id = id
        self.operation = operation
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
    }

    /// The object.
    public var json: JSONObject {
        ["seq": .integer(seq), "source": .string(source), "id": .string(id), "operation": .string(operation),
         "createdAt": .string(createdAt), "state": .string(state), "attempts": .integer(attempts),
         "lastStatus": .int(lastStatus), "lastError": .string(lastError)]
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

/// Reads typed fields of a reply object, naming the field on failure.
struct FieldReader {
    let object: JSONObject
    let path: String

    init(object: JSONObject, path: String) {
        self.object = object
        self.path = path
    }

    private func failure(_ name: String) -> ReplyShapeError {
        ReplyShapeError(field: path.isEmpty ? name : path + "." + name)
    }

    private func present(_ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    func string(_ name: String) throws(ReplyShapeError) -> String {
        guard let value = present(name)?.stringValue else { throw failure(name) }
        return value
    }

    func optionalString(_ name: String) throws(ReplyShapeError) -> String? {
        guard let value = present(name) else { return nil }
        guard let text = value.stringValue else { throw failure(name) }
        return text
    }

    func bool(_ name: String) throws(ReplyShapeError) -> Bool {
        guard let value = present(name)?.boolValue else { throw failure(name) }
        return value
    }

    func optionalBool(_ name: String) throws(ReplyShapeError) -> Bool? {
        guard let value = present(name) else { return nil }
        guard let flag = value.boolValue else { throw failure(name) }
        return flag
    }

    func integer(_ name: String) throws(ReplyShapeError) -> Int64 {
        guard let value = present(name)?.integerValue else { throw failure(name) }
        return value
    }

    func optionalInteger(_ name: String) throws(ReplyShapeError) -> Int64? {
        guard let value = present(name) else { return nil }
        guard let number = value.integerValue else { throw failure(name) }
        return number
    }

    func optionalObject(_ name: String) throws(ReplyShapeError) -> JSONObject? {
        guard let value = present(name) else { return nil }
        guard let object = value.objectValue else { throw failure(name) }
        return object
    }
}
