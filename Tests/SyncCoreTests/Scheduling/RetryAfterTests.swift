import Testing
@testable import SyncCore

@Suite("RetryAfter")
struct RetryAfterTests {
    /// 1994-11-06T08:49:37Z, the RFC's example date.
    static let example: Int64 = 784_111_777

    @Test(arguments: [
        ("120", Duration.seconds(120)),
        ("0", .zero),
        ("  30\t", .seconds(30)),
        ("-5", .zero),
    ])
    func delaySeconds(value: String, expected: Duration) {
        #expect(RetryAfter.parse(value, now: Self.example) == expected)
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",   // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",        // asctime
    ])
    func httpDateFormatsAllMeanTheSameInstant(value: String) {
        #expect(RetryAfter.httpDate(value, now: Self.example) == Self.example)
        #expect(RetryAfter.parse(value, now: Self.example - 90) == .seconds(90))
    }

    @Test func dateInThePastMeansNoDelay() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.example + 3600) == .zero)
    }

    @Test func futureImfFixdate() {
        // 2026-11-29T10:00:00Z
        #expect(RetryAfter.parse("Sun, 29 Nov 2026 10:00:00 GMT", now: 1_795_946_400 - 300) == .seconds(300))
        #expect(RetryAfter.httpDate("Tue, 29 Feb 2000 00:00:00 GMT", now: 0) == 951_782_400)
    }

    @Test func rfc850TwoDigitYearMoreThan50YearsAheadIsThePreviousCentury() {
        let now: Int64 = 1_795_946_400  // in 2026
        // "30" → 2030 (4 years ahead); "94" → 1994, not 2094.
        #expect(RetryAfter.httpDate("Friday, 01-Jan-30 00:00:00 GMT", now: now) == 1_893_456_000)
        #expect(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == Self.example)
    }

    @Test func asctimeWithTwoDigitDay() {
        #expect(RetryAfter.httpDate("Sun Nov 29 10:00:00 2026", now: 0) == 1_795_946_400)
    }

    @Test(arguments: [
        "", "soon", "1.5", "12abc", "0x10",
        "Sun, 06 Nov 1994 08:49:37 UTC",      // must be GMT
        "Sun, 31 Nov 1994 08:49:37 GMT",      // no 31 November
        "Sun, 06 Nov 1994 24:00:00 GMT",      // hour out of range
        "Sun, 06 Nov 1994 08:49 GMT",         // no seconds
        "Sun, 06 Foo 1994 08:49:37 GMT",      // bad month
        "Funday, 06-Nov-94 08:49:37 GMT",     // bad day name
        "Sun, 06-Nov-94 08:49:37 GMT",        // RFC 850 needs the long day name
        "Sun Nov  6 08:49:37",                // asctime without year
        "Thu, 29 Feb 2001 00:00:00 GMT",      // not a leap year
    ])
    func garbageIsNil(value: String) {
        #expect(RetryAfter.parse(value, now: Self.example) == nil)
    }

    @Test func hugeDelaySecondsSaturatesInsteadOfTrapping() {
        #expect(RetryAfter.parse("99999999999999999999999", now: 0) == .seconds(Int64.max))
    }
}
