import Testing
@testable import SyncCore

@Suite("BackoffPolicy")
struct BackoffPolicyTests {
    @Test func ceilingsDoubleFromTwiceTheInitialDelayUpToTheMaximum() {
        let settings = SchedulerSettings()
        let ceilings = (1...10).map { BackoffPolicy.ceiling(afterFailedAttempt: $0, settings: settings) }
        #expect(ceilings == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map { Duration.seconds($0) })
        #expect(BackoffPolicy.ceiling(afterFailedAttempt: 1_000, settings: settings) == .seconds(300))
    }

    @Test(arguments: [0.0, 0.25, 0.5, 0.999_999])
    func delayIsInitialDelayPlusFractionOfTheWindow(fraction: Double) {
        let settings = SchedulerSettings()
        for attempt in 1...12 {
            let delay = BackoffPolicy.delay(afterFailedAttempt: attempt, settings: settings, fraction: fraction)
            let ceiling = BackoffPolicy.ceiling(afterFailedAttempt: attempt, settings: settings)
            #expect(delay >= settings.initialDelay && delay <= ceiling && delay <= settings.maxDelay)
        }
        #expect(BackoffPolicy.delay(afterFailedAttempt: 3, settings: settings, fraction: 0) == .seconds(1))
        #expect(BackoffPolicy.delay(afterFailedAttempt: 3, settings: settings, fraction: 0.5) == .milliseconds(4_500))
    }

    @Test func fullJitterCoversTheWholeWindow() {
        let settings = SchedulerSettings()
        var jitter = SplitMix64Jitter(seed: 99)
        let delays = (0..<10_000).map { _ in
            BackoffPolicy.delay(afterFailedAttempt: 6, settings: settings, fraction: jitter.fraction())
        }
        // Window [1 s, 64 s]: both ends are reached closely, the mean is near the middle.
        #expect(delays.min()! < .seconds(2))
        #expect(delays.max()! > .seconds(63))
        let mean = delays.reduce(Duration.zero, +) / delays.count
        #expect(mean > .seconds(31) && mean < .seconds(34))
    }

    @Test func initialDelayAboveMaxDelayIsClampedToMaxDelay() {
        let settings = SchedulerSettings(initialDelay: .seconds(10), maxDelay: .seconds(5))
        for attempt in 1...4 {
            #expect(BackoffPolicy.delay(afterFailedAttempt: attempt, settings: settings, fraction: 0.7) == .seconds(5))
        }
    }

    @Test(arguments: [0.0, 0.5, 0.999_999])
    func periodicDelayIsIntervalPlusFractionOfRandomizedDelay(fraction: Double) {
        let settings = SchedulerSettings()
        let delay = BackoffPolicy.periodicDelay(settings: settings, fraction: fraction)
        #expect(delay >= .seconds(900) && delay < .seconds(930))
    }
}
