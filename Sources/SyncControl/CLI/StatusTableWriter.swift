import SyncCore

/// Writes the rows `StatusTable` read as `StatusFormatter.format` would, into one byte buffer: the plain fields are
/// copied from the reply's bytes, and the column widths come from one pass over the rows before the text.
struct StatusTableWriter {
    let bytes: UnsafeBufferPointer<UInt8>
    let decoded: StatusTable.Decoded
    let formatter: StatusFormatter
    /// The text written so far.
    private(set) var out: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, decoded: StatusTable.Decoded, formatter: StatusFormatter) {
        self.bytes = bytes
        self.decoded = decoded
        self.formatter = formatter
    }

    mutating func write(daemon: DaemonStatus, rows: [StatusTable.Row], failed: [FailedSourceStatus]) {
        // As StatusFormatter shows them (`printable`); the rows' texts are escaped as they are decoded.
        let daemon = daemon.printable, failed = failed.map(\.printable)
        out.reserveCapacity(rows.count * 160 + 4096)
        if !formatter.noLegend {
            line(formatter.header(daemon))
            if let rejected = daemon.reloadRejected { line("    reload rejected, previous configuration kept: \(rejected)") }
            if !rows.isEmpty || !failed.isEmpty { out.append(UInt8(ascii: "\n")) }
        }
        var nameWidth = 0, stateWidth = 0, numberWidth = 0, wordWidth = 0
        for row in rows {
            nameWidth = max(nameWidth, width(row.name))
            stateWidth = max(stateWidth, row.state.rawValue.utf8.count)
            numberWidth = max(numberWidth, Self.countWidth(row.records))
            wordWidth = max(wordWidth, row.records == 1 ? 6 : 7)
        }
        let dots = [DotColor.green, .yellow, .red].map { Array($0.dot(enabled: formatter.color, unicode: formatter.unicode).utf8) }
        var synced: (time: Int64, text: [UInt8])?
        for (position, row) in rows.enumerated() {
            if position > 0 { out.append(UInt8(ascii: "\n")) }
            let dot: Int
            switch row.state {
            case .error: dot = 2
            case _ where row.stale: dot = 2
            case .idle: dot = 0
            default: dot = 1
            }
            out += dots[dot]
            out.append(UInt8(ascii: " "))
            append(row.name, width: nameWidth)
            out += "  ".utf8
            out += row.state.rawValue.utf8
            spaces(stateWidth - row.state.rawValue.utf8.count + 2)
            spaces(numberWidth - Self.countWidth(row.records))
            appendCount(row.records)
            out += (row.records == 1 ? " record" : " records").utf8
            spaces(wordWidth - (row.records == 1 ? 6 : 7) + 2)
            if let success = row.lastSuccess {
                out += "synced ".utf8
                // Sources refreshed in the same second share the text.
                if synced?.time != success.secondsSinceEpoch {
                    synced = (success.secondsSinceEpoch, Array(HumanFormat.relative(success, now: formatter.now).utf8))
                }
                out += synced?.text ?? []
            } else {
                out += "never synced".utf8
            }
            out.append(UInt8(ascii: "\n"))
            if row.stale || row.lastError != nil || row.pending > 0 || row.parked > 0 || row.conflicts > 0 || row.warnings != nil {
                details(row)
            }
            out += "    ".utf8
            append(row.url, width: 0)
            out.append(UInt8(ascii: "\n"))
        }
        let failedWidth = max(nameWidth, failed.map(\.name.count).max() ?? 0)
        for (position, failed) in failed.enumerated() {
            if position > 0 || !rows.isEmpty { out.append(UInt8(ascii: "\n")) }
            let name = failed.name + String(repeating: " ", count: max(0, failedWidth - failed.name.count))
            line("\(DotColor.red.cross(enabled: formatter.color, unicode: formatter.unicode)) \(name)  failed: \(failed.problem)")
        }
        if rows.isEmpty, failed.isEmpty, !formatter.noLegend { line("No sources configured.") }
        if out.isEmpty { out.append(UInt8(ascii: "\n")) }
    }

    /// The lines between a source's first line and its URL (rare: by the tree path's own code).
    private mutating func details(_ row: StatusTable.Row) {
        let status = SourceStatus(name: "", url: "", state: row.state, records: row.records, pending: row.pending, parked: row.parked,
                                  conflicts: row.conflicts, warnings: row.warnings.map { decoded.warnings[$0] } ?? [], lastSuccess: row.lastSuccess?.rfc3339,
                                  lastAttempt: nil, lastError: row.lastError.map(text), stale: row.stale, attempt: 0,
                                  nextAttempt: row.nextAttempt?.rfc3339)
        for text in formatter.block(status, nameWidth: 0, stateWidth: 0).dropFirst().dropLast() { line(text) }
    }

    private mutating func line(_ text: String) {
        out += text.utf8
        out.append(UInt8(ascii: "\n"))
    }

    private mutating func spaces(_ count: Int) {
        if count > 0 { out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count)) }
    }

    /// A field, padded with spaces to `width` characters.
    private mutating func append(_ field: StatusTable.Field, width: Int) {
        switch field {
        case .raw(let range):
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
            spaces(width - range.count)
        case .text(let index):
            out += decoded.texts[index].utf8
            spaces(width - decoded.texts[index].count)
        }
    }

    /// Characters, as `String.count` counts them (a raw field is ASCII).
    private func width(_ field: StatusTable.Field) -> Int {
        switch field {
        case .raw(let range): range.count
        case .text(let index): decoded.texts[index].count
        }
    }

    private func text(_ field: StatusTable.Field) -> String {
        switch field {
        case .raw(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .text(let index): decoded.texts[index]
        }
    }

    /// The width of `HumanFormat.count(value)`: digits, a comma per three, a minus sign.
    static func countWidth(_ value: Int64) -> Int {
        var digits = 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits + (digits - 1) / 3 + (value < 0 ? 1 : 0)
    }

    /// `HumanFormat.count(value)` without making a string.
    private mutating func appendCount(_ value: Int64) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var digits: [UInt8] = []
        var rest = value.magnitude
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        for (position, digit) in digits.reversed().enumerated() {
            if position > 0, (digits.count - position) % 3 == 0 { out.append(UInt8(ascii: ",")) }
            out.append(digit)
        }
    }
}
