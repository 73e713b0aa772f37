
/// How to lay out serialised JSON.
public enum JSONStyle: Sendable, Equatable {
    /// One line, no spaces: `{"a":1,"b":[true,null]}`.
    case compact
    /// Two-space indentation, one member or element per line, `"key": value`.
    case pretty
}

extension JSONValue {
    /// The value as JSON text. Non-finite doubles (which JSON cannot carry) become `null`.
    public func serialized(_ style: JSONStyle = .compact) -> String {
        var out = ""
        write(to: &out, style: style, indent: 0)
        return out
    }

    /// The value as UTF-8 JSON bytes.
    public func serializedBytes(_ style: JSONStyle = .compact) -> [UInt8] {
        Array(serialized(style).utf8)
    }

    private func write(to out: inout String, style: JSONStyle, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .number(let value): out += JSONValue.text(of: value)
        case .string(let value): out += JSONText.quoted(value)
        case .array(let elements):
            guard !elements.isEmpty else { out += "[]"; return }
            out += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { out += "," }
                newline(&out, style, indent + 1)
                element.write(to: &out, style: style, indent: indent + 1)
            }
            newline(&out, style, indent)
            out += "]"
        case .object(let object):
            guard !object.isEmpty else { out += "{}"; return }
            out += "{"
            for (position, member) in object.enumerated() {
                if position > 0 { out += "," }
                newline(&out, style, indent + 1)
                out += JSONText.quoted(member.key)
                out += style == .pretty ? ": " : ":"
                member.value.write(to: &out, style: style, indent: indent + 1)
            }
            newline(&out, style, indent)
            out += "}"
        }
    }

    private func newline(_ out: inout String, _ style: JSONStyle, _ indent: Int) {
        guard style == .pretty else { return }
        out += "\n"
        out += String(repeating: " ", count: indent * 2)
    }

    /// Shortest text that reads back as the same double; integral values without `.0` when exact.
    static func text(of value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value.rounded(.towardZero) == value, abs(value) < 1e15 { return String(Int64(value)) }
        return String(describing: value)
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { serialized() }
}
