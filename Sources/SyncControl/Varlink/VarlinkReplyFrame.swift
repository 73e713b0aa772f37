/// The frame of a Varlink reply, read without building the JSON tree of its parameters: which members the reply
/// object has and where its `parameters` text is. `syncctl status --json` prints a reply of megabytes as received
/// after this check (docs/architecture.md, "Status at scale"), instead of parsing 10,000 source objects.
///
/// The whole message is checked to be one JSON object with valid JSON syntax (strings, escapes, numbers,
/// literals, nesting at most `maxDepth`); the values are skipped, not decoded.
public struct VarlinkReplyFrame: Sendable, Equatable {
    /// Where the value of `parameters` is in the message; nil if the reply has none.
    public var parameters: Range<Int>?
    /// Whether the reply has an `error` member (read it with `VarlinkReply(message:)`: error replies are small).
    public var hasError = false
    /// Whether `continues` is `true`.
    public var continues = false
    /// Whether the message has a line break outside its strings (JSON strings hold none raw): it is not one line.
    public var multiline = false

    /// Why a message is not a well-formed reply object.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// The byte offset where reading stopped.
        public let offset: Int
        /// What was wrong there.
        public let reason: String

        public var description: String { "not a JSON object at byte \(offset): \(reason)" }
    }

    /// Reads the frame of `message` (without its NUL).
    public init(message: [UInt8], maxDepth: Int = 64) throws(Malformed) {
        let frame: Result<VarlinkReplyFrame, Malformed> = message.withUnsafeBufferPointer { buffer in
            var skimmer = JSONSkimmer(bytes: buffer, maxDepth: maxDepth)
            do throws(Malformed) { return .success(try skimmer.replyFrame()) } catch { return .failure(error) }
        }
        self = try frame.get()
    }

    init() {}
}

/// A forward-only reader that checks JSON syntax and skips values.
struct JSONSkimmer {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Whether whitespace skipped so far held a line break.
    var sawLineBreak = false

    mutating func replyFrame() throws(VarlinkReplyFrame.Malformed) -> VarlinkReplyFrame {
        var frame = VarlinkReplyFrame()
        skipWhitespace()
        try expect(UInt8(ascii: "{"), "expected an object")
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                let key = try skipString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "expected ':' after a member name")
                skipWhitespace()
                let start = index
                try skipValue(depth: 1)
                if matches(key, "parameters") { frame.parameters = start..<index }
                if matches(key, "error") { frame.hasError = true }
                if matches(key, "continues") { frame.continues = matches(start..<index, "true") }
                skipWhitespace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
                break
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the object") }
        frame.multiline = sawLineBreak
        return frame
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func fail(_ reason: String) -> VarlinkReplyFrame.Malformed {
        VarlinkReplyFrame.Malformed(offset: index, reason: index < bytes.count ? reason : "the text ends early (\(reason))")
    }

    mutating func expect(_ byte: UInt8, _ reason: String) throws(VarlinkReplyFrame.Malformed) {
        guard peek() == byte else { throw fail(reason) }
        index += 1
    }

    func matches(_ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        return text.withUTF8Buffer { expected in
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09: index += 1
            case 0x0A, 0x0D:
                sawLineBreak = true
                index += 1
            default: return
            }
        }
    }

    mutating func skipValue(depth: Int) throws(VarlinkReplyFrame.Malformed) {
        guard let byte = peek() else { throw fail("expected a value") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth) levels") }
            try skipContainer(object: byte == UInt8(ascii: "{"), depth: depth + 1)
        case UInt8(ascii: "\""): _ = try skipString()
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default: throw fail("expected a value")
        }
    }

    private mutating func skipContainer(object: Bool, depth: Int) throws(VarlinkReplyFrame.Malformed) {
        let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
        index += 1
        skipWhitespace()
        if peek() == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if object {
                _ = try skipString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "expected ':' after a member name")
                skipWhitespace()
            }
            try skipValue(depth: depth)
            skipWhitespace()
            if peek() == UInt8(ascii: ",") { index += 1; continue }
            try expect(close, object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
            return
        }
    }

    /// Skips a string; returns the range of its text between the quotes.
    mutating func skipString() throws(VarlinkReplyFrame.Malformed) -> Range<Int> {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = index
        while index < bytes.count {
            skipPlainStringBytes()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte >= 0x20 else { throw fail("a control character in a string") }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = peek() else { break }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    for _ in 0..<4 {
                        guard let hex = peek(), hex.isHexDigit else { throw fail("a bad \\u escape") }
                        index += 1
                    }
                default:
                    throw fail("a bad escape in a string")
                }
                continue
            }
            index += 1
        }
        throw fail("an unterminated string")
    }

    /// Skips 8 bytes at a time while none of them is a quote, a backslash or a control character (SWAR: the
    /// test on each byte of a 64-bit word at once); most of a status reply is plain string text.
    private mutating func skipPlainStringBytes() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        guard let base = bytes.baseAddress else { return }
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // A byte is zero (or below 0x20) where (x - 0x01..) & ~x & 0x80.. is set; bytes >= 0x80 are not below 0x20.
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- (ones &* 0x20)) & ~word)
            if special & highs != 0 { return }
            index += 8
        }
    }

    private mutating func skipLiteral(_ text: StaticString) throws(VarlinkReplyFrame.Malformed) {
        let range = index..<min(bytes.count, index + text.utf8CodeUnitCount)
        guard matches(range, text) else { throw fail("expected a value") }
        index = range.upperBound
    }

    private mutating func skipNumber() throws(VarlinkReplyFrame.Malformed) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        try skipDigits()
        if peek() == UInt8(ascii: ".") {
            index += 1
            try skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            try skipDigits()
        }
    }

    private mutating func skipDigits() throws(VarlinkReplyFrame.Malformed) {
        let start = index
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        guard index > start else { throw fail("expected a digit in a number") }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
