// RecordScanner: a streaming, validating JSON scanner that emits the records of a
// listing one by one, without building the document in memory.
//
// The lexer (RecordScanner+Lexer.swift) is a resumable state machine over bytes, so
// a chunk may end anywhere: inside a string, an escape, a UTF-8 sequence, a number or
// a literal. The record layer (RecordScanner+Records.swift) follows the records path,
// buffers the bytes of the current record only, and reads its ID and version.
//
// Choices where RFC 8259 leaves room (§9 lets a parser set limits and extensions):
// - A UTF-8 byte order mark at the start is rejected (§8.1: senders MUST NOT add one).
// - A `\u` escape of an unpaired UTF-16 surrogate is rejected: it cannot be turned
//   into UTF-8, so a key or ID holding one could not be compared or stored faithfully.
// - Duplicate member names are only rejected where they matter: the key of the
//   records path in a wrapper object and the ID field of a record. Elsewhere (§4 says
//   names SHOULD be unique) they are accepted, and for the version field the last wins.
// - Records path tokens select object members by name and, in arrays, elements by
//   decimal index (RFC 6901 §4, no leading zeros; `-` selects nothing).
// - An integer ID's canonical text is its literal digits, so `-0` is the ID "-0",
//   distinct from "0"; a version that is a boolean, object or array reads as nil.
// - Semantic errors about a scalar (`{"id":1.5}`, a number where the records array
//   should be) are raised when the scalar ends, so that a malformed scalar is reported
//   as a syntax error first; errors about a container are raised at its first byte,
//   so that a wrong-shaped 200 MB body is rejected without reading all of it.

/// Scans a JSON listing fed in chunks, validates it fully (RFC 8259, UTF-8), and emits
/// each record of the records array as soon as its closing `}` arrives.
///
/// Memory stays flat: only the current record's bytes (when it spans chunks) and small
/// state are kept. Records are emitted before the document is known to be valid; the
/// caller must only commit them once `finish()` has returned.
public struct RecordScanner: Sendable {
    // MARK: Configuration (fixed at init)

    /// The records path tokens as UTF-8.
    let pathTokens: [[UInt8]]
    /// For each path token, the array index it denotes, if it is a canonical decimal.
    let pathIndices: [Int?]
    /// The records path as a JSON pointer, for messages.
    let pathPointer: String
    let idField: String
    let idFieldBytes: [UInt8]
    let versionFieldBytes: [UInt8]?
    let maxDepth: Int
    let maxIDBytes: Int
    let maxRecordBytes: Int
    /// The longest record-level key worth capturing (longer keys match nothing).
    let maxFieldBytes: Int
    /// Whether string bytes and whitespace are skipped a 64-byte block at a time (`ByteBlock`); without it the
    /// scanner reads them byte by byte (eight at a time in strings), the reference the differential fuzzer
    /// compares with.
    let skipsByBlocks: Bool

    // MARK: Lexer state

    /// Where the lexer is in the grammar.
    var state: LexState = .value
    /// The number of open containers.
    var depth = 0
    /// `containerIsArray[d]` tells whether the container at depth `d + 1` is an array.
    var containerIsArray: [Bool]
    /// Whether the string being scanned is a member name.
    var stringIsKey = false
    /// The literal being matched (`true`, `false` or `null`) and how far.
    var literal: Literal = .null
    var literalPosition = 0
    /// The value of the `\u` escape being read, and how many hex digits are in.
    var escapeValue: UInt32 = 0
    var escapeDigits = 0
    /// A high surrogate waiting for its low half, or 0.
    var highSurrogate: UInt32 = 0
    /// Continuation bytes still due in a UTF-8 sequence, and the range of the next one.
    var utf8Remaining = 0
    var utf8Lower: UInt8 = 0x80
    var utf8Upper: UInt8 = 0xBF
    /// Whether the number being scanned has neither fraction nor exponent.
    var numberIsInteger = true

    // MARK: Path and record state

    /// How many of the open containers (from the root) lie on the records path; the
    /// records array itself counts once it is open.
    var matchedDepth = 0
    var recordsArray: RecordsArrayState = .notFound
    /// Per wrapper object on the path: whether its path key was seen (duplicates).
    var pathKeySeen: [Bool]
    /// Per wrapper array on the path: how many elements it has had so far.
    var pathElementCount: [Int]
    /// The role of the value that follows the member name just read.
    var nextRole: ValueRole = .other
    /// The role of the scalar being scanned, and where it started.
    var scalarRole: ValueRole = .other
    var scalarStart: Int64 = 0
    /// Whether a record is open, where it starts in the current chunk, and whether
    /// its earlier bytes are in `recordBuffer` (because it began in an earlier chunk).
    var inRecord = false
    var recordChunkStart = 0
    var recordSpansChunks = false
    var recordBuffer: [UInt8] = []
    var idKeySeen = false
    /// The current ID when it was read into a string (escapes, bytes split across chunks, the reference path).
    var currentID: RecordID?
    /// The stream range of the current ID's raw text and how it was written, when it is its raw bytes (else
    /// `idStreamStart` is -1): the record then carries the range, and no string is made unless asked for.
    var idStreamStart: Int64 = -1
    var idStreamEnd: Int64 = 0
    var idStreamKind = RecordID.Kind.string
    /// The names of the members of the previous records, by position (`MemberName`), and the position of
    /// the next member of the open record that the member fast path reads.
    var memberNames = InlineArray<16, MemberName>(repeating: MemberName())
    var memberIndex = 0
    var currentVersion: String?
    /// The stream offset of the open record's `{`.
    var recordStreamStart: Int64 = 0
    /// The stream range of the current version's raw text, when it is one (else `versionStreamStart` is -1).
    var versionStreamStart: Int64 = -1
    var versionStreamEnd: Int64 = 0
    /// The number of records emitted.
    var emitted = 0

