// RecordScanner+Members: the fast path through the members of an object inside a record.
//
// The state machine (RecordScanner+Lexer.swift) stores its state and goes through one `switch` for every
// token. Profiled on a compact listing (docs/benchmarks.md, "The record scanner"), that load of the state
// and the indirect jump after it took a third of the scanner's time: the branch predictor cannot tell
// which of twenty states comes next. Here the position in the grammar of `"name": value,` is the position
// in the code, as in simdjson's second stage: a member name, `:`, a plain value (a string without escapes
// or non-ASCII bytes, an integer, a literal) and `,` are read in straight-line code, and the state is only
// written where this path hands over.
//
// It never decides anything the state machine would decide differently. Whatever it does not handle
// (an escape, a UTF-8 sequence, a control byte, a value with a role, a container, the end of the chunk,
// any byte out of place) it hands back at a token boundary, in the state the machine would be in there,
// and the machine reads that token as it always does, errors included. The differential fuzzer and
// RecordScannerBlockTests compare the two on every input (the reference scanner never takes this path).

private let quote = UInt8(ascii: "\"")

extension RecordScanner {
    /// Reads members of the object open inside a record, from the `"` of a member name at `start` (state
    /// `.key` or `.keyOrObjectEnd`); returns where the state machine goes on, with `state` (and, for a
    /// member of the record itself, `nextRole` and `idKeySeen`) as it would have set them there.
    @inline(__always)
    mutating func scanMembers(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let n = p.count
        let base = p.baseAddress.unsafelyUnwrapped
        let recordLevel = depth == recordDepth
        var i = start
        while true {
            // The member name: `i` is at its opening quote.
            let nameEnd = Self.plainRunEnd(base, from: i &+ 1, count: n)
            guard nameEnd < n, base[nameEnd] == quote else { return i }
            var role = ValueRole.other
            if recordLevel {
                let name = UnsafeBufferPointer(start: base + (i &+ 1), count: nameEnd &- i &- 1)
                let isID = Self.bytes(name, equal: idFieldBytes)
                let isVersion = versionFieldBytes.map { Self.bytes(name, equal: $0) } ?? false
                if isID {
                    // A second ID field is an error the state machine reports.
                    if idKeySeen { return i }
                    role = isVersion ? .idAndVersion : .id
                } else if isVersion {
                    role = .version
                }
            }
            var k = Self.skipWhitespace(base, from: nameEnd &+ 1, count: n)
            guard k < n, base[k] == UInt8(ascii: ":") else { return i }
            // Past the colon: from here on the member name is read, so hand over in `.value`.
            if role == .id || role == .idAndVersion { idKeySeen = true }
            k = Self.skipWhitespace(base, from: k &+ 1, count: n)
            let valueStart = k
            /// Hands the value over to the state machine.
            func handOver() -> Int {
                nextRole = role
                state = .value
                return valueStart
            }
            guard k < n, role != .idAndVersion else { return handOver() }
            // The value's text (a string's without its quotes), as the state machine would capture it.
            let textStart: Int
            let textEnd: Int
            let kind: ScalarKind
            switch base[k] {
            case quote:
                let end = Self.plainRunEnd(base, from: k &+ 1, count: n)
                guard end < n, base[end] == quote else { return handOver() }
                (textStart, textEnd, kind) = (k &+ 1, end, .string)
                k = end &+ 1
            case UInt8(ascii: "1")...UInt8(ascii: "9"):
                k &+= 1
                while k < n && base[k] &- UInt8(ascii: "0") < 10 { k &+= 1 }
                // A fraction, an exponent or the chunk's end: the state machine reads the number.
                guard k < n, base[k] != UInt8(ascii: "."), base[k] | 0x20 != UInt8(ascii: "e") else { return handOver() }
                (textStart, textEnd, kind) = (valueStart, k, .number)
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                guard role == .other else { return handOver() }
                let literal: StaticString = base[k] == UInt8(ascii: "t") ? "true" : base[k] == UInt8(ascii: "f") ? "false" : "null"
                let length = literal.utf8CodeUnitCount
                guard k &+ length <= n, Self.bytes(UnsafeBufferPointer(start: base + k, count: length), equal: literal) else {
                    return handOver()
                }
                (textStart, textEnd, kind) = (k, k &+ length, .literal)
                k &+= length
            default:
                return handOver()
            }
            switch role {
            case .id:
                // An empty or too long ID is an error the state machine reports.
                let length = textEnd &- textStart
                guard length > 0, length <= maxIDBytes else { return handOver() }
                let text = String(decoding: UnsafeBufferPointer(start: base + textStart, count: length), as: UTF8.self)
                currentID = RecordID(key: text, kind: kind == .string ? .string : .integer)
            case .version:
                // As after a capture without a copy: the version is its raw text in the record's bytes.
                versionStreamStart = chunkBase &+ Int64(textStart)
                versionStreamEnd = chunkBase &+ Int64(textEnd)
                currentVersion = nil
            default:
                break
            }
            // After a value: `,` and the next name go on here; anything else is the state machine's.
            k = Self.skipWhitespace(base, from: k, count: n)
            guard k < n, base[k] == UInt8(ascii: ",") else {
                state = .afterValue
                return k
            }
            let next = Self.skipWhitespace(base, from: k &+ 1, count: n)
            guard next < n, base[next] == quote else {
                state = .key
                return k &+ 1
            }
            i = next
        }
    }

    /// The first index from `start` whose byte is not plain string content (`"`, `\`, a control byte or
    /// a byte of at least 0x80), or `n`.
    @inline(__always)
    static func plainRunEnd(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var i = start
        var words = 0
        while i &+ 8 <= n {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
            let special = specialBytes(word)
            if special != 0 { return i &+ special.trailingZeroBitCount &>> 3 }
            i &+= 8
            words &+= 1
            if words == 4 {
                i = ByteBlock.skipString(base, from: i, count: n)
                words = 0
            }
        }
        while i < n && isPlainStringByte(base[i]) { i &+= 1 }
        return i
    }

    /// The first index from `start` that is not JSON whitespace (RFC 8259 §2), or `n`.
    @inline(__always)
    static func skipWhitespace(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var i = start
        while i < n {
            let b = base[i]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return i }
            i &+= 1
        }
        return i
    }

    /// Whether `bytes` are exactly `target`'s.
    @inline(__always)
    static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, equal target: [UInt8]) -> Bool {
        guard bytes.count == target.count else { return false }
        return target.withUnsafeBufferPointer { wanted in
            memoryEqual(bytes.baseAddress, wanted.baseAddress, count: bytes.count)
        }
    }

    /// Whether `bytes` are exactly `target`'s.
    @inline(__always)
    static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, equal target: StaticString) -> Bool {
        guard bytes.count == target.utf8CodeUnitCount else { return false }
        return memoryEqual(bytes.baseAddress, target.utf8Start, count: bytes.count)
    }

    /// Whether `count` bytes at `a` and `b` are equal.
    @inline(__always)
    static func memoryEqual(_ a: UnsafePointer<UInt8>?, _ b: UnsafePointer<UInt8>?, count: Int) -> Bool {
        guard count > 0, let a, let b else { return true }
        var k = 0
        while k < count {
            if a[k] != b[k] { return false }
            k &+= 1
        }
        return true
    }
}
