import Testing
@testable import SyncCore

/// When STATUS= is rebuilt and WATCHDOG=1 sent, on a manual clock.
@Suite struct NotifyPacingTests {
    let start = MonotonicInstant.zero + .seconds(10)
    let many = NotifyPacing.statusEveryEventLimit + 1

    /// The instant `milliseconds` after `start`.
    func at(_ milliseconds: Int) -> MonotonicInstant { start + .milliseconds(milliseconds) }

    @Test func withoutAWatchdogNothingIsEverDue() {
        var pacing = NotifyPacing(watchdogInterval: nil)
        pacing.start(at: start)
        #expect(pacing.nextWatchdog == nil)
        let due = pacing.watchdogDue(at: at(3_600_000))
        #expect(!due)
    }

    @Test func theWatchdogIsDueOneIntervalAfterTheStartThenOneAfterEachSend() {
        var pacing = NotifyPacing(watchdogInterval: .seconds(15))
        let beforeStart = pacing.watchdogDue(at: start)
        #expect(!beforeStart)
        pacing.start(at: start)
        #expect(pacing.nextWatchdog == at(15_000))
        #expect(pacing.deadlines == [at(15_000)])
        let early = pacing.watchdogDue(at: at(14_999))
        #expect(!early)
        #expect(pacing.nextWatchdog == at(15_000))
        // A late timer sends once and counts the next interval from the send.
        let late = pacing.watchdogDue(at: at(20_000))
        #expect(late)
        #expect(pacing.nextWatchdog == at(35_000))
        let again = pacing.watchdogDue(at: at(21_000))
        #expect(!again)
    }

    @Test func theFirstStatusIsBuiltAndNothingIsRebuiltUntilAChange() {
        var pacing = NotifyPacing(watchdogInterval: nil)
        let first = pacing.rebuildsStatus(at: start, sources: 1)
        #expect(first)
        #expect(pacing.statusSentAt == start)
        #expect(!pacing.changed)
        let unchanged = pacing.rebuildsStatus(at: at(5_000), sources: 1)
        #expect(!unchanged)
        pacing.changed = true
        let changed = pacing.rebuildsStatus(at: at(5_000), sources: 1)
        #expect(changed)
    }

    @Test func fewSourcesRebuildAfterEveryChange() {
        var pacing = NotifyPacing(watchdogInterval: nil)
        let few = NotifyPacing.statusEveryEventLimit
        let first = pacing.rebuildsStatus(at: start, sources: few)
        #expect(first)
        pacing.changed = true
        let next = pacing.rebuildsStatus(at: at(1), sources: few)
        #expect(next)
        #expect(pacing.statusDue == nil)
        #expect(pacing.deadlines.isEmpty)
    }

    @Test func manySourcesRebuildAtMostOnceASecondAndTheHeldChangeIsDue() {
        var pacing = NotifyPacing(watchdogInterval: nil)
        let first = pacing.rebuildsStatus(at: start, sources: many)
        #expect(first)  // the first one is never held back
        pacing.changed = true
        let soon = pacing.rebuildsStatus(at: at(300), sources: many)
        #expect(!soon)
        #expect(pacing.statusDue == start + NotifyPacing.statusSpacing)
        #expect(pacing.deadlines == [at(1_000)])
        #expect(pacing.changed)  // held, not lost
        let stillSoon = pacing.rebuildsStatus(at: at(999), sources: many)
        #expect(!stillSoon)
        let due = pacing.rebuildsStatus(at: at(1_000), sources: many)
        #expect(due)
        #expect(pacing.statusDue == nil)
        #expect(pacing.statusSentAt == at(1_000))
        #expect(!pacing.changed)
    }

    @Test func aChangeLongAfterTheLastRebuildIsBuiltAtOnceWhateverTheSources() {
        var pacing = NotifyPacing(watchdogInterval: .seconds(30))
        pacing.start(at: start)
        let first = pacing.rebuildsStatus(at: start, sources: many)
        #expect(first)
        pacing.changed = true
        let later = pacing.rebuildsStatus(at: at(2_000), sources: many)
        #expect(later)
        #expect(pacing.deadlines == [at(30_000)])
    }
}