    // MARK: Capture of keys, IDs and versions

    /// Whether the current string or number is being captured, and what the key
    /// capture is for.
    var capturing = false
    var captureTarget: CaptureTarget = .none
    /// Captured bytes not in the current chunk (after an escape or a chunk boundary).
    var capture: [UInt8] = []
    /// Whether the whole capture is one raw run in the current chunk (no copy needed).
    var captureDirect = true
    /// Where the pending raw run starts in the current chunk; -1 inside an escape.
    var captureRunStart = 0
    /// Total captured length, and the most worth keeping.
    var captureLength = 0
    var captureLimit = 0

    // MARK: Stream

    /// The stream offset of the current chunk's first byte.
    var chunkBase: Int64 = 0
    /// The error that killed the scanner, if any.
    var failure: JSONScanError?

    /// Creates a scanner for one listing.
    public init(options: RecordScannerOptions) {
        self.init(options: options, skipsByBlocks: true)
    }

    /// Creates a scanner that skips by blocks or, as the reference, does not.
    init(options: RecordScannerOptions, skipsByBlocks: Bool) {
        self.skipsByBlocks = skipsByBlocks
        pathTokens = options.recordsPath.map { Array($0.utf8) }
        pathIndices = options.recordsPath.map(Self.arrayIndex)
        pathPointer = options.recordsPointer
        idField = options.idField
        idFieldBytes = Array(options.idField.utf8)
        versionFieldBytes = options.versionField.map { Array($0.utf8) }
        maxDepth = max(options.maxDepth, 0)
        maxIDBytes = max(options.maxIDBytes, 1)
        maxRecordBytes = max(options.maxRecordBytes, 2)
        maxFieldBytes = max(idFieldBytes.count, versionFieldBytes?.count ?? 0)
        containerIsArray = Array(repeating: false, count: maxDepth + 1)
        pathKeySeen = Array(repeating: false, count: pathTokens.count)
        pathElementCount = Array(repeating: 0, count: pathTokens.count)
    }

    /// Feed the next chunk; `onRecord` is called for each record completed in it.
    /// Throws JSONScanError (or rethrows the callback's error). After an error the scanner is dead.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, onRecord: (ScannedRecord) throws -> Void) throws {
        if let failure { throw failure }
        guard !chunk.isEmpty else { return }
        defer { chunkBase += Int64(chunk.count) }
        try chunk.withMemoryRebound(to: UInt8.self) { bytes in
            try scan(bytes, onRecord: onRecord)
        }
    }

    /// Convenience for tests: feed a [UInt8].
    public mutating func feed(_ chunk: [UInt8], onRecord: (ScannedRecord) throws -> Void) throws {
        try chunk.withUnsafeBytes { try feed($0, onRecord: onRecord) }
    }

    /// End of input: throws if the document is incomplete (truncated) or no records array was found.
    /// Returns the number of records.
    public mutating func finish() throws -> Int {
        if let failure { throw failure }
        if state.isNumber, depth == 0 {
            // A top-level number ends at the end of input (RFC 8259 §6 has no terminator).
            try endNumber(UnsafeBufferPointer(start: nil, count: 0), at: 0)
        }
        guard state == .afterValue, depth == 0 else {
            throw fail(.truncated, at: chunkBase)
        }
        guard recordsArray == .closed else {
            // Unreachable in practice: the root cannot close before the path resolves.
            throw fail(.pathNotFound(path: pathPointer), at: chunkBase)
        }
        return emitted
    }

    /// The number of bytes fed so far.
    public var bytesConsumed: Int64 { chunkBase }

    /// The number of records emitted so far.
    public var recordCount: Int { emitted }

    /// Records `kind` at stream offset `offset` as the scanner's death, and returns it.
    mutating func fail(_ kind: JSONScanError.Kind, at offset: Int64) -> JSONScanError {
        let error = JSONScanError(kind: kind, offset: offset)
        failure = error
        return error
    }

    /// Like `fail(_:at:)` with an index into the current chunk.
    mutating func fail(_ kind: JSONScanError.Kind, atIndex index: Int) -> JSONScanError {
        fail(kind, at: chunkBase + Int64(index))
    }

    /// The array index a JSON pointer token denotes (RFC 6901 §4: no leading zeros).
    static func arrayIndex(_ token: String) -> Int? {
        guard let first = token.utf8.first, first != UInt8(ascii: "0") || token.utf8.count == 1 else {
            return nil
        }
        guard token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(token)
    }
}

