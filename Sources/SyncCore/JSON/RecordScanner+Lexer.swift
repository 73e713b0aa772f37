// RecordScanner+Lexer: the byte-level RFC 8259 state machine.
//
// One `switch state` dispatches each step; the string and number states consume runs
// of bytes in tight loops (strings eight bytes at a time) and only come back to the
// switch at a byte that changes the state. Every state can be suspended at the end of
// a chunk and resumed with the next.

private let quote = UInt8(ascii: "\"")
private let backslash = UInt8(ascii: "\\")

extension RecordScanner {
    /// Scans one chunk.
    mutating func scan(_ p: UnsafeBufferPointer<UInt8>, onRecord: (ScannedRecord) throws -> Void) throws {
        let n = p.count
        var i = 0
        while i < n {
            switch state {
            case .string, .value, .valueOrArrayEnd, .keyOrObjectEnd, .key, .colon, .afterValue:
                i = try scanTokens(p, from: i, onRecord: onRecord)
            case .escape, .unicodeEscape, .lowSurrogateBackslash, .lowSurrogateU, .utf8Continuation:
                try scanStringByte(p[i], at: i)
                i &+= 1
            case .numberMinus, .numberZero, .numberInteger, .numberDot, .numberFraction,
                 .numberExponentMark, .numberExponentSign, .numberExponent:
                i = try scanNumber(p, from: i)
            case .literal:
                try scanLiteralByte(p[i], at: i)
                i &+= 1
            }
        }
        endChunk(p)
        // A record open across chunks is held until its end: one past the limit is refused now, not once whole.
        if inRecord && recordBuffer.count > maxRecordBytes {
            throw fail(.recordTooLarge(index: emitted, limit: maxRecordBytes), at: chunkBase &+ Int64(n))
        }
    }

    /// Scans structural bytes, whitespace and plain strings from `start` for as long as the state stays
    /// among them (most of a listing), without going back to `scan`'s dispatch for each token; returns
    /// where it stopped (a number, a literal, an escape or a UTF-8 sequence split by the chunk's end).
    @inline(__always)
    mutating func scanTokens(
        _ p: UnsafeBufferPointer<UInt8>, from start: Int,
        onRecord: (ScannedRecord) throws -> Void
    ) throws -> Int {
        let n = p.count
        var i = start
        while i < n {
            let current = state
            if current == .string {
                i = try scanString(p, from: i)
                continue
            }
            guard current.isStructural else { return i }
            let b = p[i]
            if Self.isWhitespace(b) {
                i &+= 1
                continue
            }
            // The most frequent tokens of a listing, handled here as `scanStructural` would: a member name
            // or string value starting, `:`, and `,` inside a container (most of a record's structure, without
            // the call into the general case for each).
            switch current {
            case .colon where b == UInt8(ascii: ":"):
                state = .value
                i &+= 1
                continue
            case .afterValue where b == UInt8(ascii: ",") && depth > 0:
                state = containerIsArray[depth &- 1] ? .value : .key
                i &+= 1
                continue
            case .key where b == quote, .keyOrObjectEnd where b == quote:
                if skipsByBlocks && inRecord {
                    let next = try scanMembers(p, from: i, onRecord: onRecord)
                    if next != i {
                        i = next
                        continue
                    }
                }
                beginKey(at: i)
                i &+= 1
                continue
            case .value where b == quote, .valueOrArrayEnd where b == quote:
                stringIsKey = false
                beginScalar(role: roleOfNextValue(), at: i, captureFrom: i &+ 1)
                state = .string
                i &+= 1
                continue
            default:
                break
            }
            try scanStructural(b, at: i, p, onRecord: onRecord)
            i &+= 1
        }
        return i
    }

    /// Handles a non-whitespace byte between tokens.
    @inline(__always)
    mutating func scanStructural(
        _ b: UInt8, at i: Int, _ p: UnsafeBufferPointer<UInt8>,
        onRecord: (ScannedRecord) throws -> Void
    ) throws {
        switch state {
        case .value:
            try beginValue(b, at: i)
        case .valueOrArrayEnd:
            if b == UInt8(ascii: "]") {
                try closeContainer(b, at: i, p, onRecord: onRecord)
            } else {
                try beginValue(b, at: i)
            }
        case .keyOrObjectEnd, .key:
            if b == quote {
                beginKey(at: i)
            } else if b == UInt8(ascii: "}") && state == .keyOrObjectEnd {
                try closeContainer(b, at: i, p, onRecord: onRecord)
            } else {
                throw unexpected(b, at: i)
            }
        case .colon:
            guard b == UInt8(ascii: ":") else { throw unexpected(b, at: i) }
            state = .value
        case .afterValue:
            if depth == 0 {
                throw fail(.trailingBytes, atIndex: i)
            }
            if b == UInt8(ascii: ",") {
                state = containerIsArray[depth &- 1] ? .value : .key
            } else if b == UInt8(ascii: "]") || b == UInt8(ascii: "}") {
                try closeContainer(b, at: i, p, onRecord: onRecord)
            } else {
                throw unexpected(b, at: i)
            }
        default:
            preconditionFailure("scanStructural called in state \(state)")
        }
    }

