/// The reply shapes of `io.syncd.Manager` that the daemon fills and `syncctl` reads
/// (docs/control-api.md): one type per concept, with its JSON encoding here and nowhere else.
/// They live in SyncCore (no I/O) so the daemon, the control server and `syncctl` share them.

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
    /// What the source is doing; its raw value is the wire text.
    public var state: SourceStateName
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
    /// The source's cache file; nil from daemons older than the field.
    public var cacheFile: String?
    /// How the source is configured (`Writable=`, `Pagination=`, `ConflictPolicy=`); nil from daemons older than it.
    public var mode: SourceMode?
    /// The source's change sequence number (docs/control-api.md, "Changes"); nil from daemons older than it.
    public var seq: Int64?
    /// `Delta=` of a source that asks for changes only (syncd.conf(5), "Incremental pull"); nil under `Delta=none`
    /// and from daemons older than it.
    public var delta: DeltaStatus?
    /// An interrupted full listing the next refresh resumes (syncd.conf(5), "RESUMING A FIRST SYNC"); nil when none.
    public var resume: ResumeStatus?

    /// Creates a status.
    public init(name: String, url: String, state: SourceStateName, records: Int64, pending: Int64, parked: Int64 = 0, conflicts: Int64,
                warnings: [String] = [], lastSuccess: String?, lastAttempt: String?, lastError: String?, stale: Bool, attempt: Int64, nextAttempt: String?,
                cacheFile: String? = nil, mode: SourceMode? = nil) {
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
        self.cacheFile = cacheFile
        self.mode = mode
    }

    /// The object, fields in docs/control-api.md order; `cacheFile` and the mode's fields only when known.
    public var json: JSONObject {
        var object: JSONObject = [
            "name": .string(name), "url": .string(url), "state": .string(state.rawValue), "records": .integer(records),
            "pending": .integer(pending), "parked": .integer(parked), "conflicts": .integer(conflicts),
            "warnings": .array(warnings.map { .string($0) }), "lastSuccess": .string(lastSuccess),
            "lastAttempt": .string(lastAttempt), "lastError": .string(lastError), "stale": .bool(stale),
            "attempt": .integer(attempt), "nextAttempt": .string(nextAttempt)]
        if let cacheFile { object["cacheFile"] = .string(cacheFile) }
        if let seq { object["seq"] = .integer(seq) }
        if let mode {
            object["writable"] = .bool(mode.writable)
            object["pagination"] = .string(mode.pagination)
            object["conflictPolicy"] = .string(mode.conflictPolicy)
        }
        if let delta {
            object["delta"] = .string(delta.mode)
            object["lastDelta"] = .string(delta.lastDelta)
            object["lastFullListing"] = .string(delta.lastFullListing)
        }
        if let resume {
            object["resumeAt"] = .integer(resume.records)
            object["resumePage"] = .integer(resume.pages)
            object["resumeBegan"] = .string(resume.began)
        }
        return object
    }

    /// Reads the object.
    public init(json: JSONObject, path: String = "source") throws(ReplyShapeError) {
        let fields = FieldReader(object: json, path: path)
        name = try fields.string("name")
        url = try fields.string("url")
        guard let state = SourceStateName(rawValue: try fields.string("state")) else {
            throw ReplyShapeError(field: path + ".state")
        }
        self.state = state
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
        // Absent from daemons older than the fields.
        cacheFile = try fields.optionalString("cacheFile")
        seq = try fields.optionalInteger("seq")
        if json["writable"] == nil {
            mode = nil
        } else {
            mode = SourceMode(writable: try fields.bool("writable"), pagination: try fields.string("pagination"),
                              conflictPolicy: try fields.optionalString("conflictPolicy"))
        }
        delta = try fields.optionalString("delta").map { mode throws(ReplyShapeError) in
            DeltaStatus(mode: mode, lastDelta: try fields.optionalString("lastDelta"), lastFullListing: try fields.optionalString("lastFullListing"))
        }
        resume = try fields.optionalInteger("resumeAt").map { records throws(ReplyShapeError) in
            ResumeStatus(records: records, pages: try fields.optionalInteger("resumePage") ?? 0, began: try fields.optionalString("resumeBegan") ?? "")
        }
    }
}

/// An interrupted full listing whose pages are staged: the next refresh replays them and asks only for the rest.
public struct ResumeStatus: Sendable, Equatable {
    /// The records staged: the listing resumes after them.
    public var records: Int64
    /// The pages received before it stopped.
    public var pages: Int64
    /// When the listing began (RFC 3339).
    public var began: String

    /// Creates a status.
    public init(records: Int64, pages: Int64, began: String) {
        self.records = records
        self.pages = pages
        self.began = began
    }
}

/// Where a source's incremental pull stands (syncd.conf(5), "Incremental pull").
public struct DeltaStatus: Sendable, Equatable {
    /// `Delta=`: "watermark" or "token".
    public var mode: String
    /// When the last delta was applied (RFC 3339); nil when none was since the last full listing.
    public var lastDelta: String?
    /// When the full listing the checkpoint comes from was saved (RFC 3339); nil when no checkpoint is held (the
    /// next refresh lists the whole collection).
    public var lastFullListing: String?

    /// Creates a status.
    public init(mode: String, lastDelta: String?, lastFullListing: String?) {
        self.mode = mode
        self.lastDelta = lastDelta
        self.lastFullListing = lastFullListing
    }
}

/// What `syncctl status SOURCE` shows as a source's mode: whether local changes are pushed, how the
/// listing's pages are followed, and how a conflict is settled (the `.source` keys of syncd.conf(5)).
public struct SourceMode: Sendable, Equatable {
    /// `Writable=`.
    public var writable: Bool
    /// `Pagination=`: `none`, `link`, `body`, `cursor`, `page` or `offset`.
    public var pagination: String
    /// `ConflictPolicy=` of a writable source; nil for a read-only one.
    public var conflictPolicy: String?

    /// Creates a mode.
    public init(writable: Bool, pagination: String, conflictPolicy: String?) {
        self.writable = writable
        self.pagination = pagination
        self.conflictPolicy = conflictPolicy
    }

    /// The mode of a configured source.
    public init(_ source: SourceConfiguration) {
        self.init(writable: source.writable, pagination: source.pagination.rawValue,
                  conflictPolicy: source.writable ? source.conflictPolicy.rawValue : nil)
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
