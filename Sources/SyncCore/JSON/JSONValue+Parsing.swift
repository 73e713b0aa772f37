/// Why a text is not acceptable JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Equatable {
        case unexpectedEnd
        case unexpectedByte(UInt8)
        case invalidNumber
        case invalidString
        case invalidEscape
        case invalidUTF8
        case trailingContent
        case tooDeep(limit: Int)
        case tooLarge(limit: Int)
    }

    /// What is wrong.
    public let reason: Reason
    /// Byte offset of the problem.
    public let offset: Int

    public var description: String {
        switch reason {
        case .unexpectedEnd: return "unexpected end of JSON text"
        case .unexpectedByte(let byte):
            let shown = byte >= 0x20 && byte < 0x7f ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
            return "unexpected \(shown) at offset \(offset)"
        case .invalidNumber: return "invalid number at offset \(offset)"
        case .invalidString: return "invalid string (unescaped control character) at offset \(offset)"
        case .invalidEscape: return "invalid escape sequence at offset \(offset)"
        case .invalidUTF8: return "invalid UTF-8 at offset \(offset)"
        case .trailingContent: return "unexpected content after the JSON value at offset \(offset)"
        case .tooDeep(let limit): return "JSON nested deeper than \(limit) levels at offset \(offset)"
        case .tooLarge(let limit): return "JSON text larger than \(limit) bytes"
        }
    }
}

/// Bounds for parsing untrusted JSON.
public struct JSONParseLimits: Sendable, Equatable {
    /// Deepest nesting of arrays and objects.
    public var maxDepth: Int
    /// Largest text in bytes.
    public var maxBytes: Int

    /// Creates limits.
    public init(maxDepth: Int = 64, maxBytes: Int = 64 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }
}

extension JSONValue {
    /// Parses exactly one JSON value (RFC 8259) from UTF-8 bytes; whitespace may surround it.
    /// Strings must be valid UTF-8 and escapes well-formed (no lone surrogates).
    public init(parsing bytes: some Collection<UInt8>, limits: JSONParseLimits = JSONParseLimits()) throws(JSONParseError) {
        guard bytes.count <= limits.maxBytes else { throw JSONParseError(reason: .tooLarge(limit: limits.maxBytes), offset: 0) }
        let array = Array(bytes)
        var parser = JSONParser(bytes: array, maxDepth: limits.maxDepth)
        self = try parser.parseDocument()
    }

    /// Parses exactly one JSON value like `init(parsing:limits:)`, and tells where the value of the top-level
    /// object's member `key` lies in `bytes` (the last one when the key repeats, as the object's subscript
    /// reads it; nil when the value is not an object or has no such member), so a caller can pass that text
    /// on unchanged instead of serialising the parsed value again.
    public static func parsing(_ bytes: [UInt8], locatingMember key: String,
                               limits: JSONParseLimits = JSONParseLimits()) throws(JSONParseError) -> (value: JSONValue, member: Range<Int>?) {
        guard bytes.count <= limits.maxBytes else { throw JSONParseError(reason: .tooLarge(limit: limits.maxBytes), offset: 0) }
        var parser = JSONParser(bytes: bytes, maxDepth: limits.maxDepth)
        parser.memberToLocate = key
        let value = try parser.parseDocument()
        return (value, parser.locatedMember)
    }

    /// Parses exactly one JSON value from a string.
    public init(parsing text: String, limits: JSONParseLimits = JSONParseLimits()) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8), limits: limits)
    }
}

