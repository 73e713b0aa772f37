/// Identifiers syncd makes up.
public enum Identifiers {
    /// A random (version 4) UUID in lowercase text, RFC 9562 §5.4, e.g. `1b4e28ba-2fa1-41d2-883f-0016d3cca427`.
    public static func uuid<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0f | 0x40
        bytes[8] = bytes[8] & 0x3f | 0x80
        let hex = bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// A random UUID from the system's generator.
    public static func uuid() -> String {
        var generator = SystemRandomNumberGenerator()
        return uuid(using: &generator)
    }

    /// `segment` percent-encoded for use as one URL path segment (RFC 3986 §3.3: unreserved characters stay).
    /// The dot segments `.` and `..` are encoded too, so an ID never walks up the URL's path.
    public static func pathSegment(_ segment: String) -> String {
        if segment == "." || segment == ".." { return String(repeating: "%2E", count: segment.count) }
        var out = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }
}
