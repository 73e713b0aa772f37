// libFuzzer target for RecordScanner. Built by run-fuzz.sh together with the
// sources of Sources/SyncCore/JSON (not as a module), so no import is needed.
//
// Each input is scanned whole, then in two cuttings derived from its bytes, with and
// without a records path. Any difference between feedings, a broken invariant of the
// emitted records, or a verdict that contradicts a plain reference validator (valid
// JSON rejected as malformed, or malformed JSON accepted) traps: a crash is a bug.
//
// Differential: every scan runs twice, with block skipping and the fast path through a record's
// members (ByteBlock, RecordScanner+Members.swift: what syncd uses) and without (the state machine
// byte at a time, the reference), and must give the same records (bytes, IDs and their kinds,
// versions), count, error and error offset. Each input is also scanned shifted by 0–63 bytes of leading whitespace and
// with its string contents lengthened (every `"` followed by 40 plain bytes), so that escapes,
// backslash runs, UTF-8 sequences and the end of input fall at every offset of a block.

/// What one scan produced.
private struct FuzzOutcome: Equatable {
    var records: [[UInt8]] = []
    var keys: [String] = []
    var kinds: [RecordID.Kind] = []
    var versions: [String?] = []
    var count: Int?
    var error: JSONScanError?
}

/// Scans `input` cut at `cuts` (sorted offsets) with `options`.
private func fuzzScan(
    _ input: UnsafeRawBufferPointer, options: RecordScannerOptions, cuts: [Int], skipsByBlocks: Bool = true
) -> FuzzOutcome {
    var scanner = RecordScanner(options: options, skipsByBlocks: skipsByBlocks)
    var outcome = FuzzOutcome()
    var start = 0
    do {
        for end in cuts + [input.count] where end >= start {
            try scanner.feed(UnsafeRawBufferPointer(rebasing: input[start..<end])) { record in
                // Invariants: records in order, bytes from '{' to '}', a non-empty ID.
                guard record.index == outcome.records.count,
                      record.bytes.first == UInt8(ascii: "{"), record.bytes.last == UInt8(ascii: "}"),
                      !record.id.key.isEmpty, record.bytes.count <= options.maxRecordBytes
                else { fatalError("broken record invariant at index \(record.index)") }
                outcome.records.append(Array(record.bytes))
                outcome.keys.append(record.id.key)
                outcome.kinds.append(record.id.kind)
                outcome.versions.append(record.version)
                // The ID's bytes and kind, read without a string, are its key's and kind.
                guard record.withIDBytes({ Array($0) }) == Array(record.id.key.utf8), record.idKind == record.id.kind else {
                    fatalError("withIDBytes or idKind disagrees with id at index \(record.index)")
                }
                // The version's bytes, read in place or from a copy, are its text's.
                record.withVersionBytes { bytes in
                    guard bytes.map(Array.init) == record.version.map({ Array($0.utf8) }) else {
                        fatalError("withVersionBytes disagrees with version at index \(record.index)")
                    }
                }
            }
            start = end
        }
        outcome.count = try scanner.finish()
        guard outcome.count == outcome.records.count, scanner.bytesConsumed == Int64(input.count) else {
            fatalError("count or bytesConsumed disagrees")
        }
    } catch let error as JSONScanError {
        outcome.error = error
        guard error.offset >= 0, error.offset <= Int64(input.count) else {
            fatalError("error offset \(error.offset) outside the input")
        }
    } catch {
        fatalError("unexpected error type \(error)")
    }
    return outcome
}

/// A deliberately plain, non-streaming RFC 8259 validator: the oracle the scanner's
/// verdict is checked against.
private struct ReferenceValidator {
    let bytes: UnsafeRawBufferPointer
    var i = 0

    /// Whether `bytes` is exactly one JSON text in well-formed UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The stdlib's decoder repairs ill-formed UTF-8; no repair means it was valid.
        guard Array(String(decoding: bytes, as: UTF8.self).utf8).elementsEqual(bytes) else { return false }
        var validator = ReferenceValidator(bytes: bytes)
        validator.skipWhitespace()
        guard validator.value() else { return false }
        validator.skipWhitespace()
        return validator.i == bytes.count
    }

    func peek(_ c: Character) -> Bool { i < bytes.count && bytes[i] == c.asciiValue! }

    mutating func eat(_ c: Character) -> Bool {
        guard peek(c) else { return false }
        i += 1
        return true
    }

    mutating func skipWhitespace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    mutating func value() -> Bool {
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "{"): return members(close: "}", isObject: true)
        case UInt8(ascii: "["): return members(close: "]", isObject: false)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        default: return number()
        }
    }

    mutating func members(close: Character, isObject: Bool) -> Bool {
        i += 1
        skipWhitespace()
        if eat(close) { return true }
        while true {
            skipWhitespace()
            if isObject {
                guard string() else { return false }
                skipWhitespace()
                guard eat(":") else { return false }
                skipWhitespace()
            }
            guard value() else { return false }
            skipWhitespace()
            if eat(",") { continue }
            return eat(close)
        }
    }

    mutating func word(_ text: String) -> Bool {
        for c in text.utf8 {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
        }
        return true
    }

    mutating func digits() -> Int {
        let start = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
        return i - start
    }

    mutating func number() -> Bool {
        _ = eat("-")
        if eat("0") {
            // no more integer digits
        } else if digits() == 0 {
            return false
        }
        if eat("."), digits() == 0 { return false }
        if eat("e") || eat("E") {
            _ = eat("+") || eat("-")
            if digits() == 0 { return false }
        }
        return true
    }

    mutating func hex4() -> UInt32? {
        guard eat("\\"), eat("u"), i + 4 <= bytes.count else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + 4)]), as: UTF8.self)
        guard text.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }),
              let value = UInt32(text, radix: 16) else { return nil }
        i += 4
        return value
    }

    mutating func string() -> Bool {
        guard eat("\"") else { return false }
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; return true }
            if c < 0x20 { return false }
            if c != UInt8(ascii: "\\") { i += 1; continue }
            if i + 1 < bytes.count, Array("\"\\/bfnrt".utf8).contains(bytes[i + 1]) { i += 2; continue }
            guard let unit = hex4() else { return false }
            if unit >= 0xDC00 && unit <= 0xDFFF { return false }
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard let low = hex4(), low >= 0xDC00 && low <= 0xDFFF else { return false }
            }
        }
        return false
    }
}

