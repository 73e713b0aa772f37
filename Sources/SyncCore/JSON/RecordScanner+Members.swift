// RecordScanner+Members: the fast path through the members of an object inside a record.
//
// The state machine (RecordScanner+Lexer.swift) stores its state and goes through one `switch` for every
// token. Profiled on a compact listing (docs/benchmarks.md, "First sync against the transfer floor: what
// changed"), that load of the state and the indirect jump after it took a third of the scanner's time: the
// branch predictor cannot tell which of twenty states comes next. Here the position in the grammar of
// `"name": value,` is the position in the code, as in simdjson's second stage: a member name, `:`, a plain
// value (a string without escapes, its UTF-8 validated here; an integer; a literal; an array of those) and
// `,` are read in straight-line code, and so are a record's `}`, the `,` and the next record's `{`; the state
// is only written where this path hands over. A record's member name is first compared with the name the
// previous records had at its position (`MemberName`: two words under masks, name and closing quote), since
// the records of a listing mostly name their members alike; only a name that differs is scanned.
//
// It never decides anything the state machine would decide differently, and applies the same rules (the ID's:
// `idProblem`). Whatever it does not handle (an escape, a UTF-8 sequence that is invalid or cut by the chunk's
// end, a control byte, a second ID field, an ID or version that is not a plain string or integer, an ID the
// rules refuse, an object or a nested array, a number with a sign, fraction or exponent or that is 0, the end
// of the chunk, any byte out of place) it hands back at a token boundary, in the state the machine would be
// in there, and the machine reads that token as it always does, errors included. RecordScannerMemberTests
// compares the two at every cut of inputs built for each hand-over, and the differential fuzzer (Tests/Fuzz)
// on random inputs; the reference scanner (`skipsByBlocks: false`) never takes this path.

private let quote = UInt8(ascii: "\"")

extension RecordScanner {
    /// Reads members of the object open inside a record, from the `"` of a member name at `start` (state
    /// `.key` or `.keyOrObjectEnd`), and goes on from a record's end to the next record's first member;
    /// returns where the state machine goes on, with `state` (and, for a member of the record itself,
    /// `nextRole` and `idKeySeen`) as it would have set them there. It also keeps the record's member names
    /// (`memberNames`, `memberIndex`) and the raw ID's and version's ranges (`idStream*`, `versionStream*`).
    @inline(__always)
    mutating func scanMembers(
        _ p: UnsafeBufferPointer<UInt8>, from start: Int, onRecord: (ScannedRecord) throws -> Void
    ) throws -> Int {
        let n = p.count
        let base = p.baseAddress.unsafelyUnwrapped
        var recordLevel = depth == recordDepth
        var i = start
        while true {
            // The member name: `i` is at its opening quote. A record's member is first compared with the name
            // the previous records had at its position (`MemberName`).
            var nameEnd: Int
            var role = ValueRole.other
            let slot = memberIndex
            if recordLevel && slot < memberNames.count && i &+ 17 <= n && memberNames[slot].matches(UnsafeRawPointer(base + (i &+ 1))) {
                nameEnd = i &+ 1 &+ memberNames[slot].length
                role = memberNames[slot].role
            } else {
                nameEnd = Self.textRunEnd(base, from: i &+ 1, count: n)
                guard nameEnd < n, base[nameEnd] == quote else { return i }
                if recordLevel {
                    let name = UnsafeBufferPointer(start: base + (i &+ 1), count: nameEnd &- i &- 1)
                    let isID = Self.bytes(name, equal: idFieldBytes)
                    let isVersion = versionFieldBytes.map { Self.bytes(name, equal: $0) } ?? false
                    role = isID ? (isVersion ? .idAndVersion : .id) : isVersion ? .version : .other
                    if slot < memberNames.count && name.count <= 15 { memberNames[slot] = MemberName(name, role: role) }
                }
            }
            // A second ID field is an error the state machine reports.
            if (role == .id || role == .idAndVersion) && idKeySeen { return i }
            if recordLevel { memberIndex = slot &+ 1 }
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
            if base[k] == UInt8(ascii: "[") {
                // An array of plain scalars, skipped whole; one with anything else in it is read again by the
                // state machine, which also raises the depth error where the array would pass the limit.
                guard role == .other, depth < maxDepth, let end = Self.flatArrayEnd(base, from: k, count: n) else {
                    return handOver()
                }
                k = end
            } else {
                // A string, the most frequent value, is read here (one call fewer); the other scalars by `plainScalarEnd`.
                let scalar: (Int, ScalarKind)?
                if base[k] == quote {
                    let end = Self.textRunEnd(base, from: k &+ 1, count: n)
                    scalar = end < n && base[end] == quote ? (end, .string) : nil
                } else {
                    scalar = Self.plainScalarEnd(base, from: k, count: n)
                }
                guard let (textEnd, kind) = scalar, role == .other || kind != .literal else {
                    return handOver()
                }
                // The value's text (a string's without its quotes), as the state machine would capture it.
                let textStart = kind == .string ? k &+ 1 : k
                switch role {
                case .id:
                    // An ID the rules refuse (empty, too long) is an error the state machine reports.
                    let length = textEnd &- textStart
                    guard idProblem(kind, isInteger: true, length: length) == nil else { return handOver() }
                    // The ID is its raw text (no escapes; an integer's digits are its key): the record carries
                    // where it lies, as for the version.
                    idStreamStart = chunkBase &+ Int64(textStart)
                    idStreamEnd = chunkBase &+ Int64(textEnd)
                    idStreamKind = kind == .string ? .string : .integer
                    // Tested first: assigning nil releases the old value, a call even when it is nil.
                    if currentID != nil { currentID = nil }
                case .version:
                    // As after a capture without a copy: the version is its raw text in the record's bytes.
                    versionStreamStart = chunkBase &+ Int64(textStart)
                    versionStreamEnd = chunkBase &+ Int64(textEnd)
                    if currentVersion != nil { currentVersion = nil }
                default:
                    break
                }
                k = kind == .string ? textEnd &+ 1 : textEnd
            }
            // After a value: `,` and the next name go on here, and so does a record's end; anything else is
            // the state machine's.
            k = Self.skipWhitespace(base, from: k, count: n)
            guard k < n else {
                state = .afterValue
                return k
            }
            if base[k] == UInt8(ascii: "}") && recordLevel {
                // The record's end, then `,` and the next record's `{`, as `closeContainer` and `openContainer`.
                try endRecord(p, at: k, onRecord: onRecord)
                depth &-= 1
                state = .afterValue
                k = Self.skipWhitespace(base, from: k &+ 1, count: n)
                guard k < n, base[k] == UInt8(ascii: ",") else { return k }
                state = .value
                k = Self.skipWhitespace(base, from: k &+ 1, count: n)
                guard k < n, base[k] == UInt8(ascii: "{") else { return k }
                try openContainer(isArray: false, role: roleOfNextValue(), at: k)
                recordLevel = depth == recordDepth
                k = Self.skipWhitespace(base, from: k &+ 1, count: n)
                guard k < n, base[k] == quote, inRecord else { return k }
                i = k
                continue
            }
            guard base[k] == UInt8(ascii: ",") else {
                state = .afterValue
                return k
            }
            let next = Self.skipWhitespace(base, from: k &+ 1, count: n)
            guard next < n, base[next] == quote else {
                state = .key
                return k &+ 1
            }
            i = next
            // Handed back at this name, the state is the one after a comma.
            state = .key
        }
    }

