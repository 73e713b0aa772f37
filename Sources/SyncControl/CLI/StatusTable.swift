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
    /// A string of the reply: its bytes between the quotes when plain ASCII, else the decoded text.
    enum Field {
        case raw(Range<Int>)
        case text(String)
    }

    /// What the table shows of one source.
    struct Row {
        var name = Field.raw(0..<0), url = Field.raw(0..<0)
        var state = SourceStateName.idle
        var records: Int64 = 0, pending: Int64 = 0, parked: Int64 = 0, conflicts: Int64 = 0
        var stale = false
        var lastSuccess: Timestamp?, nextAttempt: Timestamp?
        var lastError: Field?
        var warnings: [Field] = []
    }

    /// The text of the table for the `GetStatus` parameters `text`, or nil when the reply is not one this reader
    /// formats (then the tree path must).
    static func format(_ text: ArraySlice<UInt8>, with formatter: StatusFormatter) -> String? {
        text.withUnsafeBufferPointer { buffer -> String? in
            var reader = JSONSkimmer(bytes: buffer, maxDepth: 64)
            guard let (daemon, rows, failed) = parameters(&reader) else { return nil }
            var writer = StatusTableWriter(bytes: buffer, formatter: formatter)
            writer.write(daemon: daemon, rows: rows, failed: failed)
            return String(decoding: writer.out, as: UTF8.self)
        }
    }

    /// Reads `{"daemon": {…}, "sources": [...], "failed": [...]}`.
    static func parameters(_ reader: inout JSONSkimmer) -> (DaemonStatus, [Row], [FailedSourceStatus])? {
        var rows: [Row]?
        var small = JSONObject()
        let bytes = reader.bytes
        let complete = members(&reader) { key, reader throws(Stop) in
            if reader.matches(key, "sources") {
                guard rows == nil, reader.peek() == UInt8(ascii: "[") else { throw Stop() }
                rows = try sources(&reader)
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
    private static func sources(_ reader: inout JSONSkimmer) throws(Stop) -> [Row] {
        var rows: [Row] = []
        reader.index += 1
        reader.skipWhitespace()
        if reader.peek() == UInt8(ascii: "]") {
            reader.index += 1
            return rows
        }
        while true {
            reader.skipWhitespace()
            rows.append(try source(&reader))
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

    /// One source object; the members `SourceStatus(json:)` requires must be there with their types.
    private static func source(_ reader: inout JSONSkimmer) throws(Stop) -> Row {
        var row = Row()
        var seen: UInt16 = 0
        let bytes = reader.bytes
        let complete = members(&reader) { key, reader throws(Stop) in
            let known: [StaticString] = ["name", "url", "state", "records", "pending", "parked", "conflicts", "warnings",
                                         "lastSuccess", "lastAttempt", "lastError", "stale", "attempt", "nextAttempt"]
            guard let which = known.firstIndex(where: { reader.matches(key, $0) }) else {
                guard (try? reader.skipValue(depth: 3)) != nil else { throw Stop() }
                return
            }
            guard seen & (1 << which) == 0 else { throw Stop() }
            seen |= 1 << which
            switch which {
            case 0: row.name = try string(&reader, bytes)
            case 1: row.url = try string(&reader, bytes)
            case 2:
                let text = try string(&reader, bytes)
                guard case .raw(let range) = text, let state = SourceStateName(rawValue: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)) else { throw Stop() }
                row.state = state
            case 3: row.records = try integer(&reader, bytes)
            case 4: row.pending = try integer(&reader, bytes)
            case 5: row.parked = try integer(&reader, bytes)
            case 6: row.conflicts = try integer(&reader, bytes)
            case 7: row.warnings = try warnings(&reader, bytes)
            case 8: row.lastSuccess = try optionalString(&reader, bytes).flatMap { timestamp($0, bytes) }
            case 9, 10:
                let text = try optionalString(&reader, bytes)
                if which == 10 { row.lastError = text }
            case 11:
                if reader.matches(reader.index..<min(bytes.count, reader.index + 4), "true") { row.stale = true }
                else if !reader.matches(reader.index..<min(bytes.count, reader.index + 5), "false") { throw Stop() }
                try skipOne(&reader)
            case 12: _ = try integer(&reader, bytes)
            default: row.nextAttempt = try optionalString(&reader, bytes).flatMap { timestamp($0, bytes) }
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
    private static func string(_ reader: inout JSONSkimmer, _ bytes: UnsafeBufferPointer<UInt8>) throws(Stop) -> Field {
        guard reader.peek() == UInt8(ascii: "\""), let range = try? reader.skipString() else { throw Stop() }
        if bytes[range].allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\\") }) { return .raw(range) }
        guard let text = (try? JSONValue(parsing: bytes[(range.lowerBound - 1)...range.upperBound]))?.stringValue else { throw Stop() }
        return .text(text)
    }

    /// A string, or nil for `null`.
    private static func optionalString(_ reader: inout JSONSkimmer, _ bytes: UnsafeBufferPointer<UInt8>) throws(Stop) -> Field? {
        if reader.peek() == UInt8(ascii: "n") {
            guard reader.matches(reader.index..<min(bytes.count, reader.index + 4), "null") else { throw Stop() }
            reader.index += 4
            return nil
        }
        return try string(&reader, bytes)
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
    private static func warnings(_ reader: inout JSONSkimmer, _ bytes: UnsafeBufferPointer<UInt8>) throws(Stop) -> [Field] {
        guard reader.peek() == UInt8(ascii: "[") else {
            try skipOne(&reader)
            return []
        }
        let start = reader.index
        try skipOne(&reader)
        guard let value = try? JSONValue(parsing: bytes[start..<reader.index]) else { throw Stop() }
        return (value.arrayValue ?? []).compactMap(\.stringValue).map(Field.text)
    }

    private static func timestamp(_ field: Field, _ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        switch field {
        case .raw(let range): Timestamp(rfc3339: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
        case .text(let text): Timestamp(rfc3339: text)
        }
    }
}
