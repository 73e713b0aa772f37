/// One method call (https://varlink.org/Method-Call): a JSON object terminated by NUL.
public struct VarlinkCall: Sendable, Equatable {
    /// Fully qualified method, e.g. `io.syncd.Manager.GetStatus`.
    public var method: String
    /// Input parameters (always an object; empty when absent).
    public var parameters: JSONObject
    /// The caller accepts several replies (`continues: true` on all but the last).
    public var more: Bool
    /// The caller wants no reply.
    public var oneway: Bool
    /// The caller wants the connection upgraded to another protocol after the reply.
    public var upgrade: Bool

    /// Creates a call.
    public init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of `method` (before the last dot).
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The member part of `method` (after the last dot).
    public var memberName: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// The call as a JSON object; flags appear only when set.
    public var json: JSONValue {
        var object: JSONObject = ["method": .string(method)]
        if !parameters.isEmpty { object["parameters"] = .object(parameters) }
        if more { object["more"] = true }
        if oneway { object["oneway"] = true }
        if upgrade { object["upgrade"] = true }
        return .object(object)
    }

    /// The call as wire bytes: compact JSON followed by NUL.
    public var wireBytes: [UInt8] { json.serializedBytes() + [0] }

    /// Reads a call from a parsed message; the error names the offending field.
    public init(message: JSONValue) throws(VarlinkServiceError) {
        guard let object = message.objectValue else { throw .invalidParameter(parameter: "message") }
        guard let method = object["method"]?.stringValue, VarlinkCall.isValidMethodName(method) else {
            throw .invalidParameter(parameter: "method")
        }
        self.method = method
        switch object["parameters"] {
        case nil, .null?: parameters = [:]
        case .object(let value)?: parameters = value
        default: throw .invalidParameter(parameter: "parameters")
        }
        func flag(_ name: String) throws(VarlinkServiceError) -> Bool {
            switch object[name] {
            case nil, .null?: return false
            case .bool(let value)?: return value
            default: throw .invalidParameter(parameter: name)
            }
        }
        more = try flag("more")
        oneway = try flag("oneway")
        upgrade = try flag("upgrade")
    }

    /// `interface.Member`: an interface name with at least one dot, then a capitalised member name
    /// (the grammar of https://varlink.org/Interface-Definition, simplified to ASCII).
    public static func isValidMethodName(_ method: String) -> Bool {
        guard let dot = method.lastIndex(of: "."), method.utf8.count <= 255 else { return false }
        let interface = method[..<dot].utf8, member = method[method.index(after: dot)...].utf8
        func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
        func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || (48...57).contains(byte) }
        guard let first = member.first, (65...90).contains(first), member.allSatisfy(isAlphanumeric),
              let head = interface.first, isLetter(head), interface.contains(UInt8(ascii: ".")),
              interface.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
        else { return false }
        return true
    }
}

/// One reply: parameters, or an error name with its parameters.
public struct VarlinkReply: Sendable, Equatable {
    /// Output parameters (or the error's parameters).
    public var parameters: JSONObject
    /// More replies follow for this call.
    public var continues: Bool
    /// Fully qualified error name, e.g. `io.syncd.Manager.NoSuchSource`; nil on success.
    public var error: String?

    /// Creates a reply.
    public init(parameters: JSONObject = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// An error reply.
    public init(error: some VarlinkErrorConvertible) {
        self.init(parameters: error.varlinkParameters, continues: false, error: error.varlinkName)
    }

    /// The reply as a JSON object. `parameters` is always present (some clients index it unconditionally).
    public var json: JSONValue {
        var object: JSONObject = ["parameters": .object(parameters)]
        if continues { object["continues"] = true }
        if let error { object["error"] = .string(error) }
        return .object(object)
    }

    /// The reply as wire bytes: compact JSON followed by NUL.
    public var wireBytes: [UInt8] { json.serializedBytes() + [0] }

    /// The wire bytes of a final, successful reply whose parameters are already serialised as a compact JSON
    /// object: the same bytes as `wireBytes` of the equivalent reply (a large reply assembled from cached parts).
    /// The parameters' buffer becomes the reply's (framed in place: no second buffer of megabytes).
    public static func wireBytes(serializedParameters: consuming [UInt8]) -> [UInt8] {
        var bytes = serializedParameters
        bytes.insert(contentsOf: #"{"parameters":"#.utf8, at: 0)
        bytes += [UInt8(ascii: "}"), 0]
        return bytes
    }

    /// Reads a reply from a parsed message; nil if it is not shaped like one.
    public init?(message: JSONValue) {
        guard let object = message.objectValue else { return nil }
        switch object["parameters"] {
        case nil, .null?: parameters = [:]
        case .object(let value)?: parameters = value
        default: return nil
        }
        switch object["continues"] {
        case nil, .null?: continues = false
        case .bool(let value)?: continues = value
        default: return nil
        }
        switch object["error"] {
        case nil, .null?: error = nil
        case .string(let value)?: error = value
        default: return nil
        }
    }
}