    /// Starts the value whose first byte is `b`.
    @inline(__always)
    mutating func beginValue(_ b: UInt8, at i: Int) throws {
        switch b {
        case UInt8(ascii: "{"):
            try openContainer(isArray: false, role: roleOfNextValue(), at: i)
        case UInt8(ascii: "["):
            try openContainer(isArray: true, role: roleOfNextValue(), at: i)
        case quote:
            stringIsKey = false
            beginScalar(role: roleOfNextValue(), at: i, captureFrom: i &+ 1)
            state = .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            beginScalar(role: roleOfNextValue(), at: i, captureFrom: i)
            numberIsInteger = true
            state = b == UInt8(ascii: "-") ? .numberMinus : b == UInt8(ascii: "0") ? .numberZero : .numberInteger
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            beginScalar(role: roleOfNextValue(), at: i, captureFrom: nil)
            literal = b == UInt8(ascii: "t") ? .true : b == UInt8(ascii: "f") ? .false : .null
            literalPosition = 1
            state = .literal
        default:
            throw unexpected(b, at: i)
        }
    }

    /// The error for byte `b` where it cannot be.
    mutating func unexpected(_ b: UInt8, at i: Int) -> JSONScanError {
        if b == 0xEF && chunkBase + Int64(i) == 0 {
            return fail(.syntax("byte order mark at the start (RFC 8259 §8.1 forbids it)"), atIndex: i)
        }
        if b >= 0x80 && (b < 0xC2 || b > 0xF4) {
            return fail(.invalidUTF8, atIndex: i)
        }
        return fail(.syntax(Self.describeUnexpected(b)), atIndex: i)
    }

    /// `unexpected character '<'` for printable ASCII, else `unexpected byte 0x0B`.
    static func describeUnexpected(_ b: UInt8) -> String {
        if b > 0x20 && b < 0x7F {
            return "unexpected character '\(Character(Unicode.Scalar(b)))'"
        }
        let hex = String(b, radix: 16, uppercase: true)
        return "unexpected byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }

    // MARK: Strings

    /// Scans string content from `start`; returns where it stopped.
    @inline(__always)
    mutating func scanString(_ p: UnsafeBufferPointer<UInt8>, from start: Int) throws -> Int {
        let n = p.count
        let base = p.baseAddress.unsafelyUnwrapped
        var i = start
        while true {
            // Skip eight plain bytes at a time (SWAR); stop at the first special one. With block skipping,
            // after four words (most strings of a listing are shorter) the rest goes a block at a time.
            var words = 0
            while i &+ 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let special = Self.specialBytes(word)
                if special != 0 {
                    i &+= special.trailingZeroBitCount &>> 3
                    break
                }
                i &+= 8
                words &+= 1
                if words == 4 && skipsByBlocks {
                    i = ByteBlock.skipString(base, from: i, count: n)
                }
            }
            while i < n && Self.isPlainStringByte(base[i]) {
                i &+= 1
            }
            if i >= n { return n }
            let b = base[i]
            if b == quote {
                try endString(p, at: i)
                return i &+ 1
            } else if b == backslash {
                if capturing { flushCaptureRun(p, upTo: i) }
                captureRunStart = -1
                state = .escape
                return i &+ 1
            } else if b < 0x20 {
                throw fail(.controlCharacterInString, atIndex: i)
            } else {
                i = try scanUTF8Sequence(base, at: i, count: n)
                if state != .string { return i }
            }
        }
    }

    /// Whether `b` is JSON whitespace.
    @inline(__always)
    static func isWhitespace(_ b: UInt8) -> Bool {
        // RFC 8259 §2: insignificant whitespace is space, tab, LF and CR only.
        b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09
    }

    /// Whether `b` needs no attention inside a string (printable ASCII but `"` and `\`).
    @inline(__always)
    static func isPlainStringByte(_ b: UInt8) -> Bool {
        b >= 0x20 && b < 0x80 && b != quote && b != backslash
    }

