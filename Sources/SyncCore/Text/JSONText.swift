/// Writing JSON text by hand (RFC 8259 §7), for the few places that build JSON
/// without an encoder: the cache envelope and control replies.
public enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    public static func quoted(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as a JSON string literal, quotes included, as UTF-8. Runs with nothing to escape (the
    /// usual case: names, URLs, timestamps) are copied whole: a status of 10,000 sources is mostly such strings.
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let copied: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped($0, to: &out) }
        if copied == nil { Array(value.utf8).withUnsafeBufferPointer { appendEscaped($0, to: &out) } }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 text with `"`, `\` and the control characters escaped; everything else (non-ASCII
    /// included) is copied as is, which RFC 8259 §7 allows.
    static func appendEscaped(_ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in text.indices {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index]))
            runStart = index + 1
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
            case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...]))
    }

    /// `value` as a JSON string literal, or `null`.
    public static func quotedOrNull(_ value: String?) -> String {
        value.map(quoted) ?? "null"
    }
}
