import Glibc
import Testing
@testable import SyncDaemon

/// When syncd pings systemd's watchdog (sd_watchdog_enabled(3)): every half of `$WATCHDOG_USEC`, and only when
/// the watchdog is meant for this process. The pace itself is `NotifyPacing`'s (SyncCore, manual clock).
@Suite("Notifier: the watchdog's interval")
struct NotifierWatchdogTests {
    @Test func halfOfWatchdogUSecWhenItIsForThisProcess() {
        #expect(Notifier(environment: ["WATCHDOG_USEC": "30000000"]).watchdogInterval == .seconds(15))
        #expect(Notifier(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "\(getpid())"]).watchdogInterval == .milliseconds(1500))
    }

    @Test func noWatchdogWhenUnsetMalformedZeroOrForAnotherProcess() {
        #expect(Notifier(environment: [:]).watchdogInterval == nil)
        #expect(Notifier(environment: ["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
        #expect(Notifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
        #expect(Notifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid() + 1)"]).watchdogInterval == nil)
    }
}
