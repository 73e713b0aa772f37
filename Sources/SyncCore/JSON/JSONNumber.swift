// JSONNumber: a JSON number kept as the text it was written with.

/// A JSON number as written (RFC 8259 §6): its literal text, so that serialising writes back exactly the
/// bytes that were read. `12345678901234567890`, `0.123456789012345678`, `1e-400`, `1e400` and `-0` are kept
/// as they are: none is rounded to a `Double` (docs/local-changes.md, "Records as written").
///
/// Two numbers are equal when they denote the same decimal value (`1`, `1.0`, `10e-1` and `0.1e1` are
/// equal, `-0` equals `0`), compared digit by digit, never through a `Double`. A number whose exponent is
/// written with more than 15 digits (beyond any value syncd can use) equals only a number written with the
/// same text.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, valid per RFC 8259 §6.
    public let literal: String

    /// A number from text already checked to be a valid JSON number (the parser's path).
    init(validLiteral: String) {
        literal = validLiteral
    }

    /// The number written as `literal`, or nil when `literal` is not a JSON number (`+1`, `01`, `.5`, `1.`, `NaN`).
    public init?(literal: String) {
        guard Self.isValid(literal) else { return nil }
        self.literal = literal
    }

    /// The shortest text that reads back as `value`; an integral value below 2^64 in magnitude is written
    /// with all its digits (`9223372036854775808`, not `9.223372036854776e+18`). Nil for NaN and infinities,
    /// which JSON cannot carry.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value.rounded(.towardZero) == value, value.magnitude < 18_446_744_073_709_551_616.0 {
            let digits = String(UInt64(value.magnitude))
            literal = value < 0 && digits != "0" ? "-" + digits : digits
        } else {
            literal = String(describing: value)
        }
    }

    /// The literal text.
    public var description: String { literal }

    /// Whether the text is an integer: no fraction, no exponent (`-0` and `12345678901234567890` are).
    public var isInteger: Bool { RecordID.isJSONInteger(literal) }

    /// The value as an `Int64` when it is a whole number in range, whatever its text (`1e3`, `3.0`); else nil.
    public var integerValue: Int64? {
        guard let value = decimal else { return nil }
        guard !value.digits.isEmpty else { return 0 }
        guard value.scale >= 0, value.digits.count + value.scale <= 19 else { return nil }
        let text = (value.negative ? "-" : "") + String(decoding: value.digits, as: UTF8.self)
            + String(repeating: "0", count: value.scale)
        return Int64(text)
    }

    /// The nearest `Double` (`±infinity` beyond its range, `0` below it): for display and estimates only,
    /// never to write the number back.
    public var doubleValue: Double { Double(literal) ?? .nan }

    public static func == (a: JSONNumber, b: JSONNumber) -> Bool {
        guard let x = a.decimal, let y = b.decimal else { return a.literal == b.literal }
        return x == y
    }

    public func hash(into hasher: inout Hasher) {
        if let value = decimal {
            hasher.combine(value)
        } else {
            hasher.combine(literal)
        }
    }

    /// The exact value as sign, significant digits and power of ten: `digits × 10^scale`, the digits without
    /// leading or trailing zeros (none for zero, whose sign is dropped). Nil when the exponent has more than
    /// 15 digits.
    struct Decimal: Hashable {
        var negative: Bool
        var digits: [UInt8]
        var scale: Int
    }

    var decimal: Decimal? {
        var bytes = Substring(literal).utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        var digits: [UInt8] = []
        var scale = 0
        var inFraction = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                inFraction = true
                continue
            }
            if byte == UInt8(ascii: "0"), digits.isEmpty {
                if inFraction { scale -= 1 }
                continue
            }
            digits.append(byte)
            if inFraction { scale -= 1 }
        }
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            var exponentNegative = false
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            let significant = bytes.drop { $0 == UInt8(ascii: "0") }
            guard significant.count <= 15 else { return nil }
            var exponent = 0
            for byte in significant { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
            scale += exponentNegative ? -exponent : exponent
        }
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            scale += 1
        }
        if digits.isEmpty { return Decimal(negative: false, digits: [], scale: 0) }
        return Decimal(negative: negative, digits: digits, scale: scale)
    }

    /// Whether `text` matches RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isValid(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let leadingZero = bytes.first == UInt8(ascii: "0")
        let integerDigits = digits()
        guard integerDigits > 0, !leadingZero || integerDigits == 1 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
