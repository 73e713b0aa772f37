internal import Glibc
import SyncCore

/// Numbers, sizes and times as people read them in `syncctl` output.
public enum HumanFormat {
    /// `text` (from syncd: a server's error, a record's ID, a table cell) safe for a terminal on one line: every
    /// control character — C0 (a line break too), DEL and C1 (U+0080–U+009F: U+009B is CSI to a terminal) — as
    /// `\xNN`, as syncd's log writes them (`PrintableText.escaping`), so no escape sequence retitles or clears the
    /// terminal and no ID with a line break splits a table into a made-up line.
    public static func printable(_ text: String) -> String {
        PrintableText.escaping(text)
    }

    /// A text of several lines (a whole message syncctl wrote, which may quote syncd's) safe for a terminal: as
    /// `printable`, but its line breaks kept.
    public static func printableLines(_ text: String) -> String {
        guard text.contains("\n") else { return printable(text) }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { printable(String($0)) }.joined(separator: "\n")
    }

    /// JSON text shown to a person (`get` without `--json`, a preview in `list`, the fields of `conflicts`) safe
    /// for a terminal: the control characters JSON may leave raw (DEL and C1, U+007F–U+009F) as `\u00XX`, which
    /// reads back as the same JSON value. They can only be inside strings, where that escape means the same.
    public static func printableJSON(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return text }
        var out = String.UnicodeScalarView()
        let hex = Array("0123456789ABCDEF".unicodeScalars)  // as JSONText writes C0
        for scalar in text.unicodeScalars {
            guard (0x7F...0x9F).contains(scalar.value) else { out.append(scalar); continue }
            out.append(contentsOf: "\\u00".unicodeScalars)
            out.append(hex[Int(scalar.value >> 4)])
            out.append(hex[Int(scalar.value & 0xF)])
        }
        return String(out)
    }

    /// `12,000`.
    public static func count(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (position, digit) in digits.enumerated() {
            if position > 0, (digits.count - position) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// `1.2 MB` (decimal units, one decimal below 10).
    public static func bytes(_ value: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1000, unit < units.count - 1 {
            amount /= 1000
            unit += 1
        }
        if unit == 0 { return "\(value) B" }
        let tenths = Int64((amount * 10).rounded())
        return tenths < 100 ? "\(tenths / 10).\(tenths % 10) \(units[unit])" : "\(Int64(amount.rounded())) \(units[unit])"
    }

    /// A span like systemd shows it: `12s`, `3min 4s`, `2h 5min`, `3d 4h`.
    public static func span(seconds: Int64) -> String {
        let seconds = max(0, seconds)
        let days = seconds / 86_400, hours = seconds % 86_400 / 3600, minutes = seconds % 3600 / 60, rest = seconds % 60
        if days > 0 { return hours > 0 ? "\(days)d \(hours)h" : "\(days)d" }
        if hours > 0 { return minutes > 0 ? "\(hours)h \(minutes)min" : "\(hours)h" }
        if minutes > 0 { return rest > 0 ? "\(minutes)min \(rest)s" : "\(minutes)min" }
        return "\(rest)s"
    }

    /// `12s ago`, `3min ago`, `2h ago`, `4d ago` (largest unit only); `in 8s` for the future.
    public static func relative(_ time: Timestamp, now: Timestamp) -> String {
        let delta = now.secondsSinceEpoch - time.secondsSinceEpoch
        let text = coarse(seconds: abs(delta))
        return delta >= 0 ? "\(text) ago" : "in \(text)"
    }

    /// The largest unit of a span: `12s`, `3min`, `2h`, `4d`.
    public static func coarse(seconds: Int64) -> String {
        if seconds >= 86_400 { return "\(seconds / 86_400)d" }
        if seconds >= 3600 { return "\(seconds / 3600)h" }
        if seconds >= 60 { return "\(seconds / 60)min" }
        return "\(seconds)s"
    }

    /// Local wall-clock `HH:MM` of a timestamp (the C library's idea of the local zone).
    public static func localClock(_ time: Timestamp) -> String {
        guard let parts = localParts(time) else { return time.rfc3339 }
        return twoDigits(parts.tm_hour) + ":" + twoDigits(parts.tm_min)
    }

    /// `HH:MM` when `time` is on the same local day as `now`, else `YYYY-MM-DD HH:MM` (as systemctl
    /// shows a time that is not today with its date).
    public static func localTime(_ time: Timestamp, now: Timestamp) -> String {
        guard let parts = localParts(time), let today = localParts(now) else { return time.rfc3339 }
        let clock = twoDigits(parts.tm_hour) + ":" + twoDigits(parts.tm_min)
        if parts.tm_year == today.tm_year && parts.tm_yday == today.tm_yday { return clock }
        return "\(parts.tm_year + 1900)-" + twoDigits(parts.tm_mon + 1) + "-" + twoDigits(parts.tm_mday) + " " + clock
    }

    static func localParts(_ time: Timestamp) -> tm? {
        var seconds = time_t(time.secondsSinceEpoch)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        return parts
    }

    static func twoDigits(_ value: Int32) -> String {
        (value < 10 ? "0" : "") + String(value)
    }

    /// The current wall-clock time, for showing ages to people.
    public static func now() -> Timestamp {
        Timestamp(secondsSinceEpoch: Int64(time(nil)))
    }
}
