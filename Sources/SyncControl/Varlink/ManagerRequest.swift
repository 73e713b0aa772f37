/// Which side of a conflict to keep.
public enum ConflictSide: String, Sendable, Equatable, CaseIterable {
    /// Push the local change.
    case local
    /// Drop the local change; the server's version stays.
    case remote
}

/// A call of `io.syncd.Manager`, type-checked: what the daemon's handler receives.
///
/// Decoding is strict: a missing required parameter, a parameter of the wrong type, or an
/// unknown parameter is `org.varlink.service.InvalidParameter`; `null` counts as absent.
public enum ManagerRequest: Sendable, Equatable {
    /// `GetStatus()`.
    case getStatus
    /// `Refresh(source, wait)`: nil source means every source.
    case refresh(source: String?, wait: Bool, full: Bool = false)
    /// `List(source, offset, limit)`: offset ≥ 0 (default 0), limit 1…1000 (default and cap 1000).
    case list(source: String, offset: Int, limit: Int)
    /// `Get(source, id)`.
    case get(source: String, id: String)
    /// `Changes(source, since, limit)`: since ≥ 0, limit 1…10000 (default and cap 10000).
    case changes(source: String, since: Int64, limit: Int)
    /// `Watch()`: only valid with `more` (the decoder refuses it otherwise with `ExpectedMore`).
    case watch
    /// `Logout(discardPending)`.
    case logout(discardPending: Bool)
    /// `Reload()`.
    case reload
    /// `Put(source, record)`: record is a JSON object.
    case put(source: String, record: JSONObject)
    /// `Delete(source, id)`.
    case delete(source: String, id: String)
    /// `ListOutbox(source)`.
    case listOutbox(source: String?)
    /// `RetryOutbox(seq)`.
    case retryOutbox(seq: Int64)
    /// `DropOutbox(seq)`.
    case dropOutbox(seq: Int64)
    /// `ListOutbox(source, discarded: true)`: the outbox and the changes a `ConflictPolicy=` discarded.
    case listDiscarded(source: String?)
    /// `RestoreDiscarded(seq)`.
    case restoreDiscarded(seq: Int64)
    /// `ListConflicts(source)`.
    case listConflicts(source: String?)
    /// `Resolve(source, id, keep)`.
    case resolve(source: String, id: String, keep: ConflictSide)

    /// The method's name without the interface, e.g. `GetStatus`.
    public var methodName: String {
        switch self {
        case .getStatus: return "GetStatus"
        case .refresh: return "Refresh"
        case .list: return "List"
        case .get: return "Get"
        case .changes: return "Changes"
        case .watch: return "Watch"
        case .logout: return "Logout"
        case .reload: return "Reload"
        case .put: return "Put"
        case .delete: return "Delete"
        case .listOutbox, .listDiscarded: return "ListOutbox"
        case .retryOutbox: return "RetryOutbox"
        case .dropOutbox: return "DropOutbox"
        case .restoreDiscarded: return "RestoreDiscarded"
        case .listConflicts: return "ListConflicts"
        case .resolve: return "Resolve"
        }
    }

    /// Decodes a call of `io.syncd.Manager.<member>`.
    public init(member: String, parameters: JSONObject, more: Bool = false) throws(VarlinkServiceError) {
        var reader = ParameterReader(parameters: parameters)
        switch member {
        case "GetStatus": self = .getStatus
        case "Refresh": self = .refresh(source: try reader.optionalString("source"), wait: try reader.optionalBool("wait") ?? false,
                                        full: try reader.optionalBool("full") ?? false)
        case "List":
            let source = try reader.string("source")
            let offset = try reader.optionalInteger("offset") ?? 0
            let limit = try reader.optionalInteger("limit") ?? Int64(ManagerInterface.maxPageSize)
            guard offset >= 0, offset <= Int64(Int32.max) else { throw .invalidParameter(parameter: "offset") }
            guard limit >= 1 else { throw .invalidParameter(parameter: "limit") }
            self = .list(source: source, offset: Int(offset), limit: Int(min(limit, Int64(ManagerInterface.maxPageSize))))
        case "Get": self = .get(source: try reader.string("source"), id: try reader.string("id"))
        case "Changes":
            let source = try reader.string("source")
            let since = try reader.integer("since")
            let limit = try reader.optionalInteger("limit") ?? Int64(ManagerInterface.maxChangesPage)
            guard since >= 0 else { throw .invalidParameter(parameter: "since") }
            guard limit >= 1 else { throw .invalidParameter(parameter: "limit") }
            self = .changes(source: source, since: since, limit: Int(min(limit, Int64(ManagerInterface.maxChangesPage))))
        case "Watch":
            guard more else { throw .expectedMore }
            self = .watch
        case "Logout": self = .logout(discardPending: try reader.optionalBool("discardPending") ?? false)
        case "Reload": self = .reload
        case "Put": self = .put(source: try reader.string("source"), record: try reader.object("record"))
        case "Delete": self = .delete(source: try reader.string("source"), id: try reader.string("id"))
        case "ListOutbox":
            let source = try reader.optionalString("source")
            self = try reader.optionalBool("discarded") == true ? .listDiscarded(source: source) : .listOutbox(source: source)
        case "RetryOutbox": self = .retryOutbox(seq: try reader.integer("seq"))
        case "DropOutbox": self = .dropOutbox(seq: try reader.integer("seq"))
        case "RestoreDiscarded": self = .restoreDiscarded(seq: try reader.integer("seq"))
        case "ListConflicts": self = .listConflicts(source: try reader.optionalString("source"))
        case "Resolve":
            let source = try reader.string("source"), id = try reader.string("id")
            guard let keep = ConflictSide(rawValue: try reader.string("keep")) else { throw .invalidParameter(parameter: "keep") }
            self = .resolve(source: source, id: id, keep: keep)
        default:
            throw .methodNotFound(method: ManagerInterface.name + "." + member)
        }
        try reader.rejectUnread()
    }

