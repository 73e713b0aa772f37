import Testing
@testable import SyncCore

private func ms(_ milliseconds: Int) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: UInt64(milliseconds) * 1_000_000)
}

/// A server's `Retry-After` saved by a stopping daemon and restored by the next one (docs/syncd.8.md): what
/// test_daemon_retry.py::test_retry_after_survives_a_restart sees from outside (no startup refresh, the retry
/// still scheduled, a person's refresh at once), with the times it cannot measure.
@Suite("Restored Retry-After")
struct RestoredRetryAfterTests {
    /// Attempt 1 failed with `Retry-After: 3600` just before the stop.
    private let saved = PersistedRetryState(phase: .backoff, attempt: 1, nextAttemptInMilliseconds: 3_600_000,
                                            retryAfterRemainingMilliseconds: 3_600_000)

    /// The restored source, after the startup trigger (which starts nothing).
    private func restarted(_ jitter: inout ConstantJitter) -> SourceScheduler {
        var source = SourceScheduler(name: "posts", restoring: saved, at: ms(0))
        #expect(source.handle(.trigger(.startup), at: ms(0), jitter: &jitter).isEmpty)
        return source
    }

    /// Nothing starts until the Retry-After ends, one refresh then; returns its attempt number.
    private func attemptAtTheRetryAfter(_ source: inout SourceScheduler, _ jitter: inout ConstantJitter) -> Int {
        #expect(source.handle(.tick, at: ms(3_599_999), jitter: &jitter).isEmpty)
        #expect(source.handle(.tick, at: ms(3_600_000), jitter: &jitter) == [.startRefresh(source: "posts")])
        return source.status.attempt
    }

    @Test func theStartupTriggerDoesNotRefreshBeforeTheRetryAfterEnds() {
        var jitter = ConstantJitter(0.5)
        var source = restarted(&jitter)
        #expect(source.status.state == .backoff)
        #expect(source.status.attempt == 1)
        // The backoff part is clamped to MaxDelaySec= (5 min); the server's Retry-After is not.
        #expect(source.status.nextAttempt == ms(3_600_000))
        #expect(source.status.retryAfterUntil == ms(3_600_000))
        // A network change starts a new cycle, but does not bring the attempt forward either.
        #expect(source.handle(.trigger(.network), at: ms(5_000), jitter: &jitter).isEmpty)
        #expect(source.nextDeadline() == ms(3_600_000))
        #expect(attemptAtTheRetryAfter(&source, &jitter) == 1)
    }

    @Test func withoutANetworkChangeTheCycleGoesOnAtTheRetryAfter() {
        var jitter = ConstantJitter(0.5)
        var source = restarted(&jitter)
        #expect(attemptAtTheRetryAfter(&source, &jitter) == 2)
    }

    @Test func aManualRefreshGoesOutAtOnce() {
        var jitter = ConstantJitter(0.5)
        var source = restarted(&jitter)
        #expect(source.handle(.trigger(.manual), at: ms(10_000), jitter: &jitter) == [.startRefresh(source: "posts")])
        #expect(source.status.state == .syncing)
    }
}
