/// A wall-clock time, shown to people and stored as RFC 3339 UTC text.
/// Intervals never use it: those run on the monotonic clock.
public struct Timestamp: Sendable, Equatable, Comparable, Hashable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var secondsSinceEpoch: Int64

    /// Creates a timestamp.
    public init(secondsSinceEpoch: Int64) { self.secondsSinceEpoch = secondsSinceEpoch }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.secondsSinceEpoch < b.secondsSinceEpoch }

    /// RFC 3339 text in UTC with second precision, e.g. `2026-11-29T10:00:00Z`.
    public var rfc3339: String {
        let (days, secondOfDay) = floorDivide(secondsSinceEpoch, 86_400)
        let (year, month, day) = Timestamp.civil(fromDays: days)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    /// A compact UTC form for file names, e.g. `20261129T100000Z`.
    public var compact: String {
        rfc3339.filter { $0 != "-" && $0 != ":" }
    }

    /// Parses RFC 3339 (`2026-11-29T10:00:00Z`, `…T10:00:00.123+01:00`); nil if malformed.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " "),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
              let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                  let hours = number(bytes, index + 1, 2), let minutes = number(bytes, index + 4, 2) else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = Timestamp.days(fromCivil: year, month, day)
        secondsSinceEpoch = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
    }

    /// Days since the epoch for a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since the epoch (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let q = a / b, r = a % b
    return r < 0 ? (q - 1, r + b) : (q, r)
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}

private func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int64? {
    guard start + count <= bytes.count else { return nil }
    var value: Int64 = 0
    for byte in bytes[start..<start + count] {
        guard (48...57).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 48)
    }
    return value
}
