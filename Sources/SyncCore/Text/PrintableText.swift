// Text that came from outside (file names, configuration values, server answers)
// made safe to print in a message: a NUL would cut a journal line short, an
// escape sequence would repaint the admin's terminal. Escaped as systemd does
// (`\x00`), so the original bytes can still be read off the message. The C1
// controls (U+0080–U+009F) count too: a terminal takes U+009B for ESC [ (CSI),
// U+009D for ESC ] (OSC); each is written as its two UTF-8 bytes (`\xc2\x9b`),
// as an invalid byte is written alone (`\x9b`), so the two cannot be confused.

/// Escapes control bytes and invalid UTF-8 for messages.
public enum PrintableText {
    /// `text` with every C0 control character, DEL and C1 control character as `\xNN` (a C1 one as its two
    /// UTF-8 bytes, `\xc2\x9b`); a tab too unless `keepingTabs`.
    public static func escaping(_ text: String, keepingTabs: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingTabs: keepingTabs) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar, keepingTabs: keepingTabs) {
                for byte in String(scalar).utf8 { out += hex(byte) }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Bytes that should be UTF-8 (a file name from `readdir(3)`), with each byte of an invalid
    /// sequence and each control byte as `\xNN`; nil when they are valid UTF-8 (then use `escaping`).
    public static func escapingInvalidUTF8(_ bytes: [UInt8]) -> String? {
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var out = ""
        var index = 0
        while index < bytes.count {
            let length = sequenceLength(bytes, at: index)
            if length > 0, let valid = String(validating: bytes[index..<index + length], as: UTF8.self) {
                out += escaping(valid)
                index += length
            } else {
                out += hex(bytes[index])
                index += 1
            }
        }
        return out
    }

    static func needsEscape(_ scalar: Unicode.Scalar, keepingTabs: Bool) -> Bool {
        (scalar.value < 0x20 && !(keepingTabs && scalar == "\t")) || (0x7F...0x9F).contains(scalar.value)
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }

    /// The length of the UTF-8 sequence its lead byte announces (0 for a byte that cannot lead one).
    static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7F: length = 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        return index + length <= bytes.count ? length : 0
    }
}
