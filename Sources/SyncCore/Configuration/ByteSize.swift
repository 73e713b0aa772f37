// Sizes as systemd writes them (parse_size() with base 1024): a number and an
// optional suffix. We add the unambiguous IEC spellings (KiB, MiB, ...), and
// refuse lowercase and SI-looking "KB" rather than guess which base was meant.

/// Parses and formats byte sizes such as `512`, `512K`, `64M`, `1G` (powers of 1024).
public enum ByteSize {
    /// Suffixes and their factors: `B` is bytes; `K`, `M`, `G`, `T`, `P`, `E` are
    /// powers of 1024, also spelled `KiB`, `MiB`, `GiB`, `TiB`, `PiB`, `EiB`.
    static let suffixes: [(name: String, factor: Int128)] = {
        var table: [(String, Int128)] = [("", 1), ("B", 1)]
        var factor: Int128 = 1
        for letter in ["K", "M", "G", "T", "P", "E"] {
            factor *= 1024
            table.append((letter, factor))
            table.append((letter + "iB", factor))
        }
        return table
    }()

    /// Parses a size in bytes.
    ///
    /// A non-negative decimal number (fractions allowed: `1.5G`; the result is
    /// rounded down to whole bytes), optional whitespace, and an optional suffix:
    /// `B`; `K`, `M`, `G`, `T`, `P`, `E` (powers of 1024); or the same as `KiB`,
    /// `MiB`, ... Suffixes are case-sensitive; `64m` and `1KB` are rejected.
    ///
    /// - Throws: `ValueError`, e.g. `invalid size "64m": unknown suffix "m"; use K, M, G or T (powers of 1024)`.
    public static func parse(_ text: String) throws(ValueError) -> Int64 {
        func failure(_ reason: String) -> ValueError {
            ValueError("invalid size \"\(text)\": \(reason)")
        }
        let trimmed = ConfigurationText.trimmed(text)
        if trimmed.isEmpty { throw failure("empty; use e.g. 512K or 64M") }
        if trimmed.hasPrefix("-") { throw failure("negative sizes are not allowed") }
        var whole: Int128 = 0
        var fraction: Int128 = 0
        var scale: Int128 = 1
        var digits = 0
        var rest = Substring(trimmed)
        while let first = rest.unicodeScalars.first, let digit = TimeSpan.decimalDigit(first) {
            whole = whole * 10 + Int128(digit)
            if whole > Int128(Int64.max) { throw failure("too large") }
            digits += 1
            rest = rest.dropFirst()
        }
        if rest.first == "." {
            rest = rest.dropFirst()
            while let first = rest.unicodeScalars.first, let digit = TimeSpan.decimalDigit(first) {
                if scale < 1_000_000_000_000_000_000 {
                    fraction = fraction * 10 + Int128(digit)
                    scale *= 10
                }
                digits += 1
                rest = rest.dropFirst()
            }
        }
        if digits == 0 { throw failure("expected a number, e.g. 512K or 64M") }
        let suffix = ConfigurationText.trimmed(rest)
        guard let factor = suffixes.first(where: { $0.name == suffix })?.factor else {
            throw failure("unknown suffix \"\(suffix)\"; use K, M, G or T (powers of 1024)")
        }
        let total = whole * factor + fraction * factor / scale
        if total > Int128(Int64.max) { throw failure("too large") }
        return Int64(total)
    }

    /// Formats a size with the largest suffix that divides it exactly: `256M`, `1536K`, `100`.
    public static func format(_ bytes: Int64) -> String {
        for (name, factor) in suffixes.reversed()
        where name.count == 1 && name != "B" && bytes != 0 && Int128(bytes) % factor == 0 {
            return "\(Int128(bytes) / factor)\(name)"
        }
        return "\(bytes)"
    }
}
