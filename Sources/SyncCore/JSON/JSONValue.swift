/// A JSON value (RFC 8259) as the control protocol carries it.
///
/// Integers written without fraction or exponent that fit in 64 bits are kept as `.integer`,
/// every other number as its text (`.number`, see `JSONNumber`): serialising a parsed value writes
/// each number back exactly as it was read. Objects keep their members in order (see `JSONObject`).
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written as an integer that fits in `Int64` (but `-0`).
    case integer(Int64)
    /// Any other number, as its text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in order.
    case object(JSONObject)

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as an exact integer: an `.integer`, or a `.number` that is a whole number in range.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value): return value.integerValue
        default: return nil
        }
    }

    /// The number's text if it is written as an integer, of any size (`12345678901234567890`): what an
    /// integer record ID is keyed by.
    public var integerText: String? {
        switch self {
        case .integer(let value): return String(value)
        case .number(let value) where value.isInteger: return value.literal
        default: return nil
        }
    }

    /// The number as a `Double` (integers converted; beyond a double's range, an infinity): for
    /// estimates only, never to write the number back.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value.doubleValue
        default: return nil
        }
    }

    /// The members, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The member `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// `.string(value)`, or `.null` for nil.
    public static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// The number nearest to `value` as `.number` (see `JSONNumber.init(_:)`), or `.null` for NaN and
    /// infinities, which JSON cannot carry.
    public static func number(_ value: Double) -> JSONValue { JSONNumber(value).map(JSONValue.number) ?? .null }

    /// `.integer(value)` for any integer type (values beyond `Int64` are clamped).
    public static func int<T: BinaryInteger>(_ value: T) -> JSONValue { .integer(Int64(clamping: value)) }

    /// `.integer(value)`, or `.null` for nil.
    public static func int<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .integer(Int64(clamping: $0)) } ?? .null }

    /// `.bool(value)`, or `.null` for nil.
    public static func bool(_ value: Bool?) -> JSONValue { value.map(JSONValue.bool) ?? .null }
}

extension JSONValue: Equatable {
    /// Numbers compare by value (`1` equals `1.0`); objects compare members in order.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.integer(let x), .number(let y)), (.number(let y), .integer(let x)): return JSONNumber(validLiteral: String(x)) == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(JSONNumber(validLiteral: String(value)))
        case .number(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = JSONValue.number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}

/// The members of a JSON object in the order they were written or added.
///
/// Lookups return the last member with a key (as most parsers do); `set` replaces in place.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// The members in order.
    public private(set) var members: [(key: String, value: JSONValue)]

    /// An object with these members in this order.
    public init(_ members: [(String, JSONValue)] = []) {
        self.members = members.map { (key: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> (key: String, value: JSONValue) { members[position] }

    /// The value of the last member named `key`; setting nil removes every member named `key`.
    public subscript(key: String) -> JSONValue? {
        get { members.last(where: { $0.key == key })?.value }
        set {
            guard let newValue else {
                members.removeAll { $0.key == key }
                return
            }
            if let index = members.lastIndex(where: { $0.key == key }) {
                members[index].value = newValue
            } else {
                members.append((key: key, value: newValue))
            }
        }
    }

    /// The member names in order.
    public var keys: [String] { members.map(\.key) }

    /// Appends a member without looking for an existing one (the parser's path).
    mutating func append(_ key: String, _ value: JSONValue) {
        members.append((key: key, value: value))
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
