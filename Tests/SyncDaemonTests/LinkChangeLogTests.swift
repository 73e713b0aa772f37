import SyncCore
import Testing
@testable import SyncDaemon

/// One log line per link flap; an outage longer than DebounceSec= gets its "Offline" and "back" lines.
@Suite("LinkChangeLog")
struct LinkChangeLogTests {
    let window = Duration.seconds(1)

    func ms(_ milliseconds: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: milliseconds * 1_000_000) }

    @Test("a flap shorter than the window is one line")
    func flap() {
        var log = LinkChangeLog()
        #expect(log.changed(to: false, from: true, state: "no carrier", significant: true, at: ms(1_000)) == nil)
        #expect(log.deadline(window: window) == ms(2_000))
        #expect(log.due(at: ms(1_500), window: window) == nil)
        #expect(log.changed(to: true, from: false, state: "routable", significant: true, at: ms(1_300))
                == .init(text: "Network dropped for 0.3s and is back (routable); refreshing sources", notice: true))
        #expect(log.deadline(window: window) == nil)
        #expect(log.due(at: ms(5_000), window: window) == nil)
    }

    @Test("an outage is logged when the window ends, with its latest state, and its end once")
    func outage() {
        var log = LinkChangeLog()
        _ = log.changed(to: false, from: true, state: "no carrier", significant: true, at: ms(0))
        #expect(log.changed(to: false, from: false, state: "no route", significant: true, at: ms(500)) == nil)
        #expect(log.due(at: ms(1_000), window: window) == .init(text: "Offline (no route); serving cached data", notice: true))
        #expect(log.due(at: ms(1_100), window: window) == nil)
        #expect(log.changed(to: true, from: false, state: "routable", significant: true, at: ms(9_000))
                == .init(text: "Network is back (routable); refreshing sources", notice: true))
    }

    @Test("a change while online is an info line only when it schedules a refresh")
    func changeWhileOnline() {
        var log = LinkChangeLog()
        #expect(log.changed(to: true, from: true, state: "routable", significant: true, at: ms(0))
                == .init(text: "Network changed (routable); refreshing sources", notice: false))
        #expect(log.changed(to: true, from: true, state: "routable", significant: false, at: ms(0)) == nil)
    }
}