    /// The call's parameters, as a client sends them (optional ones only when set).
    public var parameters: JSONObject {
        var object = JSONObject()
        switch self {
        case .getStatus, .watch, .reload: break
        case .refresh(let source, let wait, let full):
            if let source { object["source"] = .string(source) }
            if wait { object["wait"] = true }
            if full { object["full"] = true }
        case .list(let source, let offset, let limit):
            object = ["source": .string(source), "offset": .int(offset), "limit": .int(limit)]
        case .changes(let source, let since, let limit):
            object = ["source": .string(source), "since": .integer(since), "limit": .int(limit)]
        case .get(let source, let id), .delete(let source, let id):
            object = ["source": .string(source), "id": .string(id)]
        case .logout(let discardPending):
            if discardPending { object["discardPending"] = true }
        case .put(let source, let record):
            object = ["source": .string(source), "record": .object(record)]
        case .listOutbox(let source), .listConflicts(let source):
            if let source { object["source"] = .string(source) }
        case .listDiscarded(let source):
            object = ["discarded": true]
            if let source { object["source"] = .string(source) }
        case .retryOutbox(let seq), .dropOutbox(let seq), .restoreDiscarded(let seq):
            object = ["seq": .integer(seq)]
        case .resolve(let source, let id, let keep):
            object = ["source": .string(source), "id": .string(id), "keep": .string(keep.rawValue)]
        }
        return object
    }

    /// The call a client sends for this request.
    public func call(more: Bool = false) -> VarlinkCall {
        VarlinkCall(method: ManagerInterface.name + "." + methodName, parameters: parameters, more: more)
    }
}

/// Reads typed parameters and remembers which were read, so unknown ones can be refused.
struct ParameterReader {
    let parameters: JSONObject
    private var read: Set<String> = []

    init(parameters: JSONObject) { self.parameters = parameters }

    /// The value, nil when absent or null.
    private mutating func value(_ name: String) -> JSONValue? {
        read.insert(name)
        guard let value = parameters[name], value != .null else { return nil }
        return value
    }

    mutating func optionalString(_ name: String) throws(VarlinkServiceError) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.stringValue else { throw .invalidParameter(parameter: name) }
        return text
    }

    mutating func string(_ name: String) throws(VarlinkServiceError) -> String {
        guard let text = try optionalString(name) else { throw .invalidParameter(parameter: name) }
        return text
    }

    mutating func optionalBool(_ name: String) throws(VarlinkServiceError) -> Bool? {
        guard let value = value(name) else { return nil }
        guard let flag = value.boolValue else { throw .invalidParameter(parameter: name) }
        return flag
    }

    mutating func optionalInteger(_ name: String) throws(VarlinkServiceError) -> Int64? {
        guard let value = value(name) else { return nil }
        guard let number = value.integerValue else { throw .invalidParameter(parameter: name) }
        return number
    }

    mutating func integer(_ name: String) throws(VarlinkServiceError) -> Int64 {
        guard let number = try optionalInteger(name) else { throw .invalidParameter(parameter: name) }
        return number
    }

    mutating func object(_ name: String) throws(VarlinkServiceError) -> JSONObject {
        guard let object = value(name)?.objectValue else { throw .invalidParameter(parameter: name) }
        return object
    }

    /// Refuses a parameter the method does not define.
    func rejectUnread() throws(VarlinkServiceError) {
        if let unknown = parameters.keys.first(where: { !read.contains($0) }) {
            throw .invalidParameter(parameter: unknown)
        }
    }
}
