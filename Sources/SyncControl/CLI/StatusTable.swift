import SyncCore

/// The human `syncctl status` of a large reply, read in one pass over the reply's bytes (docs/architecture.md,
/// "Status at scale"): each source becomes a small row of byte ranges and numbers, with no JSON tree of 10,000
/// objects, and the text is written into one byte buffer in a second pass once the column widths are known.
///
/// Only a reply this reader fully understands is formatted here: anything it does not (a field of another type, an
/// unknown state, a member given twice, a string with escapes it cannot decode) gives nil, and the caller takes the
/// tree path (`ManagerStatus(json:)` and `StatusFormatter.format`), which says what is wrong with the reply.
/// The output is byte for byte the one `StatusFormatter.format` gives.
enum StatusTable {
    /// A string of the reply: its bytes between the quotes when plain ASCII, else the decoded text (an index in
    /// `Decoded.texts`). Rows hold no references, so making and copying 10,000 of them is plain memory work.
    enum Field {
        case raw(Range<Int>)
        case text(Int)
    }

    /// What could not stay a byte range: strings with escapes or non-ASCII text, and warnings (rare).
    struct Decoded {
        var texts: [String] = []
        var warnings: [[String]] = []
    }

    /// What the table shows of one source.
    struct Row {
        var name = Field.raw(0..<0), url = Field.raw(0..<0)
        var state = SourceStateName.idle
        var records: Int64 = 0, pending: Int64 = 0, parked: Int64 = 0, conflicts: Int64 = 0
        var stale = false
        var lastSuccess: Timestamp?, nextAttempt: Timestamp?
        var lastError: Field?
        /// An index in `Decoded.warnings`.
        var warnings: Int?
    }

    /// The text of the table for the `GetStatus` parameters `text`, or nil when the reply is not one this reader
    /// formats (then the tree path must). With `envelope`, `text` is the whole reply message as syncd writes it,
    /// `{"parameters":{…}}`, and this reader is its only check (one pass over the bytes instead of two).
    static func format(_ text: ArraySlice<UInt8>, envelope: Bool = false, with formatter: StatusFormatter) -> String? {
        let prefix = #"{"parameters":"#.utf8
        if envelope, !text.starts(with: prefix) { return nil }
        return text.withUnsafeBufferPointer { buffer -> String? in
            var reader = JSONSkimmer(bytes: buffer, maxDepth: 64)
            if envelope { reader.index = prefix.count }
            var decoded = Decoded()
            guard let (daemon, rows, failed) = parameters(&reader, &decoded) else { return nil }
            if envelope {
                reader.skipWhitespace()
                guard reader.peek() == UInt8(ascii: "}") else { return nil }
                reader.index += 1
                reader.skipWhitespace()
            }
            // Nothing may follow (the frame check saw to it for the parameters alone).
            guard reader.index == buffer.count else { return nil }
            var writer = StatusTableWriter(bytes: buffer, decoded: decoded, formatter: formatter)
            writer.write(daemon: daemon, rows: rows, failed: failed)
            return String(decoding: writer.out, as: UTF8.self)
        }
    }

    /// Reads `{"daemon": {…}, "sources": [...], "failed": [...]}`.
    static func parameters(_ reader: inout JSONSkimmer, _ decoded: inout Decoded) -> (DaemonStatus, [Row], [FailedSourceStatus])? {
        var rows: [Row]?
        var small = JSONObject()
        let bytes = reader.bytes
        let complete = members(&reader) { key, reader throws(Stop) in
            if reader.matches(key, "sources") {
                guard rows == nil, reader.peek() == UInt8(ascii: "[") else { throw Stop() }
                rows = try sources(&reader, &decoded)
            } else if reader.matches(key, "daemon") || reader.matches(key, "failed") {
                // Small: parsed as a tree and read by the same code as the tree path.
                let start = reader.index
                try skipOne(&reader)
                guard let value = try? JSONValue(parsing: bytes[start..<reader.index]) else { throw Stop() }
                let name = reader.matches(key, "daemon") ? "daemon" : "failed"
                guard small[name] == nil else { throw Stop() }
                small[name] = value
            } else {
                try skipOne(&reader)
            }
        }
        guard complete, let rows else { return nil }
        small["sources"] = .array([])
        guard let status = try? ManagerStatus(json: small) else { return nil }
        return (status.daemon, rows, status.failed)
    }

