internal import Glibc
import SyncCore

/// Numbers, sizes and times as people read them in `syncctl` output.
public enum HumanFormat {
    /// `text` (from syncd: a server's error, a record's ID) safe for a terminal: control bytes but line breaks as
    /// `\xNN`, as syncd's log writes them, so no escape sequence retitles or clears the terminal.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { PrintableText.escaping(String($0)) }.joined(separator: "\n")
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
