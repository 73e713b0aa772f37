/// An error that travels as a Varlink error reply: a qualified name and parameters.
public protocol VarlinkErrorConvertible: Error, Sendable {
    /// Fully qualified error name, e.g. `org.varlink.service.MethodNotFound`.
    var varlinkName: String { get }
    /// The error's parameters.
    var varlinkParameters: JSONObject { get }
}

/// The standard errors of `org.varlink.service` (https://varlink.org/Service).
public enum VarlinkServiceError: VarlinkErrorConvertible, Equatable {
    /// No interface of this name on the service.
    case interfaceNotFound(interface: String)
    /// No method of this name in the interface.
    case methodNotFound(method: String)
    /// The method exists but the service does not implement it.
    case methodNotImplemented(method: String)
    /// A parameter is missing, of the wrong type, or not allowed.
    case invalidParameter(parameter: String)
    /// The caller may not call this method.
    case permissionDenied
    /// The method needs `more: true`.
    case expectedMore

    public var varlinkName: String {
        switch self {
        case .interfaceNotFound: return "org.varlink.service.InterfaceNotFound"
        case .methodNotFound: return "org.varlink.service.MethodNotFound"
        case .methodNotImplemented: return "org.varlink.service.MethodNotImplemented"
        case .invalidParameter: return "org.varlink.service.InvalidParameter"
        case .permissionDenied: return "org.varlink.service.PermissionDenied"
        case .expectedMore: return "org.varlink.service.ExpectedMore"
        }
    }

    public var varlinkParameters: JSONObject {
        switch self {
        case .interfaceNotFound(let interface): return ["interface": .string(interface)]
        case .methodNotFound(let method), .methodNotImplemented(let method): return ["method": .string(method)]
        case .invalidParameter(let parameter): return ["parameter": .string(parameter)]
        case .permissionDenied, .expectedMore: return [:]
        }
    }
}

/// The errors of `io.syncd.Manager` as Varlink errors (the cases: `ManagerError` in SyncCore).
extension ManagerError: VarlinkErrorConvertible {
    /// The interface these errors belong to.
    public static let interface = "io.syncd.Manager"

    public var varlinkName: String {
        let member: String
        switch self {
        case .permissionDenied: member = "PermissionDenied"
        case .noSuchSource: member = "NoSuchSource"
        case .noSuchRecord: member = "NoSuchRecord"
        case .notWritable: member = "NotWritable"
        case .noSuchOutboxEntry: member = "NoSuchOutboxEntry"
        case .noSuchDiscardedChange: member = "NoSuchDiscardedChange"
        case .invalidParameter: member = "InvalidParameter"
        case .refreshFailed: member = "RefreshFailed"
        case .reloadFailed: member = "ReloadFailed"
        case .pendingChanges: member = "PendingChanges"
        case .storageFailure: member = "StorageFailure"
        case .tooManyConnections: member = "TooManyConnections"
        case .stopping: member = "Stopping"
        case .cancelled: member = "Cancelled"
        case .changesExpired: member = "ChangesExpired"
        }
        return ManagerError.interface + "." + member
    }

    public var varlinkParameters: JSONObject {
        switch self {
        case .permissionDenied(let needs): return needs.isEmpty ? [:] : ["needs": .string(needs)]
        case .stopping: return [:]
        case .cancelled(let reason): return ["reason": .string(reason)]
        case .changesExpired(let source, let oldest): return ["source": .string(source), "oldest": .integer(oldest)]
        case .noSuchSource(let source), .notWritable(let source): return ["source": .string(source)]
        case .noSuchRecord(let source, let id): return ["source": .string(source), "id": .string(id)]
        case .noSuchOutboxEntry(let seq), .noSuchDiscardedChange(let seq): return ["seq": .integer(seq)]
        case .invalidParameter(let parameter, let reason): return ["parameter": .string(parameter), "reason": .string(reason)]
        case .refreshFailed(let source, let reason): return ["source": .string(source), "reason": .string(reason)]
        case .reloadFailed(let reason), .storageFailure(let reason), .tooManyConnections(let reason): return ["reason": .string(reason)]
        case .pendingChanges(let count): return ["count": .int(count)]
        }
    }

    /// Reads a Manager error from a reply's name and parameters; nil for another name.
    public init?(name: String, parameters: JSONObject) {
        func text(_ key: String) -> String { parameters[key]?.stringValue ?? "" }
        switch name {
        case "io.syncd.Manager.PermissionDenied": self = .permissionDenied(needs: text("needs"))
        case "io.syncd.Manager.NoSuchSource": self = .noSuchSource(source: text("source"))
        case "io.syncd.Manager.NoSuchRecord": self = .noSuchRecord(source: text("source"), id: text("id"))
        case "io.syncd.Manager.NotWritable": self = .notWritable(source: text("source"))
        case "io.syncd.Manager.NoSuchOutboxEntry": self = .noSuchOutboxEntry(seq: parameters["seq"]?.integerValue ?? 0)
        case "io.syncd.Manager.NoSuchDiscardedChange": self = .noSuchDiscardedChange(seq: parameters["seq"]?.integerValue ?? 0)
        case "io.syncd.Manager.InvalidParameter": self = .invalidParameter(parameter: text("parameter"), reason: text("reason"))
        case "io.syncd.Manager.RefreshFailed": self = .refreshFailed(source: text("source"), reason: text("reason"))
        case "io.syncd.Manager.ReloadFailed": self = .reloadFailed(reason: text("reason"))
        case "io.syncd.Manager.PendingChanges": self = .pendingChanges(count: Int(parameters["count"]?.integerValue ?? 0))
        case "io.syncd.Manager.StorageFailure": self = .storageFailure(reason: text("reason"))
        case "io.syncd.Manager.TooManyConnections": self = .tooManyConnections(reason: text("reason"))
        case "io.syncd.Manager.Stopping": self = .stopping
        case "io.syncd.Manager.Cancelled": self = .cancelled(reason: text("reason"))
        case "io.syncd.Manager.ChangesExpired": self = .changesExpired(source: text("source"), oldest: parameters["oldest"]?.integerValue ?? 0)
        default: return nil
        }
    }
}

extension VarlinkServiceError {
    /// Reads a standard error from a reply's name and parameters; nil for another name.
    public init?(name: String, parameters: JSONObject) {
        func text(_ key: String) -> String { parameters[key]?.stringValue ?? "" }
        switch name {
        case "org.varlink.service.InterfaceNotFound": self = .interfaceNotFound(interface: text("interface"))
        case "org.varlink.service.MethodNotFound": self = .methodNotFound(method: text("method"))
        case "org.varlink.service.MethodNotImplemented": self = .methodNotImplemented(method: text("method"))
        case "org.varlink.service.InvalidParameter": self = .invalidParameter(parameter: text("parameter"))
        case "org.varlink.service.PermissionDenied": self = .permissionDenied
        case "org.varlink.service.ExpectedMore": self = .expectedMore
        default: return nil
        }
    }
}
