
/// How to lay out serialised JSON.
public enum JSONStyle: Sendable, Equatable {
    /// One line, no spaces: `{"a":1,"b":[true,null]}`.
    case compact
    /// Two-space indentation, one member or element per line, `"key": value`.
    case pretty
}

extension JSONValue {
    /// The value as JSON text; every number written with the text it was read or made with.
    public func serialized(_ style: JSONStyle = .compact) -> String {
        String(decoding: serializedBytes(style), as: UTF8.self)
    }

    /// The value as UTF-8 JSON bytes.
    public func serializedBytes(_ style: JSONStyle = .compact) -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, style: style)
        return out
    }

    /// Appends the value as UTF-8 JSON bytes to `out` (for replies assembled from parts).
    public func write(to out: inout [UInt8], style: JSONStyle = .compact) {
        write(to: &out, style: style, indent: 0)
    }

    private func write(to out: inout [UInt8], style: JSONStyle, indent: Int) {
        switch self {
        case .null: JSONValue.append("null", to: &out)
        case .bool(let value): JSONValue.append(value ? "true" : "false", to: &out)
        case .integer(let value): JSONValue.append(value, to: &out)
        case .number(let value): out += value.literal.utf8
        case .string(let value): JSONText.appendQuoted(value, to: &out)
        case .array(let elements):
            guard !elements.isEmpty else { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, style, indent + 1)
                element.write(to: &out, style: style, indent: indent + 1)
            }
            newline(&out, style, indent)
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            guard !object.isEmpty else { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (position, member) in object.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, style, indent + 1)
                JSONText.appendQuoted(member.key, to: &out)
                out += (style == .pretty ? ": " : ":").utf8
                member.value.write(to: &out, style: style, indent: indent + 1)
            }
            newline(&out, style, indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// The decimal digits of `value`, without making a string first (a status reply holds tens of thousands).
    private static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }

    private func newline(_ out: inout [UInt8], _ style: JSONStyle, _ indent: Int) {
        guard style == .pretty else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { serialized() }
}
