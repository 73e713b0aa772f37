import Testing
@testable import SyncCore

@Suite("MonotonicInstant")
struct MonotonicInstantTests {
    @Test func arithmetic() {
        let a = MonotonicInstant(nanoseconds: 5_000_000_000)
        #expect(a + .milliseconds(1_500) == MonotonicInstant(nanoseconds: 6_500_000_000))
        #expect(a + .seconds(-2) == MonotonicInstant(nanoseconds: 3_000_000_000))
        #expect((a + .seconds(3)) - a == .seconds(3))
        #expect(a - (a + .seconds(3)) == .seconds(-3))
        #expect(a < a + .nanoseconds(1))
    }

    @Test func saturatesInsteadOfTrapping() {
        #expect(MonotonicInstant(nanoseconds: 1) + .seconds(-10) == .zero)
        #expect(MonotonicInstant(nanoseconds: .max - 1) + .seconds(10) == MonotonicInstant(nanoseconds: .max))
        #expect(MonotonicInstant.zero + .seconds(Int64.max) == MonotonicInstant(nanoseconds: UInt64(Int64.max)))
    }

    @Test(arguments: [Duration.zero, .nanoseconds(1), .milliseconds(1_234), .seconds(86_400 * 365)])
    func offsetRoundTrip(offset: Duration) {
        #expect(MonotonicInstant(offset: offset).offset == offset)
    }

    @Test func negativeOffsetIsTheOrigin() {
        #expect(MonotonicInstant(offset: .seconds(-1)) == .zero)
    }

    @Test func description() {
        #expect(MonotonicInstant(nanoseconds: 12_345_678_901).description == "12.345s")
        #expect(MonotonicInstant(nanoseconds: 7_000_000).description == "0.007s")
    }
}