    /// A mask with bit 7 set in each byte of `word` that is `"`, `\`, below 0x20 or
    /// at least 0x80. The lowest set bit is exact; higher ones may be false positives
    /// (borrows only run upward), which is all the caller relies on.
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let quoteHit = (quotes &- ones) & ~quotes
        let backslashHit = (backslashes &- ones) & ~backslashes
        return (control | quoteHit | backslashHit | word) & high
    }

    /// Validates the UTF-8 sequence whose lead byte is at `i` (RFC 3629 §4, Unicode
    /// table 3-7: no overlongs, no surrogates, nothing above U+10FFFF). If the chunk
    /// ends inside it, the rest is checked byte by byte in `.utf8Continuation`.
    @inline(__always)
    mutating func scanUTF8Sequence(_ base: UnsafePointer<UInt8>, at i: Int, count n: Int) throws -> Int {
        guard let (needed, lower, upper) = Self.utf8Lead(base[i]) else { throw fail(.invalidUTF8, atIndex: i) }
        if i &+ needed < n {
            let second = base[i &+ 1]
            guard second >= lower && second <= upper else { throw fail(.invalidUTF8, atIndex: i &+ 1) }
            var k = 2
            while k <= needed {
                guard base[i &+ k] & 0xC0 == 0x80 else { throw fail(.invalidUTF8, atIndex: i &+ k) }
                k &+= 1
            }
            return i &+ needed &+ 1
        }
        utf8Remaining = needed
        utf8Lower = lower
        utf8Upper = upper
        state = .utf8Continuation
        return i &+ 1
    }

    /// For a UTF-8 lead byte, how many continuation bytes follow and the range of the first (RFC 3629 §4,
    /// Unicode table 3-7); nil for a byte that cannot lead a sequence.
    @inline(__always)
    static func utf8Lead(_ lead: UInt8) -> (needed: Int, lower: UInt8, upper: UInt8)? {
        switch lead {
        case 0xC2...0xDF: (1, 0x80, 0xBF)
        case 0xE0: (2, 0xA0, 0xBF)
        case 0xED: (2, 0x80, 0x9F)
        case 0xE1...0xEF: (2, 0x80, 0xBF)
        case 0xF0: (3, 0x90, 0xBF)
        case 0xF4: (3, 0x80, 0x8F)
        case 0xF1...0xF3: (3, 0x80, 0xBF)
        default: nil
        }
    }

    /// Handles one byte in an escape or a split UTF-8 sequence.
    mutating func scanStringByte(_ b: UInt8, at i: Int) throws {
        switch state {
        case .escape:
            let decoded: UInt8
            switch b {
            case quote, backslash, UInt8(ascii: "/"): decoded = b
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            case UInt8(ascii: "n"): decoded = 0x0A
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "t"): decoded = 0x09
            case UInt8(ascii: "u"):
                escapeValue = 0
                escapeDigits = 0
                state = .unicodeEscape
                return
            default:
                let shown = b > 0x20 && b < 0x7F ? String(Character(Unicode.Scalar(b))) : "byte 0x" + String(b, radix: 16)
                throw fail(.syntax("invalid escape \\\(shown)"), atIndex: i)
            }
            if capturing { appendCapture(decoded) }
            captureRunStart = i &+ 1
            state = .string
        case .unicodeEscape:
            guard let digit = Self.hexValue(b) else {
                throw fail(.syntax("invalid \\u escape: \(Self.describeUnexpected(b))"), atIndex: i)
            }
            escapeValue = escapeValue &<< 4 | digit
            escapeDigits &+= 1
            if escapeDigits == 4 { try endUnicodeEscape(at: i) }
        case .lowSurrogateBackslash:
            guard b == backslash else { throw unpairedSurrogate(at: i) }
            state = .lowSurrogateU
        case .lowSurrogateU:
            guard b == UInt8(ascii: "u") else { throw unpairedSurrogate(at: i) }
            escapeValue = 0
            escapeDigits = 0
            state = .unicodeEscape
        case .utf8Continuation:
            guard b >= utf8Lower && b <= utf8Upper else { throw fail(.invalidUTF8, atIndex: i) }
            utf8Lower = 0x80
            utf8Upper = 0xBF
            utf8Remaining &-= 1
            if utf8Remaining == 0 { state = .string }
        default:
            preconditionFailure("scanStringByte called in state \(state)")
        }
    }

    /// Completes a `\uXXXX` escape, pairing surrogates (RFC 8259 §7).
    mutating func endUnicodeEscape(at i: Int) throws {
        let unit = escapeValue
        let scalar: UInt32
        if highSurrogate != 0 {
            guard unit >= 0xDC00 && unit <= 0xDFFF else { throw unpairedSurrogate(at: i) }
            scalar = 0x10000 &+ ((highSurrogate &- 0xD800) &<< 10) &+ (unit &- 0xDC00)
            highSurrogate = 0
        } else if unit >= 0xD800 && unit <= 0xDBFF {
            highSurrogate = unit
            state = .lowSurrogateBackslash
            return
        } else if unit >= 0xDC00 && unit <= 0xDFFF {
            throw unpairedSurrogate(at: i)
        } else {
            scalar = unit
        }
        if capturing, let decoded = Unicode.Scalar(scalar) {
            for byte in UTF8.encode(decoded).unsafelyUnwrapped { appendCapture(byte) }
        }
        captureRunStart = i &+ 1
        state = .string
    }

    /// The error for a `\u` surrogate escape without its other half.
    mutating func unpairedSurrogate(at i: Int) -> JSONScanError {
        fail(.syntax("unpaired UTF-16 surrogate in \\u escape"), atIndex: i)
    }

    /// The value of a hex digit, or nil.
    @inline(__always)
    static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(b &- 0x30)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(b &- 0x57)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(b &- 0x37)
        default: nil
        }
    }

    // MARK: Numbers and literals

    /// Scans number bytes from `start` (RFC 8259 §6); returns where it stopped. The
    /// byte that ends a number is left for the structural states.
    @inline(__always)
    mutating func scanNumber(_ p: UnsafeBufferPointer<UInt8>, from start: Int) throws -> Int {
        let n = p.count
        var i = start
        while i < n {
            let b = p[i]
            let isDigit = b &- 0x30 < 10
            switch state {
            case .numberMinus:
                guard isDigit else { throw invalidNumber(at: i) }
                state = b == UInt8(ascii: "0") ? .numberZero : .numberInteger
            case .numberZero, .numberInteger, .numberFraction:
                if isDigit {
                    // RFC 8259 §6: no leading zeros.
                    if state == .numberZero { throw invalidNumber(at: i) }
                } else if b == UInt8(ascii: "."), state != .numberFraction {
                    numberIsInteger = false
                    state = .numberDot
                } else if b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
                    numberIsInteger = false
                    state = .numberExponentMark
                } else {
                    try endNumber(p, at: i)
                    return i
                }
            case .numberDot:
                guard isDigit else { throw invalidNumber(at: i) }
                state = .numberFraction
            case .numberExponentMark:
                if b == UInt8(ascii: "+") || b == UInt8(ascii: "-") {
                    state = .numberExponentSign
                } else if isDigit {
                    state = .numberExponent
                } else {
                    throw invalidNumber(at: i)
                }
            case .numberExponentSign:
                guard isDigit else { throw invalidNumber(at: i) }
                state = .numberExponent
            case .numberExponent:
                guard isDigit else {
                    try endNumber(p, at: i)
                    return i
                }
            default:
                preconditionFailure("scanNumber called in state \(state)")
            }
            i &+= 1
        }
        return n
    }

    /// Ends the number before index `i` (or at the end of input, with an empty `p`).
    mutating func endNumber(_ p: UnsafeBufferPointer<UInt8>, at i: Int) throws {
        switch state {
        case .numberZero, .numberInteger, .numberFraction, .numberExponent: break
        default: throw invalidNumber(at: i)
        }
        state = .afterValue
        try endScalar(.number, p, at: i)
    }

    /// The error for a malformed number.
    mutating func invalidNumber(at i: Int) -> JSONScanError {
        fail(.syntax("invalid number"), atIndex: i)
    }

    /// Matches one more byte of `true`, `false` or `null`.
    @inline(__always)
    mutating func scanLiteralByte(_ b: UInt8, at i: Int) throws {
        let text = literal.bytes
        guard b == text.utf8Start[literalPosition] else {
            throw fail(.syntax("invalid literal (expected \(text))"), atIndex: i)
        }
        literalPosition &+= 1
        if literalPosition == text.utf8CodeUnitCount {
            state = .afterValue
            try endScalar(.literal, UnsafeBufferPointer(start: nil, count: 0), at: i &+ 1)
        }
    }

    /// Ends the string whose closing quote is at `i`.
    @inline(__always)
    mutating func endString(_ p: UnsafeBufferPointer<UInt8>, at i: Int) throws {
        if stringIsKey {
            state = .colon
            if capturing { try endKey(p, at: i) }
        } else {
            state = .afterValue
            try endScalar(.string, p, at: i)
        }
    }
}