    /// Thrown to leave a reply this reader does not format.
    struct Stop: Error {}

    /// Calls `member` for each member of the object at the reader (positioned on its value); false if the text is
    /// not such an object or `member` stops.
    private static func members(_ reader: inout JSONSkimmer, _ member: (Range<Int>, inout JSONSkimmer) throws(Stop) -> Void) -> Bool {
        do throws(Stop) {
            reader.skipWhitespace()
            guard reader.peek() == UInt8(ascii: "{") else { return false }
            reader.index += 1
            reader.skipWhitespace()
            if reader.peek() == UInt8(ascii: "}") {
                reader.index += 1
                return true
            }
            while true {
                reader.skipWhitespace()
                guard let key = try? reader.skipString() else { return false }
                reader.skipWhitespace()
                guard (try? reader.expect(UInt8(ascii: ":"), "")) != nil else { return false }
                reader.skipWhitespace()
                try member(key, &reader)
                reader.skipWhitespace()
                if reader.peek() == UInt8(ascii: ",") {
                    reader.index += 1
                    continue
                }
                guard reader.peek() == UInt8(ascii: "}") else { return false }
                reader.index += 1
                return true
            }
        } catch {
            return false
        }
    }

    /// The array of source objects.
    private static func sources(_ reader: inout JSONSkimmer, _ decoded: inout Decoded) throws(Stop) -> [Row] {
        var rows: [Row] = []
        // A source is some 280 bytes of the reply.
        rows.reserveCapacity(reader.bytes.count / 256)
        var previous: (Range<Int>, Timestamp)?
        reader.index += 1
        reader.skipWhitespace()
        if reader.peek() == UInt8(ascii: "]") {
            reader.index += 1
            return rows
        }
        while true {
            reader.skipWhitespace()
            rows.append(try source(&reader, &decoded, &previous))
            reader.skipWhitespace()
            if reader.peek() == UInt8(ascii: ",") {
                reader.index += 1
                continue
            }
            guard reader.peek() == UInt8(ascii: "]") else { throw Stop() }
            reader.index += 1
            return rows
        }
    }

    /// The members of a source object the table reads (and checks, as `SourceStatus(json:)` does).
    private static let knownMembers: [StaticString] = ["name", "url", "state", "records", "pending", "parked", "conflicts", "warnings",
                                                       "lastSuccess", "lastAttempt", "lastError", "stale", "attempt", "nextAttempt"]

    /// The index in `knownMembers` of the member named by the bytes at `key`, comparing only names of its length.
    private static func memberIndex(_ key: Range<Int>, _ reader: JSONSkimmer) -> Int? {
        let candidates: [Int]
        switch key.count {
        case 3: candidates = [1]
        case 4: candidates = [0]
        case 5: candidates = [2, 11]
        case 6: candidates = [5]
        case 7: candidates = [3, 4, 12]
        case 8: candidates = [7]
        case 9: candidates = [6, 10]
        case 11: candidates = [8, 9, 13]
        default: return nil
        }
        return candidates.first { reader.matches(key, knownMembers[$0]) }
    }

    /// One source object; the members `SourceStatus(json:)` requires must be there with their types.
    /// `previous` is the last time read and where: sources refreshed in the same second share it.
    private static func source(_ reader: inout JSONSkimmer, _ decoded: inout Decoded, _ previous: inout (Range<Int>, Timestamp)?) throws(Stop) -> Row {
        var row = Row()
        var seen: UInt16 = 0
        let bytes = reader.bytes
        let complete = members(&reader) { key, reader throws(Stop) in
            guard let which = memberIndex(key, reader) else {
                guard (try? reader.skipValue(depth: 3)) != nil else { throw Stop() }
                return
            }
            guard seen & (1 << which) == 0 else { throw Stop() }
            seen |= 1 << which
            switch which {
            case 0: row.name = try string(&reader, &decoded)
            case 1: row.url = try string(&reader, &decoded)
            case 2:
                guard case .raw(let range) = try string(&reader, &decoded),
                      let state = SourceStateName.allCases.first(where: { $0.rawValue.utf8.elementsEqual(bytes[range]) }) else { throw Stop() }
                row.state = state
            case 3: row.records = try integer(&reader, bytes)
            case 4: row.pending = try integer(&reader, bytes)
            case 5: row.parked = try integer(&reader, bytes)
            case 6: row.conflicts = try integer(&reader, bytes)
            case 7: row.warnings = try warnings(&reader, &decoded)
            case 8: row.lastSuccess = try optionalString(&reader, &decoded).flatMap { timestamp($0, bytes, decoded, &previous) }
            case 9, 10:
                let text = try optionalString(&reader, &decoded)
                if which == 10 { row.lastError = text }
            case 11:
                if reader.matches(reader.index..<min(bytes.count, reader.index + 4), "true") { row.stale = true }
                else if !reader.matches(reader.index..<min(bytes.count, reader.index + 5), "false") { throw Stop() }
                try skipOne(&reader)
            case 12: _ = try integer(&reader, bytes)
            default: row.nextAttempt = try optionalString(&reader, &decoded).flatMap { timestamp($0, bytes, decoded, &previous) }
            }
        }
        // name, url, state, records, pending, conflicts, stale and attempt are required.
        let required: UInt16 = 0b1_1000_0101_1111
        guard complete, seen & required == required else { throw Stop() }
        return row
    }

