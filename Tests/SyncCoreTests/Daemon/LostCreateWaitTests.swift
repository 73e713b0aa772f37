import Testing
@testable import SyncCore

/// When a create whose answer was lost may be sent again, on the boot clock of one boot.
@Suite("LostCreateWait")
struct LostCreateWaitTests {
    private func verdict(_ boot: String?, _ at: Int64?, now: Int64, in current: String = "b1", wait: Duration = .seconds(60)) -> LostCreateWait.Verdict {
        LostCreateWait.verdict(attemptBoot: boot, attemptUptime: at, boot: current, uptime: now, wait: wait)
    }

    @Test func theWaitRunsOnTheBootClockOfTheSameBoot() {
        #expect(verdict("b1", 10_000, now: 10_000) == .waiting(remainingMilliseconds: 60_000))
        #expect(verdict("b1", 10_000, now: 69_999) == .waiting(remainingMilliseconds: 1))
        #expect(verdict("b1", 10_000, now: 70_000) == .elapsed)
        #expect(verdict("b1", 10_000, now: 9_000_000) == .elapsed)
    }

    @Test func anotherBootOrNoStampStartsTheWaitAnew() {
        #expect(verdict("b0", 10_000, now: 9_000_000) == .restamp)
        #expect(verdict(nil, nil, now: 5) == .restamp)
        #expect(verdict("b1", nil, now: 5) == .restamp)
        // A stamp later than now cannot be of this boot's clock: stamped anew rather than waiting for ever.
        #expect(verdict("b1", 50_000, now: 10_000) == .restamp)
    }

    @Test func fractionsOfAMillisecondRoundTheWaitUp() {
        #expect(verdict("b1", 0, now: 1_499, wait: .milliseconds(1_500)) == .waiting(remainingMilliseconds: 1))
        #expect(verdict("b1", 0, now: 1, wait: .nanoseconds(1)) == .elapsed)
        #expect(verdict("b1", 0, now: 0, wait: .nanoseconds(1)) == .waiting(remainingMilliseconds: 1))
    }

    @Test func theRemainingTimeOfEachVerdict() {
        #expect(LostCreateWait.remainingMilliseconds(.restamp, wait: .seconds(90)) == 90_000)
        #expect(LostCreateWait.remainingMilliseconds(.waiting(remainingMilliseconds: 42), wait: .seconds(90)) == 42)
        #expect(LostCreateWait.remainingMilliseconds(.elapsed, wait: .seconds(90)) == 0)
    }
}
