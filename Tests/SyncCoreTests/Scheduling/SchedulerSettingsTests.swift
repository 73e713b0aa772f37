import Testing
@testable import SyncCore

@Suite("SchedulerSettings")
struct SchedulerSettingsTests {
    @Test func defaultsAreTheSpecDefaults() {
        let settings = SchedulerSettings()
        #expect(settings.debounce == .seconds(2))
        #expect(settings.maxDebounceWait == .seconds(8))
        #expect(settings.interval == .seconds(900))
        #expect(settings.randomizedDelay == .seconds(30))
        #expect(settings.initialDelay == .seconds(1))
        #expect(settings.maxDelay == .seconds(300))
        #expect(settings.maxAttempts == 8)
        #expect(settings.retryAfterCap == .seconds(86_400))
    }

    @Test(arguments: [
        (Duration.zero, Duration.zero),
        (.milliseconds(500), .seconds(2)),
        (.seconds(2), .seconds(8)),
        (.seconds(30), .seconds(90)),
        (.seconds(300), .seconds(360)),
    ])
    func defaultMaxDebounceWait(debounce: Duration, expected: Duration) {
        #expect(SchedulerSettings.defaultMaxDebounceWait(for: debounce) == expected)
        #expect(SchedulerSettings(debounce: debounce).maxDebounceWait == expected)
    }

    @Test func nonsenseIsClamped() {
        let settings = SchedulerSettings(debounce: .seconds(5), maxDebounceWait: .seconds(1), interval: .seconds(-3), maxAttempts: 0)
        #expect(settings.maxDebounceWait == .seconds(5))
        #expect(settings.interval == .zero)
        #expect(settings.maxAttempts == 1)
    }
}