/// Traps if the scanner's verdict contradicts the reference validator's.
private func checkAgainstReference(_ outcome: FuzzOutcome, valid: Bool) {
    guard let error = outcome.error else {
        if !valid { fatalError("scanner accepted invalid JSON") }
        return
    }
    guard valid else { return }  // any error will do for invalid JSON
    switch error.kind {
    case .syntax(let message) where message.hasPrefix("duplicate key"): break
    case .syntax, .invalidUTF8, .truncated, .trailingBytes, .controlCharacterInString:
        fatalError("scanner rejected valid JSON: \(error)")
    default: break
    }
}

/// Traps unless scanning `input` with block skipping gives exactly what the reference gives.
private func checkBlocksAgainstReference(_ input: UnsafeRawBufferPointer, options: RecordScannerOptions, cuts: [Int]) {
    let blocks = fuzzScan(input, options: options, cuts: cuts)
    let reference = fuzzScan(input, options: options, cuts: cuts, skipsByBlocks: false)
    if blocks != reference {
        fatalError("block skipping differs from the reference (cuts \(cuts)): \(blocks) vs \(reference)")
    }
}

/// Whether two scans of the same bytes cut differently agree. They must be equal, but for one thing: a record
/// past `maxRecordBytes` is refused when a chunk ends inside it or at its end, whichever comes first, so that
/// refusal's offset (and whether an error later in the record is reached first) depends on the cuts. Then both
/// must still fail, with the same records emitted before.
private func sameAcrossCuts(_ a: FuzzOutcome, _ b: FuzzOutcome) -> Bool {
    if a == b { return true }
    func refusedForSize(_ o: FuzzOutcome) -> Bool {
        if case .recordTooLarge = o.error?.kind { return true }
        return false
    }
    guard refusedForSize(a) || refusedForSize(b), a.error != nil, b.error != nil else { return false }
    // Everything but the errors (the count is nil after any), field by field as `==` compares it.
    var (x, y) = (a, b)
    x.error = nil
    y.error = nil
    return x == y
}

/// `input` with each `"` followed by 40 plain bytes: string contents long enough to be skipped by blocks.
private func lengthened(_ input: UnsafeRawBufferPointer) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(input.count * 2)
    for byte in input {
        out.append(byte)
        if byte == UInt8(ascii: "\"") {
            out.append(contentsOf: repeatElement(UInt8(ascii: "p"), count: 40))
        }
    }
    return out
}

/// libFuzzer entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // Deterministic cut points from the data (FNV-1a).
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in input {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
    }
    let limit = UInt64(size + 1)
    let first = Int(hash % limit)
    let second = Int((hash >> 21) % limit)
    let cuttings: [[Int]] = [
        [first],
        [min(first, second), max(first, second)],
        Array(0..<min(size, 64)),  // the first bytes one by one
    ]
    let optionSets = [
        RecordScannerOptions(versionField: "v"),
        RecordScannerOptions(recordsPath: ["data"], idField: "k", versionField: "id", maxDepth: 8, maxIDBytes: 6),
        RecordScannerOptions(recordsPath: ["a", "1"], maxDepth: 16),
        // The ID field is also the version field; records of more than 40 bytes are refused.
        RecordScannerOptions(idField: "v", versionField: "v", maxIDBytes: 4, maxRecordBytes: 40),
    ]
    let valid = ReferenceValidator.isValid(input)
    for options in optionSets {
        let whole = fuzzScan(input, options: options, cuts: [])
        checkAgainstReference(whole, valid: valid)
        checkBlocksAgainstReference(input, options: options, cuts: [])
        for cuts in cuttings {
            let split = fuzzScan(input, options: options, cuts: cuts)
            if !sameAcrossCuts(split, whole) {
                fatalError("feeding cut at \(cuts) differs: \(split) vs \(whole)")
            }
            checkBlocksAgainstReference(input, options: options, cuts: cuts)
        }
    }
    // The same bytes at another offset from the blocks' edges, and with long strings.
    let shift = Int((hash >> 42) % 64)
    let shifted = Array(repeating: UInt8(ascii: " "), count: shift) + Array(input)
    let long = lengthened(input)
    for variant in [shifted, long] {
        variant.withUnsafeBytes { bytes in
            let cut = first * bytes.count / max(size, 1)
            for options in optionSets {
                checkBlocksAgainstReference(bytes, options: options, cuts: [])
                checkBlocksAgainstReference(bytes, options: options, cuts: [cut])
            }
        }
    }
    return 0
}