/// Where the lexer is in the grammar of RFC 8259.
enum LexState: UInt8, Sendable {
    /// A value must come next: at the start, after `:`, or after `,` in an array.
    case value
    /// Just after `[`: a value or `]`.
    case valueOrArrayEnd
    /// Just after `{`: a member name or `}`.
    case keyOrObjectEnd
    /// After `,` in an object: a member name must come next.
    case key
    /// After a member name: `:` must come next.
    case colon
    /// After a complete value: `,` or the container's end; at the top level only
    /// whitespace may follow.
    case afterValue
    /// Inside a string, between escapes.
    case string
    /// After a backslash in a string.
    case escape
    /// Inside the four hex digits of a `\u` escape.
    case unicodeEscape
    /// After a high-surrogate `\u` escape: its low half must start with `\`.
    case lowSurrogateBackslash
    /// After that `\`: `u` must follow.
    case lowSurrogateU
    /// Inside a multi-byte UTF-8 sequence in a string.
    case utf8Continuation
    /// After a number's `-`: a digit must follow.
    case numberMinus
    /// After an integer part `0`: no more integer digits may follow.
    case numberZero
    /// Inside an integer part starting with 1–9.
    case numberInteger
    /// After `.`: a digit must follow.
    case numberDot
    /// Inside the fraction digits.
    case numberFraction
    /// After `e` or `E`: a sign or digit must follow.
    case numberExponentMark
    /// After the exponent's sign: a digit must follow.
    case numberExponentSign
    /// Inside the exponent digits.
    case numberExponent
    /// Inside `true`, `false` or `null`.
    case literal

    /// Whether this is one of the states between tokens (`value` … `afterValue`, declared first).
    var isStructural: Bool { rawValue <= LexState.afterValue.rawValue }

    /// Whether this is one of the number states.
    var isNumber: Bool {
        rawValue >= LexState.numberMinus.rawValue && rawValue <= LexState.numberExponent.rawValue
    }
}

/// The literal names of RFC 8259 §3.
enum Literal: Sendable {
    case `true`, `false`, null

    /// The literal's bytes.
    var bytes: StaticString {
        switch self {
        case .true: "true"
        case .false: "false"
        case .null: "null"
        }
    }
}

/// A member name of a record as the last record that had a member at its position had it: records of a
/// listing mostly name their members alike and in the same order, so the member fast path compares the next
/// name's bytes with it (two words under masks) instead of scanning for its end and comparing it with the ID
/// and version fields. A match is exact: the name's bytes (plain string content: no escape, no control byte,
/// valid UTF-8, as `textRunEnd` found them) and its closing quote. Only names of up to 15 bytes are kept.
struct MemberName: Sendable {
    /// The name's bytes and its closing quote, little-endian, zero past them; `masks.0 == 0`: none kept.
    var words: (UInt64, UInt64) = (0, 0)
    var masks: (UInt64, UInt64) = (0, 0)
    /// The name's length in bytes, without quotes.
    var length = 0
    var role = ValueRole.other

    init() {}

    /// The name `bytes` (at most 15) with its role.
    init(_ bytes: UnsafeBufferPointer<UInt8>, role: ValueRole) {
        precondition(bytes.count <= 15)
        length = bytes.count
        self.role = role
        for k in 0...bytes.count {
            let byte = UInt64(k < bytes.count ? bytes[k] : UInt8(ascii: "\""))
            if k < 8 {
                words.0 |= byte << (8 * k)
                masks.0 |= 0xFF << (8 * k)
            } else {
                words.1 |= byte << (8 * (k - 8))
                masks.1 |= 0xFF << (8 * (k - 8))
            }
        }
    }

    /// Whether the 16 bytes at `pointer` begin with this name and its closing quote.
    @inline(__always)
    func matches(_ pointer: UnsafeRawPointer) -> Bool {
        let first = UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
        let second = UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        return masks.0 != 0 && first & masks.0 == words.0 && second & masks.1 == words.1
    }
}

/// What a value means to the record layer.
enum ValueRole: UInt8, Sendable {
    /// Nothing: validated and skipped.
    case other
    /// A container on the records path, before the records array.
    case pathStep
    /// The records array.
    case recordsArray
    /// An element of the records array.
    case record
    /// A record's ID value.
    case id
    /// A record's version value.
    case version
    /// Both (the ID field is also the version field).
    case idAndVersion
}

/// Whether the records array has been seen.
enum RecordsArrayState: Sendable {
    /// Not yet.
    case notFound
    /// It is open: its elements are records.
    case open
    /// It has been closed.
    case closed
}

/// What a captured member name is compared with.
enum CaptureTarget: Sendable {
    /// Not a captured key (a captured value, or nothing).
    case none
    /// A member of a wrapper object on the records path.
    case pathKey
    /// A top-level member of a record.
    case recordKey
}
