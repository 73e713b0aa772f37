import Testing
@testable import SyncCore

/// Milliseconds after the origin.
private func ms(_ milliseconds: Int) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: UInt64(milliseconds) * 1_000_000)
}

/// A source scheduler driven by a manual clock: the test says what happens
/// when, and `run(until:)` advances time deadline by deadline, as the daemon's
/// sleep-until-deadline loop would.
private struct Harness<J: JitterSource> {
    var scheduler: SourceScheduler
    var jitter: J
    var starts: [MonotonicInstant] = []

    init(settings: SchedulerSettings = SchedulerSettings(), jitter: J) {
        self.scheduler = SourceScheduler(name: "posts", settings: settings)
        self.jitter = jitter
    }

    @discardableResult
    mutating func feed(_ event: SchedulerEvent, at instant: MonotonicInstant) -> [SchedulerAction] {
        let actions = scheduler.handle(event, at: instant, jitter: &jitter)
        for _ in actions { starts.append(scheduler.now) }
        return actions
    }

    /// Ticks at every deadline up to `end`; stops early at a started refresh
    /// if `stopAtStart` (so the test can decide its outcome).
    mutating func run(until end: MonotonicInstant, stopAtStart: Bool = true) {
        while let deadline = scheduler.nextDeadline(), deadline <= end {
            let actions = feed(.tick, at: deadline)
            if stopAtStart && !actions.isEmpty { return }
        }
    }

    /// Starts the source and lets its first refresh succeed at `instant`.
    mutating func startHealthy(at instant: MonotonicInstant) {
        feed(.trigger(.startup), at: instant)
        feed(.refreshFinished(.success), at: instant)
    }

    var state: SourceStateName { scheduler.status.state }
}

private let start = SchedulerAction.startRefresh(source: "posts")
private let transient = RefreshOutcome.failure(.transient, retryAfter: nil)

@Suite("SourceScheduler")
struct SourceSchedulerTests {
    @Test func freshSourceWaitsForStartupWithNoDeadline() {
        let scheduler = SourceScheduler(name: "posts")
        #expect(scheduler.nextDeadline() == nil)
        #expect(scheduler.status.state == .idle)
        #expect(scheduler.status.attempt == 0)
    }

    @Test func startupAndManualTriggersStartAtOnce() {
        var harness = Harness(jitter: ConstantJitter(0.5))
        #expect(harness.feed(.trigger(.startup), at: ms(0)) == [start])
        #expect(harness.state == .syncing)
        #expect(harness.scheduler.status.attempt == 1)
        harness.feed(.refreshFinished(.success), at: ms(300))
        harness.feed(.trigger(.network), at: ms(1000))
        #expect(harness.feed(.trigger(.manual), at: ms(1100)) == [start])
    }

