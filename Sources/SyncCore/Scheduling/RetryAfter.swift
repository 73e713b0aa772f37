// The `Retry-After` response header (RFC 9110 §10.2.3), turned into a delay.
// Pure: the caller passes the current wall-clock time (seconds since the Unix
// epoch) for HTTP-dates; the scheduler only ever sees the resulting Duration
// and keeps time on the monotonic clock.

/// Parsing of the `Retry-After` header.
public enum RetryAfter {
    /// The delay a `Retry-After` value asks for, or nil if it is malformed.
    ///
    /// Accepts `delay-seconds` (`120`) and an HTTP-date in any of the three
    /// formats of RFC 9110 §5.6.7: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
    /// the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit
    /// year more than 50 years ahead of `now` means the previous century, as
    /// §5.6.7 requires) and asctime (`Sun Nov  6 08:49:37 1994`). A date in the
    /// past, or a negative number, means no delay (zero). Surrounding spaces and
    /// tabs are ignored; names are case-sensitive as in the grammar; the
    /// weekday must be a valid name but is not checked against the date (as
    /// most recipients do).
    ///
    /// - Parameters:
    ///   - headerValue: the field value.
    ///   - now: the current wall-clock time in seconds since 1970-01-01T00:00:00Z.
    public static func parse(_ headerValue: String, now: Int64) -> Duration? {
        let value = headerValue.trimmed(where: \.isBlank)
        if let seconds = delaySeconds(value) {
            return .seconds(max(0, seconds))
        }
        guard let date = httpDate(value, now: now) else { return nil }
        return date > now ? .seconds(date - now) : .zero
    }

    /// An HTTP-date as seconds since the Unix epoch, or nil if malformed.
    public static func httpDate(_ value: String, now: Int64) -> Int64? {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
           shortDayNames.contains(String(fields[0].dropLast())), fields[1].count == 2,
           let day = number(fields[1]), let month = month(fields[2]),
           fields[3].count == 4, let year = number(fields[3]) {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            return timestamp(year: year, month: month, day: day, time: fields[4])
        }
        if fields.count == 4, fields[0].hasSuffix(","), fields[3] == "GMT",
           longDayNames.contains(String(fields[0].dropLast())) {
            // rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[0].count == 2, parts[2].count == 2,
                  let day = number(parts[0]), let month = month(parts[1]),
                  let shortYear = number(parts[2]) else { return nil }
            return timestamp(year: fullYear(shortYear, now: now), month: month, day: day, time: fields[2])
        }
        if fields.count == 5, shortDayNames.contains(fields[0]),
           let month = month(fields[1]), (1...2).contains(fields[2].count), let day = number(fields[2]),
           fields[4].count == 4, let year = number(fields[4]) {
            // asctime-date: Sun Nov  6 08:49:37 1994
            return timestamp(year: year, month: month, day: day, time: fields[3])
        }
        return nil
    }

    // MARK: Pieces

    private static let shortDayNames: Set<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames: Set<String> = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `delay-seconds = 1*DIGIT`; also `-1*DIGIT`, which we read as zero.
    private static func delaySeconds(_ value: String) -> Int64? {
        if value.hasPrefix("-") {
            return number(String(value.dropFirst())) == nil ? nil : 0
        }
        return number(value)
    }

    /// A run of ASCII digits as a number, saturating at `Int64.max`; nil if
    /// empty or not all digits.
    private static func number(_ text: String) -> Int64? {
        guard !text.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (scaled, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = scaled.addingReportingOverflow(Int64(byte - 0x30))
            result = overflow1 || overflow2 ? .max : sum
        }
        return result
    }

    private static func month(_ name: String) -> Int64? {
        monthNames.firstIndex(of: name).map { Int64($0 + 1) }
    }

    /// RFC 9110 §5.6.7: a two-digit year that appears to be more than 50 years
    /// in the future is the most recent past year with the same last two digits.
    private static func fullYear(_ shortYear: Int64, now: Int64) -> Int64 {
        let currentYear = civilYear(daysSinceEpoch: floorDivide(now, 86_400))
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return year
    }

    /// Seconds since the epoch of a validated date and `HH:MM:SS` time (GMT).
    private static func timestamp(year: Int64, month: Int64, day: Int64, time: String) -> Int64? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
              let hour = number(parts[0]), let minute = number(parts[1]), let second = number(parts[2]),
              hour < 24, minute < 60, second <= 60,  // 60: a leap second
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              (1...9999).contains(year)
        else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant,
    /// "chrono-Compatible Low-Level Date Algorithms", days_from_civil).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year of a day since 1970-01-01 (Hinnant's civil_from_days).
    static func civilYear(daysSinceEpoch days: Int64) -> Int64 {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a - b + 1) / b
    }
}
