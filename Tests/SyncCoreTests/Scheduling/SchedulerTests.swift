import Testing
@testable import SyncCore

private func ms(_ milliseconds: Int) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: UInt64(milliseconds) * 1_000_000)
}

@Suite("Scheduler")
struct SchedulerTests {
    @Test func startupTriggersEverySourceAndDeadlineIsTheEarliest() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        for name in ["b", "a"] { scheduler.addSource(name, at: ms(0)) }
        #expect(scheduler.nextDeadline() == nil)
        let actions = scheduler.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        #expect(actions == [.startRefresh(source: "a"), .startRefresh(source: "b")])
        _ = scheduler.handle(.refreshFinished(.success), source: "a", at: ms(1_000), jitter: &jitter)
        _ = scheduler.handle(.refreshFinished(.failure(.transient, retryAfter: nil)), source: "b", at: ms(2_000), jitter: &jitter)
        #expect(scheduler.status(of: "a")?.state == .idle)
        #expect(scheduler.status(of: "b")?.state == .backoff)
        #expect(scheduler.nextDeadline() == ms(3_000))
        #expect(scheduler.handle(.tick, at: ms(3_000), jitter: &jitter) == [.startRefresh(source: "b")])
    }

    @Test func linkStateReachesEverySourceIncludingLaterOnes() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        scheduler.addSource("a", at: ms(0))
        _ = scheduler.handle(.linkState(online: false), at: ms(0), jitter: &jitter)
        scheduler.addSource("b", at: ms(10))
        #expect(scheduler.status(of: "a")?.state == .offline)
        #expect(scheduler.status(of: "b")?.state == .offline)
        #expect(scheduler.handle(.trigger(.startup), at: ms(20), jitter: &jitter).isEmpty)
        #expect(scheduler.handle(.trigger(.manual), source: "b", at: ms(30), jitter: &jitter) == [.startRefresh(source: "b")])
        _ = scheduler.handle(.linkState(online: true), at: ms(40), jitter: &jitter)
        #expect(scheduler.nextDeadline() == ms(2_040))
    }

    @Test func aLocalSourceIsNeverOfflineWhileOthersAre() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        scheduler.setLocalSources(["local"])
        _ = scheduler.handle(.linkState(online: false), at: ms(0), jitter: &jitter)
        for name in ["local", "remote"] { scheduler.addSource(name, at: ms(0)) }
        #expect(scheduler.status(of: "remote")?.state == .offline)
        #expect(scheduler.handle(.trigger(.startup), at: ms(10), jitter: &jitter) == [.startRefresh(source: "local")])
        _ = scheduler.handle(.refreshFinished(.success), source: "local", at: ms(20), jitter: &jitter)
        _ = scheduler.handle(.linkState(online: false), at: ms(30), jitter: &jitter)
        #expect(scheduler.status(of: "local")?.state == .idle)
        // The timer refreshes it too (the periodic refresh, RefreshIntervalSec= after the last).
        let periodic = scheduler.nextDeadline()
        #expect(periodic != nil)
        #expect(scheduler.handle(.tick, at: periodic ?? ms(0), jitter: &jitter) == [.startRefresh(source: "local")])
    }

    @Test func eventsForUnknownOrRemovedSourcesAreIgnored() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        scheduler.addSource("a", at: ms(0))
        _ = scheduler.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        scheduler.removeSource("a")
        #expect(scheduler.handle(.refreshFinished(.success), source: "a", at: ms(5), jitter: &jitter).isEmpty)
        #expect(scheduler.handle(.trigger(.manual), source: "zzz", at: ms(5), jitter: &jitter).isEmpty)
        #expect(scheduler.handle(.refreshFinished(.success), at: ms(5), jitter: &jitter).isEmpty)
        #expect(scheduler.sourceNames.isEmpty)
    }

    @Test func exportAndRestoreThroughTheScheduler() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        scheduler.addSource("a", at: ms(0))
        scheduler.addSource("b", at: ms(0))
        _ = scheduler.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        _ = scheduler.handle(.refreshFinished(.success), source: "a", at: ms(0), jitter: &jitter)
        _ = scheduler.handle(.refreshFinished(.failure(.transient, retryAfter: nil)), source: "b", at: ms(0), jitter: &jitter)
        let saved = scheduler.exportRetryStates(at: ms(0))
        #expect(Array(saved.keys) == ["b"])

        var next = Scheduler()
        next.addSource("b", restoring: saved["b"], at: ms(0))
        #expect(next.status(of: "b")?.state == .backoff)
        #expect(next.status(of: "b")?.attempt == 1)
    }

    @Test func updatedSettingsApplyToNextDecisions() {
        var jitter = ConstantJitter(0)
        var scheduler = Scheduler()
        scheduler.addSource("a", at: ms(0))
        scheduler.updateSettings(SchedulerSettings(interval: .seconds(60), randomizedDelay: .zero))
        _ = scheduler.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        _ = scheduler.handle(.refreshFinished(.success), source: "a", at: ms(0), jitter: &jitter)
        #expect(scheduler.nextDeadline() == ms(60_000))
    }
}