/// A recursive-descent parser over a byte array; recursion is bounded by `maxDepth`.
struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// A member of the top-level object whose value's place to record in `locatedMember`.
    var memberToLocate: String?
    var locatedMember: Range<Int>?

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail(.trailingContent) }
        return value
    }

    private func fail(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    private mutating func skipWhitespace() {
        // RFC 8259 §2: space, horizontal tab, line feed, carriage return.
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
            index += 1
        }
    }

    private func peek() throws(JSONParseError) -> UInt8 {
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        return bytes[index]
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case let byte: throw fail(.unexpectedByte(byte))
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        for offset in 0..<count {
            guard index + offset < bytes.count else { index += offset; throw fail(.unexpectedEnd) }
            let expected = literal.utf8Start[offset]
            guard bytes[index + offset] == expected else {
                let found = bytes[index + offset]
                index += offset
                throw fail(.unexpectedByte(found))
            }
        }
        index += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        guard depth <= maxDepth else { throw fail(.tooDeep(limit: maxDepth)) }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            let byte = try peek()
            guard byte == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(byte)) }
            let key = try parseString()
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw fail(.unexpectedByte(colon)) }
            index += 1
            skipWhitespace()
            let valueStart = index
            object.append(key, try parseValue())
            if depth == 1, key == memberToLocate { locatedMember = valueStart..<index }
            skipWhitespace()
            let next = try peek()
            index += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "}") { break }
            index -= 1
            throw fail(.unexpectedByte(next))
        }
        depth -= 1
        return .object(object)
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            let next = try peek()
            index += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "]") { break }
            index -= 1
            throw fail(.unexpectedByte(next))
        }
        depth -= 1
        return .array(elements)
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail(.invalidNumber) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail(.invalidNumber) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail(.invalidNumber) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail(.invalidNumber) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let negative = bytes[start] == UInt8(ascii: "-")
        if isInteger, index - start - (negative ? 1 : 0) <= 18 {
            // At most 18 digits always fit in Int64: summed here, without making a string first.
            var magnitude: Int64 = 0
            for byte in bytes[(negative ? start + 1 : start)..<index] { magnitude = magnitude * 10 + Int64(byte - UInt8(ascii: "0")) }
            // `-0` is kept as its text: `.integer(0)` would write it back as `0`.
            if !(negative && magnitude == 0) { return .integer(negative ? -magnitude : magnitude) }
        }
        // Kept as written (beyond Int64, a fraction, an exponent, beyond a double's range or precision).
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, text != "-0", let exact = Int64(text) { return .integer(exact) }
        return .number(JSONNumber(validLiteral: text))
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let stringStart = index
        // The usual string has nothing escaped: made in one step from its bytes.
        while index < bytes.count, bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\\") {
            if bytes[index] == UInt8(ascii: "\"") {
                let text = try self.text(stringStart..<index)
                index += 1
                return text
            }
            index += 1
        }
        // Otherwise run by run, as the escapes come.
        var result = ""
        var runStart = stringStart
        while true {
            guard index < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try appendRun(&result, from: runStart)
                index += 1
                return result
            }
            if byte == UInt8(ascii: "\\") {
                try appendRun(&result, from: runStart)
                try parseEscape(into: &result)
                runStart = index
                continue
            }
            guard byte >= 0x20 else { throw fail(.invalidString) }
            index += 1
        }
    }

    /// Appends the unescaped bytes `runStart..<index`, which must be valid UTF-8.
    private func appendRun(_ result: inout String, from runStart: Int) throws(JSONParseError) {
        guard runStart < index else { return }
        result += try text(runStart..<index)
    }

    /// The unescaped bytes in `range` as a string; they must be valid UTF-8.
    private func text(_ range: Range<Int>) throws(JSONParseError) -> String {
        let text = bytes.withUnsafeBufferPointer { all -> String? in
            let run = UnsafeBufferPointer(rebasing: all[range])
            // ASCII (names, URLs, timestamps: most of a reply) cannot be invalid: decoded without validating.
            if !run.contains(where: { $0 >= 0x80 }) { return String(decoding: run, as: UTF8.self) }
            return String(validating: run, as: UTF8.self)
        }
        guard let text else { throw JSONParseError(reason: .invalidUTF8, offset: range.lowerBound) }
        return text
    }

    private mutating func parseEscape(into result: inout String) throws(JSONParseError) {
        index += 1  // backslash
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): result += "\""
        case UInt8(ascii: "\\"): result += "\\"
        case UInt8(ascii: "/"): result += "/"
        case UInt8(ascii: "b"): result += "\u{08}"
        case UInt8(ascii: "f"): result += "\u{0C}"
        case UInt8(ascii: "n"): result += "\n"
        case UInt8(ascii: "r"): result += "\r"
        case UInt8(ascii: "t"): result += "\t"
        case UInt8(ascii: "u"):
            let first = try parseHex4()
            var scalarValue = first
            if (0xD800...0xDBFF).contains(first) {
                // A high surrogate must be followed by an escaped low surrogate (RFC 8259 §7).
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail(.invalidEscape)
                }
                index += 2
                let second = try parseHex4()
                guard (0xDC00...0xDFFF).contains(second) else { throw fail(.invalidEscape) }
                scalarValue = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(first) {
                throw fail(.invalidEscape)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw fail(.invalidEscape) }
            result.unicodeScalars.append(scalar)
        default:
            index -= 1
            throw fail(.invalidEscape)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail(.unexpectedEnd) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail(.invalidEscape)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