    /// Where the plain scalar at `start` ends, and its kind: a string without escapes or control bytes, its
    /// UTF-8 sequences valid (the index of its closing quote), an integer that starts with 1–9 (no sign, not
    /// `0`) and that something other than `.`, `e` or `E` follows, or `true`, `false` or `null`. Nil for anything
    /// else, and for a scalar the chunk's end cuts.
    @inline(__always)
    static func plainScalarEnd(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> (Int, ScalarKind)? {
        var k = start
        switch base[k] {
        case quote:
            let end = textRunEnd(base, from: k &+ 1, count: n)
            guard end < n, base[end] == quote else { return nil }
            return (end, .string)
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            k &+= 1
            while k < n && base[k] &- UInt8(ascii: "0") < 10 { k &+= 1 }
            guard k < n, base[k] != UInt8(ascii: "."), base[k] | 0x20 != UInt8(ascii: "e") else { return nil }
            return (k, .number)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let literal: StaticString = base[k] == UInt8(ascii: "t") ? "true" : base[k] == UInt8(ascii: "f") ? "false" : "null"
            let length = literal.utf8CodeUnitCount
            guard k &+ length <= n, bytes(UnsafeBufferPointer(start: base + k, count: length), equal: literal) else {
                return nil
            }
            return (k &+ length, .literal)
        default:
            return nil
        }
    }

    /// One past the `]` of the array at `start` if it holds plain scalars only (`plainScalarEnd`), else nil.
    @inline(__always)
    static func flatArrayEnd(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int? {
        var k = skipWhitespace(base, from: start &+ 1, count: n)
        guard k < n else { return nil }
        if base[k] == UInt8(ascii: "]") { return k &+ 1 }
        while true {
            guard let (end, kind) = plainScalarEnd(base, from: k, count: n) else { return nil }
            k = skipWhitespace(base, from: kind == .string ? end &+ 1 : end, count: n)
            guard k < n else { return nil }
            if base[k] == UInt8(ascii: "]") { return k &+ 1 }
            guard base[k] == UInt8(ascii: ",") else { return nil }
            k = skipWhitespace(base, from: k &+ 1, count: n)
            guard k < n else { return nil }
        }
    }

    /// The first index from `start` that is not string content without escapes: a `"`, a `\`, a control
    /// byte, or a byte of at least 0x80 that does not begin a valid UTF-8 sequence ending in the chunk; or `n`.
    @inline(__always)
    static func textRunEnd(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var i = start
        while true {
            i = plainRunEnd(base, from: i, count: n)
            guard i < n, base[i] >= 0x80, let (needed, lower, upper) = utf8Lead(base[i]), i &+ needed < n else { return i }
            let second = base[i &+ 1]
            guard second >= lower && second <= upper else { return i }
            var k = 2
            while k <= needed {
                guard base[i &+ k] & 0xC0 == 0x80 else { return i }
                k &+= 1
            }
            i &+= needed &+ 1
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
        // Most tokens of a compact listing follow the one before with none: one compare decides those.
        guard start < n, base[start] <= 0x20 else { return start }
        var i = start
        while true {
            // Indentation four spaces at a time.
            if i &+ 4 <= n && UnsafeRawPointer(base + i).loadUnaligned(as: UInt32.self) == 0x2020_2020 {
                i &+= 4
            } else if i < n && isWhitespace(base[i]) {
                i &+= 1
            } else {
                return i
            }
        }
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
