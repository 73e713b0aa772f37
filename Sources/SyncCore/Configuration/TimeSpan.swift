// Time spans as in systemd.time(7), "PARSING TIME SPANS": a sequence of
// components, each a number and an optional unit, summed; a number without a
// unit is seconds. Resolution is a nanosecond; fractions are allowed.

/// Parses and formats time spans such as `500ms`, `30s`, `1h 30min` (systemd.time(7)).
public enum TimeSpan {
    /// One unit of a time span: its spellings and its length in nanoseconds.
    struct Unit {
        let names: [String]
        let nanoseconds: Int128
    }

    static let second: Int128 = 1_000_000_000

    /// The units systemd.time(7) accepts, longest first for formatting.
    /// A month is 30.44 days and a year 365.25 days, exactly as systemd defines them.
    static let units: [Unit] = [
        Unit(names: ["y", "year", "years"], nanoseconds: 31_557_600 * second),
        Unit(names: ["M", "month", "months"], nanoseconds: 2_629_800 * second),
        Unit(names: ["w", "week", "weeks"], nanoseconds: 604_800 * second),
        Unit(names: ["d", "day", "days"], nanoseconds: 86_400 * second),
        Unit(names: ["h", "hr", "hour", "hours"], nanoseconds: 3_600 * second),
        Unit(names: ["min", "m", "minute", "minutes"], nanoseconds: 60 * second),
        Unit(names: ["s", "sec", "second", "seconds"], nanoseconds: second),
        Unit(names: ["ms", "msec"], nanoseconds: 1_000_000),
        // U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU both occur in the wild.
        Unit(names: ["us", "usec", "\u{00B5}s", "\u{03BC}s"], nanoseconds: 1_000),
        Unit(names: ["ns", "nsec"], nanoseconds: 1),
    ]

    /// Parses a time span.
    ///
    /// Accepts one or more components separated by optional whitespace, each a
    /// non-negative decimal number (fractions allowed: `2.5s`) followed by an
    /// optional unit: `us`/`usec`/`µs`, `ms`/`msec`, `s`/`sec`/`second`/`seconds`,
    /// `m`/`min`/`minute`/`minutes`, `h`/`hr`/`hour`/`hours`, `d`/`day`/`days`,
    /// `w`/`week`/`weeks`, `M`/`month`/`months` (30.44 days), `y`/`year`/`years`
    /// (365.25 days), and `ns`/`nsec` as systemd's nanosecond parser does. A number without a unit is seconds. Units are case-sensitive:
    /// `1m` is a minute, `1M` a month.
    ///
    /// - Throws: `ValueError` saying what is wrong, e.g.
    ///   `invalid time span "5 parsecs": unknown unit "parsecs"`.
    public static func parse(_ text: String) throws(ValueError) -> Duration {
        func failure(_ reason: String) -> ValueError {
            ValueError("invalid time span \"\(text)\": \(reason)")
        }
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var total: Int128 = 0
        func skipWhitespace() {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
        }
        skipWhitespace()
        if index == scalars.count { throw failure("empty; use e.g. 30s or 5min") }
        while index < scalars.count {
            if scalars[index] == "-" { throw failure("negative time spans are not allowed") }
            // The number: digits, optionally a '.' and more digits.
            var whole: Int128 = 0
            var fraction: Int128 = 0
            var fractionScale: Int128 = 1
            var digits = 0
            while index < scalars.count, let digit = decimalDigit(scalars[index]) {
                whole = whole * 10 + Int128(digit)
                if whole > Int128(Int64.max) { throw failure("too large") }
                digits += 1
                index += 1
            }
            if index < scalars.count, scalars[index] == "." {
                index += 1
                while index < scalars.count, let digit = decimalDigit(scalars[index]) {
                    // Digits beyond a nanosecond's precision of a year cannot matter.
                    if fractionScale < 1_000_000_000_000_000_000 {
                        fraction = fraction * 10 + Int128(digit)
                        fractionScale *= 10
                    }
                    digits += 1
                    index += 1
                }
            }
            if digits == 0 {
                let rest = String(String.UnicodeScalarView(scalars[index...]))
                throw failure("expected a number at \"\(rest)\"")
            }
            let afterNumber = index
            skipWhitespace()
            // The unit: a run of letters (and the micro sign).
            let unitStart = index
            while index < scalars.count, scalars[index].properties.isAlphabetic { index += 1 }
            let name = String(String.UnicodeScalarView(scalars[unitStart..<index]))
            let length: Int128
            if name.isEmpty {
                // A bare number is seconds, but must stand alone: "1.2.3s" is a typo, not 1.5s.
                if afterNumber < scalars.count, !scalars[afterNumber].properties.isWhitespace {
                    let rest = String(String.UnicodeScalarView(scalars[afterNumber...]))
                    throw failure("unexpected \"\(rest)\"")
                }
                length = second
            } else if let unit = units.first(where: { $0.names.contains(name) }) {
                length = unit.nanoseconds
            } else {
                throw failure("unknown unit \"\(name)\"; use ns, us, ms, s, min, h, d, w, M or y")
            }
            total += whole * length + fraction * length / fractionScale
            if total > Int128(Int64.max) { throw failure("too large") }
            skipWhitespace()
        }
        return .nanoseconds(Int64(total))
    }

    /// Formats a duration the way systemd prints time spans: `5min`, `1h 30min`,
    /// `500ms`, `0`. Parsing the result gives the same duration back (to the nanosecond).
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        var remaining = Int128(seconds) * second + Int128(attoseconds / 1_000_000_000)
        if remaining == 0 { return "0" }
        let sign = remaining < 0 ? "-" : ""
        remaining = remaining < 0 ? -remaining : remaining
        var parts: [String] = []
        for unit in units where remaining >= unit.nanoseconds {
            parts.append("\(remaining / unit.nanoseconds)\(unit.names[0])")
            remaining %= unit.nanoseconds
        }
        return sign + parts.joined(separator: " ")
    }

    static func decimalDigit(_ scalar: Unicode.Scalar) -> Int? {
        guard scalar.value >= 48, scalar.value <= 57 else { return nil }
        return Int(scalar.value - 48)
    }
}
