import Testing
@testable import SyncCore

/// When the idle daemon unmaps its clean code pages (docs/architecture.md, "Memory"), on a manual clock.
@Suite("IdlePageRelease")
struct IdlePageReleaseTests {
    static func at(_ seconds: Int64) -> MonotonicInstant { MonotonicInstant(offset: .seconds(seconds)) }

    /// `shouldRelease` at `seconds` (mutating calls cannot sit inside `#expect`).
    static func release(_ schedule: inout IdlePageRelease, at seconds: Int64, refreshing: Bool) -> Bool {
        schedule.shouldRelease(at: at(seconds), refreshing: refreshing)
    }

    @Test("nothing is planned until refreshes end; then the release comes after the quiet period, once")
    func afterQuietPeriod() {
        var schedule = IdlePageRelease(quietPeriod: .seconds(2), minimumInterval: .seconds(30))
        #expect(!Self.release(&schedule, at: 100, refreshing: false))
        schedule.refreshesEnded(at: Self.at(10))
        #expect(schedule.due == Self.at(12))
        #expect(!Self.release(&schedule, at: 11, refreshing: false))
        #expect(Self.release(&schedule, at: 12, refreshing: false))
        #expect(schedule.last == Self.at(12) && schedule.due == nil)
        #expect(!Self.release(&schedule, at: 13, refreshing: false))
    }

    @Test("a release within the minimum interval of the last one is postponed to its end, not lost")
    func postponedNotLost() {
        var schedule = IdlePageRelease(quietPeriod: .seconds(2), minimumInterval: .seconds(30))
        schedule.refreshesEnded(at: Self.at(0))
        #expect(Self.release(&schedule, at: 2, refreshing: false))
        schedule.refreshesEnded(at: Self.at(5))
        #expect(schedule.due == Self.at(32))
        #expect(!Self.release(&schedule, at: 7, refreshing: false))
        #expect(Self.release(&schedule, at: 32, refreshing: false))
        // Long after the interval, the quiet period alone counts again.
        schedule.refreshesEnded(at: Self.at(100))
        #expect(schedule.due == Self.at(102))
    }

    @Test("a refresh running when the release is due cancels it; the refresh's end plans the next")
    func notWhileRefreshing() {
        var schedule = IdlePageRelease(quietPeriod: .seconds(2), minimumInterval: .seconds(30))
        schedule.refreshesEnded(at: Self.at(0))
        #expect(!Self.release(&schedule, at: 3, refreshing: true))
        #expect(schedule.due == nil && schedule.last == nil)
        schedule.refreshesEnded(at: Self.at(4))
        #expect(Self.release(&schedule, at: 6, refreshing: false))
    }

    @Test("refreshes ending again before the release move it later")
    func movedByLaterRefreshes() {
        var schedule = IdlePageRelease()
        schedule.refreshesEnded(at: Self.at(0))
        schedule.refreshesEnded(at: Self.at(1))
        #expect(!Self.release(&schedule, at: 2, refreshing: false))
        #expect(Self.release(&schedule, at: 3, refreshing: false))
    }
}