    private static func skipOne(_ reader: inout JSONSkimmer) throws(Stop) {
        guard (try? reader.skipValue(depth: 3)) != nil else { throw Stop() }
    }

    /// A string value: the range of its bytes when they are plain ASCII without escapes, else decoded by the
    /// JSON parser the tree path uses.
    private static func string(_ reader: inout JSONSkimmer, _ decoded: inout Decoded) throws(Stop) -> Field {
        let bytes = reader.bytes
        guard reader.peek() == UInt8(ascii: "\""), let range = try? reader.skipString() else { throw Stop() }
        if bytes[range].allSatisfy({ $0 < 0x7F && $0 != UInt8(ascii: "\\") }) { return .raw(range) }
        guard let text = (try? JSONValue(parsing: bytes[(range.lowerBound - 1)...range.upperBound]))?.stringValue else { throw Stop() }
        // Shown on a terminal: control bytes (a server's escape sequences) escaped, as by StatusFormatter.
        decoded.texts.append(HumanFormat.printable(text))
        return .text(decoded.texts.count - 1)
    }

    /// A string, or nil for `null`.
    private static func optionalString(_ reader: inout JSONSkimmer, _ decoded: inout Decoded) throws(Stop) -> Field? {
        if reader.peek() == UInt8(ascii: "n") {
            guard reader.matches(reader.index..<min(reader.bytes.count, reader.index + 4), "null") else { throw Stop() }
            reader.index += 4
            return nil
        }
        return try string(&reader, &decoded)
    }

    /// A whole number written as digits (no fraction, exponent or leading zero), within Int64.
    private static func integer(_ reader: inout JSONSkimmer, _ bytes: UnsafeBufferPointer<UInt8>) throws(Stop) -> Int64 {
        let negative = reader.peek() == UInt8(ascii: "-")
        if negative { reader.index += 1 }
        let start = reader.index
        var value: Int64 = 0
        while let byte = reader.peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { throw Stop() }
            value = sum
            reader.index += 1
        }
        let digits = reader.index - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { throw Stop() }
        if let next = reader.peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { throw Stop() }
        return negative ? -value : value
    }

    /// `warnings`: the strings of an array (anything else is no warnings, as in `SourceStatus(json:)`).
    private static func warnings(_ reader: inout JSONSkimmer, _ decoded: inout Decoded) throws(Stop) -> Int? {
        let bytes = reader.bytes
        guard reader.peek() == UInt8(ascii: "[") else {
            try skipOne(&reader)
            return nil
        }
        let start = reader.index
        try skipOne(&reader)
        // Most sources have none: `[]` is read without the parser.
        if reader.index - start == 2 { return nil }
        guard let value = try? JSONValue(parsing: bytes[start..<reader.index]) else { throw Stop() }
        decoded.warnings.append((value.arrayValue ?? []).compactMap(\.stringValue))
        return decoded.warnings.count - 1
    }

    private static func timestamp(_ field: Field, _ bytes: UnsafeBufferPointer<UInt8>, _ decoded: Decoded,
                                  _ previous: inout (Range<Int>, Timestamp)?) -> Timestamp? {
        switch field {
        case .raw(let range):
            if let (seen, time) = previous, bytes[seen].elementsEqual(bytes[range]) { return time }
            guard let time = Timestamp(rfc3339: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)) else { return nil }
            previous = (range, time)
            return time
        case .text(let index): return Timestamp(rfc3339: decoded.texts[index])
        }
    }
}
