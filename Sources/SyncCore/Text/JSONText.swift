/// Writing JSON text by hand (RFC 8259 §7), for the few places that build JSON
/// without an encoder: the cache envelope and control replies.
public enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendQuoted(value, to: &out)
        return out
    }

    /// Appends `value` as a JSON string literal, quotes included. Text with nothing to escape (the usual
    /// case: names, URLs, timestamps) is copied whole: a status of 10,000 sources is mostly such strings.
    public static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += value
            out += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// `value` as a JSON string literal, or `null`.
    public static func quotedOrNull(_ value: String?) -> String {
        value.map(quoted) ?? "null"
    }
}