    @Test func idleSourceDeadlineIsThePeriodicRefreshAndNothingElse() {
        var harness = Harness(jitter: ConstantJitter(0.5))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(.unchanged), at: ms(1000))
        // interval 15 min + 0.5 × 30 s after the completion.
        let periodic = ms(1000 + 900_000 + 15_000)
        #expect(harness.scheduler.nextDeadline() == periodic)
        #expect(harness.scheduler.status == SourceScheduleStatus(
            state: .idle, attempt: 0, nextAttempt: nil, nextRefresh: periodic, retryAfterUntil: nil))
        // Nothing happens before it; exactly one refresh at it.
        #expect(harness.feed(.tick, at: ms(1000 + 900_000 + 14_999)).isEmpty)
        #expect(harness.feed(.tick, at: periodic) == [start])
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 1_000])
    func periodicDelayStaysWithinIntervalPlusRandomizedDelay(seed: UInt64) {
        var harness = Harness(jitter: SplitMix64Jitter(seed: seed))
        var finishedAt = ms(0)
        harness.feed(.trigger(.startup), at: finishedAt)
        for _ in 0..<50 {
            harness.feed(.refreshFinished(.success), at: finishedAt)
            let deadline = try! #require(harness.scheduler.nextDeadline())
            let delay = deadline - finishedAt
            #expect(delay >= .seconds(900) && delay <= .seconds(930))
            harness.run(until: deadline)
            finishedAt = deadline + .milliseconds(200)
        }
    }

    @Test func tenTriggersWithinDebounceCoalesceIntoOneRefresh() {
        var harness = Harness(jitter: SplitMix64Jitter(seed: 7))
        harness.startHealthy(at: ms(0))
        harness.starts.removeAll()
        for i in 0..<10 {  // 10 triggers in 1.8 s (< 1.9 s)
            #expect(harness.feed(.trigger(.network), at: ms(10_000 + i * 200)).isEmpty)
        }
        #expect(harness.scheduler.nextDeadline() == ms(11_800 + 2_000))
        #expect(harness.scheduler.status.nextAttempt == ms(13_800))
        harness.run(until: ms(60_000), stopAtStart: false)
        #expect(harness.starts == [ms(13_800)])
    }

    @Test func constantFlappingStartsNoLaterThanMaxDebounceWaitAfterTheFirstTrigger() {
        let settings = SchedulerSettings()
        #expect(settings.maxDebounceWait == .seconds(8))
        var harness = Harness(settings: settings, jitter: SplitMix64Jitter(seed: 7))
        harness.startHealthy(at: ms(0))
        harness.starts.removeAll()
        // A trigger every second for a minute: debounce alone would never fire.
        for second in 0..<60 {
            let now = ms(10_000 + second * 1000)
            harness.run(until: now, stopAtStart: false)
            harness.feed(.trigger(.network), at: now)
            if harness.state == .syncing { harness.feed(.refreshFinished(.success), at: now + .milliseconds(500)) }
        }
        #expect(harness.starts.first == ms(18_000))
        // And it keeps refreshing, at least once per maxDebounceWait + a refresh.
        #expect(harness.starts.count >= 6)
        for (earlier, later) in zip(harness.starts, harness.starts.dropFirst()) {
            #expect(later - earlier <= .seconds(9))
        }
    }

    /// A link that flaps faster than the debounce (up 1.5 s, down 0.5 s), fed as the daemon feeds it
    /// (link state, then a network trigger when it comes back): the wait is capped across the flaps.
    @Test func aLinkFlappingFasterThanTheDebounceCannotStarveRefreshes() {
        var harness = Harness(jitter: SplitMix64Jitter(seed: 11))
        harness.startHealthy(at: ms(0))
        harness.starts.removeAll()
        for cycle in 0..<300 {  // ten minutes
            let up = ms(10_000 + cycle * 2_000), down = up + .milliseconds(1_500)
            harness.run(until: up, stopAtStart: false)
            harness.feed(.linkState(online: true), at: up)
            harness.feed(.trigger(.network), at: up)
            if harness.state == .syncing { harness.feed(.refreshFinished(.success), at: up + .milliseconds(200)) }
            harness.run(until: down, stopAtStart: false)
            if harness.state == .syncing { harness.feed(.refreshFinished(.success), at: down) }
            harness.feed(.linkState(online: false), at: down)
        }
        // The first refresh comes when the cap (8 s after the first link-up) has passed and the link is up.
        #expect(harness.starts.first == ms(18_000))
        #expect(harness.starts.count >= 60)
        for (earlier, later) in zip(harness.starts, harness.starts.dropFirst()) {
            #expect(later - earlier <= .seconds(11))  // the cap, plus at most one down-and-up of the link
        }
    }

    @Test func aLongOutageWithNothingPendingStillDebouncesTheLinkComingBack() {
        var harness = Harness(jitter: SplitMix64Jitter(seed: 5))
        harness.startHealthy(at: ms(0))
        harness.starts.removeAll()
        harness.feed(.linkState(online: false), at: ms(1_000))
        harness.feed(.linkState(online: true), at: ms(600_000))
        harness.feed(.trigger(.network), at: ms(600_000))
        #expect(harness.starts.isEmpty)
        harness.run(until: ms(700_000))
        #expect(harness.starts == [ms(602_000)])
    }

    @Test(arguments: [1, 2, 10, 100])
    func triggersDuringARefreshCauseExactlyOneFollowUp(count: Int) {
        var harness = Harness(jitter: SplitMix64Jitter(seed: 3))
        harness.feed(.trigger(.startup), at: ms(0))
        for i in 0..<count {
            #expect(harness.feed(.trigger(i.isMultiple(of: 2) ? .network : .manual), at: ms(10 + i)).isEmpty)
        }
        #expect(harness.state == .syncing)
        harness.feed(.refreshFinished(.success), at: ms(5_000))
        // A manual trigger was among them (count ≥ 2), so the follow-up is immediate;
        // otherwise it starts 2 s after the last trigger, which has passed.
        #expect(harness.starts == [ms(0), ms(5_000)])
        harness.feed(.refreshFinished(.success), at: ms(6_000))
        harness.run(until: ms(600_000), stopAtStart: false)
        #expect(harness.starts.count == 2)
    }

    @Test func followUpIsDebouncedFromTheLastTriggerDuringTheRefresh() {
        var harness = Harness(jitter: SplitMix64Jitter(seed: 3))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.trigger(.network), at: ms(900))
        harness.feed(.refreshFinished(.success), at: ms(1_000))
        #expect(harness.scheduler.nextDeadline() == ms(2_900))
        harness.run(until: ms(10_000))
        #expect(harness.starts == [ms(0), ms(2_900)])
    }

    @Test(arguments: Array(UInt64(0)..<100))
    func backoffDelaysStayWithinBoundsAndAttemptsStopAtMaxAttempts(seed: UInt64) {
        let settings = SchedulerSettings()
        var harness = Harness(settings: settings, jitter: SplitMix64Jitter(seed: seed))
        harness.startHealthy(at: ms(0))
        harness.feed(.trigger(.manual), at: ms(1_000))
        var failedAt = ms(1_000)
        for attempt in 1...settings.maxAttempts {
            #expect(harness.scheduler.status.attempt == attempt)
            #expect(harness.state == .syncing)
            failedAt = harness.scheduler.now + .milliseconds(100)
            harness.feed(.refreshFinished(transient), at: failedAt)
            if attempt == settings.maxAttempts { break }
            #expect(harness.state == .backoff)
            let retryAt = try! #require(harness.scheduler.status.nextAttempt)
            let delay = retryAt - failedAt
            let ceiling = min(settings.maxDelay, settings.initialDelay * (1 << attempt))
            #expect(delay >= settings.initialDelay)
            #expect(delay <= ceiling)
            #expect(delay <= settings.maxDelay)
            harness.run(until: retryAt)
        }
        // Used up: rests in `error`; the next automatic refresh is the periodic one.
        #expect(harness.state == .error)
        #expect(harness.scheduler.status.attempt == settings.maxAttempts)
        #expect(harness.scheduler.status.nextAttempt == nil)
        let deadline = try! #require(harness.scheduler.nextDeadline())
        #expect(deadline - failedAt >= settings.interval)
        // Any trigger starts a new cycle at attempt 1.
        harness.feed(.trigger(.network), at: failedAt + .seconds(10))
        harness.run(until: failedAt + .seconds(20))
        #expect(harness.state == .syncing)
        #expect(harness.scheduler.status.attempt == 1)
    }

    /// A local failure (a full disk) is never given up: past MaxAttempts= it is retried every MaxDelaySec=.
    @Test func aLocalFailureKeepsRetryingAtTheLongestDelayPastMaxAttempts() {
        let settings = SchedulerSettings(initialDelay: .seconds(1), maxDelay: .seconds(60), maxAttempts: 3)
        var harness = Harness(settings: settings, jitter: ConstantJitter(0))
        harness.startHealthy(at: ms(0))
        harness.feed(.trigger(.manual), at: ms(1_000))
        var delays: [Duration] = []
        for _ in 1...6 {
            let failedAt = harness.scheduler.now
            harness.feed(.refreshFinished(.failure(.local, retryAfter: nil)), at: failedAt)
            #expect(harness.state == .backoff)
            let retryAt = harness.scheduler.status.nextAttempt ?? failedAt
            delays.append(retryAt - failedAt)
            harness.run(until: retryAt)
            #expect(harness.state == .syncing)
        }
        #expect(delays == [.seconds(1), .seconds(1), .seconds(60), .seconds(60), .seconds(60), .seconds(60)])
        #expect(harness.scheduler.status.attempt == settings.maxAttempts + 1)
        // Space again: the next attempt succeeds and the source is healthy.
        harness.feed(.refreshFinished(.success), at: harness.scheduler.now)
        #expect(harness.state == .idle)
        #expect(harness.scheduler.status.attempt == 0)
    }

    @Test func retryAfterIsHonouredAndCapped() {
        var harness = Harness(jitter: ConstantJitter(0.5))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(.failure(.transient, retryAfter: .seconds(120))), at: ms(1_000))
        #expect(harness.scheduler.nextDeadline() == ms(121_000))
        #expect(harness.scheduler.status.retryAfterUntil == ms(121_000))
        // A network change restarts the cycle early, but not before Retry-After.
        harness.feed(.trigger(.network), at: ms(5_000))
        #expect(harness.scheduler.nextDeadline() == ms(121_000))
        harness.run(until: ms(200_000))
        #expect(harness.starts == [ms(0), ms(121_000)])
        #expect(harness.scheduler.status.attempt == 1)  // a new cycle

        // An absurd Retry-After (a year) is capped at 24 h.
        harness.feed(.refreshFinished(.failure(.transient, retryAfter: .seconds(365 * 86_400))), at: ms(122_000))
        #expect(harness.scheduler.nextDeadline() == ms(122_000) + .seconds(86_400))
        // A manual request is a person asking: it goes out at once.
        #expect(harness.feed(.trigger(.manual), at: ms(130_000)) == [start])
    }

    @Test func retryAfterShorterThanTheBackoffDelayDoesNotShortenIt() {
        let settings = SchedulerSettings(initialDelay: .seconds(10))
        var harness = Harness(settings: settings, jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(.failure(.transient, retryAfter: .seconds(1))), at: ms(0))
        #expect(harness.scheduler.nextDeadline() == ms(10_000))
    }

    @Test(arguments: [FailureKind.permanent])
    func permanentFailureIsNotRetriedUntilTheNextTrigger(kind: FailureKind) {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(.failure(kind, retryAfter: nil)), at: ms(500))
        #expect(harness.state == .error)
        #expect(harness.scheduler.status.nextAttempt == nil)
        // No retry at backoff scale: the only deadline is the periodic trigger.
        #expect(harness.scheduler.nextDeadline() == ms(500 + 900_000))
        harness.run(until: ms(899_999))
        #expect(harness.starts == [ms(0)])
        // A trigger starts a new cycle.
        harness.feed(.trigger(.reload), at: ms(600_000))
        harness.run(until: ms(610_000))
        #expect(harness.starts == [ms(0), ms(602_000)])
        #expect(harness.scheduler.status.attempt == 1)
    }

    @Test func networkTriggerRestartsBackoffEarlyWithTheCounterReset() {
        var harness = Harness(jitter: ConstantJitter(0.999))
        harness.startHealthy(at: ms(0))
        harness.feed(.trigger(.manual), at: ms(1_000))
        for _ in 1...5 {
            harness.feed(.refreshFinished(transient), at: harness.scheduler.now)
            harness.run(until: harness.scheduler.now + .seconds(3600))
        }
        harness.feed(.refreshFinished(transient), at: harness.scheduler.now)
        #expect(harness.scheduler.status.attempt == 6)
        let failedAt = harness.scheduler.now
        #expect(try! #require(harness.scheduler.nextDeadline()) - failedAt > .seconds(60))
        // The link changes: the retry comes after the debounce, as attempt 1.
        harness.feed(.trigger(.network), at: failedAt + .seconds(1))
        #expect(harness.scheduler.status.state == .backoff)
        #expect(harness.scheduler.nextDeadline() == failedAt + .seconds(3))
        harness.run(until: failedAt + .seconds(3))
        #expect(harness.state == .syncing)
        #expect(harness.scheduler.status.attempt == 1)
    }

    @Test func networkTriggerNeverPostponesASoonerRetry() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(transient), at: ms(0))
        #expect(harness.scheduler.nextDeadline() == ms(1_000))
        harness.feed(.trigger(.network), at: ms(500))
        #expect(harness.scheduler.nextDeadline() == ms(1_000))
    }

    @Test func periodicAndStartupTriggersKeepTheBackoffSchedule() {
        var harness = Harness(jitter: ConstantJitter(0.5))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(transient), at: ms(0))
        let deadline = harness.scheduler.nextDeadline()
        #expect(harness.feed(.trigger(.periodic), at: ms(100)).isEmpty)
        #expect(harness.feed(.trigger(.startup), at: ms(200)).isEmpty)
        #expect(harness.scheduler.nextDeadline() == deadline)
    }

    @Test func offlinePausesPeriodicRefreshesButManualStillWorks() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.startHealthy(at: ms(0))
        harness.starts.removeAll()
        harness.feed(.linkState(online: false), at: ms(1_000))
        #expect(harness.state == .offline)
        #expect(harness.scheduler.nextDeadline() == nil)
        // Hours pass, network hints arrive: nothing goes out.
        #expect(harness.feed(.trigger(.network), at: ms(2_000)).isEmpty)
        #expect(harness.feed(.tick, at: ms(7_200_000)).isEmpty)
        // A person asks: one refresh, and the source stays offline after it.
        #expect(harness.feed(.trigger(.manual), at: ms(7_200_000)) == [start])
        harness.feed(.refreshFinished(.success), at: ms(7_201_000))
        #expect(harness.state == .offline)
        #expect(harness.scheduler.nextDeadline() == nil)
        // The link comes back: a network refresh, debounced.
        #expect(harness.feed(.linkState(online: true), at: ms(7_300_000)).isEmpty)
        #expect(harness.scheduler.nextDeadline() == ms(7_302_000))
        harness.run(until: ms(7_400_000))
        #expect(harness.starts == [ms(7_200_000), ms(7_302_000)])
    }

    @Test func offlinePausesBackoffRetries() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.refreshFinished(transient), at: ms(0))
        harness.feed(.linkState(online: false), at: ms(500))
        #expect(harness.scheduler.nextDeadline() == nil)
        #expect(harness.scheduler.status.attempt == 1)
        harness.feed(.linkState(online: true), at: ms(60_000))
        harness.run(until: ms(70_000))
        #expect(harness.starts == [ms(0), ms(62_000)])
        #expect(harness.scheduler.status.attempt == 1)  // the cycle restarted
    }

    @Test func linkLossDuringARefreshTakesEffectWhenItEnds() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(0))
        harness.feed(.linkState(online: false), at: ms(100))
        #expect(harness.state == .syncing)
        harness.feed(.refreshFinished(transient), at: ms(200))
        #expect(harness.state == .offline)
        #expect(harness.scheduler.nextDeadline() == nil)
    }

    @Test func aRefreshEndWithoutARunningRefreshIsIgnored() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.startHealthy(at: ms(0))
        let before = harness.scheduler.state
        #expect(harness.feed(.refreshFinished(transient), at: ms(10)).isEmpty)
        #expect(harness.scheduler.state == before)
    }

    @Test func timeNeverRunsBackwards() {
        var harness = Harness(jitter: ConstantJitter(0))
        harness.feed(.trigger(.startup), at: ms(5_000))
        harness.feed(.refreshFinished(.success), at: ms(1_000))
        #expect(harness.scheduler.nextDeadline() == ms(5_000 + 900_000))
    }

    @Test func localChangeIsDebouncedWhenHealthyButKeepsABackoffSchedule() {
        var harness = Harness(jitter: ConstantJitter(0.5))
        harness.startHealthy(at: ms(0))
        #expect(harness.feed(.trigger(.localChange), at: ms(1_000)).isEmpty)
        harness.feed(.trigger(.localChange), at: ms(1_500))
        harness.run(until: ms(10_000))
        #expect(harness.starts == [ms(0), ms(3_500)])
        harness.feed(.refreshFinished(transient), at: ms(3_600))
        let retryAt = harness.scheduler.status.nextAttempt
        #expect(harness.state == .backoff)
        #expect(harness.feed(.trigger(.localChange), at: ms(3_700)).isEmpty)
        #expect(harness.scheduler.status.nextAttempt == retryAt)
        #expect(harness.scheduler.status.attempt == 1)
    }
}
