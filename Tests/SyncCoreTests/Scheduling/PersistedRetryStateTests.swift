import Foundation  // JSONEncoder, for the round trip through the state store's format
import Testing
@testable import SyncCore

private func ms(_ milliseconds: Int) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: UInt64(milliseconds) * 1_000_000)
}

@Suite("PersistedRetryState")
struct PersistedRetryStateTests {
    /// A source three failures into a cycle, the last with Retry-After 60 s.
    private func failingSource() -> SourceScheduler {
        var jitter = ConstantJitter(0.5)
        var source = SourceScheduler(name: "posts")
        _ = source.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        _ = source.handle(.refreshFinished(.failure(.transient, retryAfter: nil)), at: ms(0), jitter: &jitter)
        for _ in 0..<2 {
            let due = source.nextDeadline()!
            _ = source.handle(.tick, at: due, jitter: &jitter)
            _ = source.handle(.refreshFinished(.failure(.transient, retryAfter: .seconds(60))), at: due, jitter: &jitter)
        }
        return source
    }

    @Test func healthySourceHasNothingToSave() {
        var jitter = ConstantJitter(0)
        var source = SourceScheduler(name: "posts")
        _ = source.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        _ = source.handle(.refreshFinished(.success), at: ms(10), jitter: &jitter)
        #expect(source.exportRetryState(at: ms(20)) == nil)
    }

    @Test func backoffRoundTripsAcrossARestart() throws {
        let source = failingSource()
        #expect(source.attempt == 3)
        let savedAt = source.now + .seconds(10)
        let retryAt = source.nextDeadline()!
        let saved = try #require(source.exportRetryState(at: savedAt))
        #expect(saved.phase == .backoff)
        #expect(saved.attempt == 3)
        #expect(saved.nextAttemptInMilliseconds == Int64((retryAt - savedAt) / .milliseconds(1)))
        #expect(saved.retryAfterRemainingMilliseconds == 50_000)

        let json = try JSONEncoder().encode(saved)
        let decoded = try JSONDecoder().decode(PersistedRetryState.self, from: json)
        #expect(decoded == saved)

        // The new process has a new clock origin.
        let restartedAt = ms(3_000)
        var jitter = ConstantJitter(0.5)
        var restored = SourceScheduler(name: "posts", restoring: decoded, at: restartedAt)
        #expect(restored.exportRetryState(at: restartedAt) == saved)
        #expect(restored.handle(.trigger(.startup), at: restartedAt, jitter: &jitter).isEmpty)
        #expect(restored.status.state == .backoff)
        #expect(restored.status.attempt == 3)
        #expect(restored.nextDeadline() == restartedAt + .milliseconds(saved.nextAttemptInMilliseconds!))
        #expect(restored.status.retryAfterUntil == restartedAt + .seconds(50))
        _ = restored.handle(.tick, at: restored.nextDeadline()!, jitter: &jitter)
        #expect(restored.status.attempt == 4)  // the cycle continues
    }

    @Test func errorStateRestartsOnStartupButNotBeforeRetryAfter() throws {
        var jitter = ConstantJitter(0)
        var source = SourceScheduler(name: "posts")
        _ = source.handle(.trigger(.startup), at: ms(0), jitter: &jitter)
        _ = source.handle(.refreshFinished(.failure(.permanent, retryAfter: .seconds(30))), at: ms(0), jitter: &jitter)
        let saved = try #require(source.exportRetryState(at: ms(10_000)))
        #expect(saved == PersistedRetryState(phase: .error, attempt: 1, nextAttemptInMilliseconds: nil,
                                             retryAfterRemainingMilliseconds: 20_000))

        var restored = SourceScheduler(name: "posts", restoring: saved, at: ms(500))
        #expect(restored.status.state == .error)
        #expect(restored.nextDeadline() == nil)
        #expect(restored.handle(.trigger(.startup), at: ms(500), jitter: &jitter).isEmpty)
        #expect(restored.nextDeadline() == ms(20_500))
        #expect(restored.handle(.tick, at: ms(20_500), jitter: &jitter) == [.startRefresh(source: "posts")])
        #expect(restored.status.attempt == 1)
    }

    @Test func restoredValuesAreClampedToTheCurrentSettings() {
        let saved = PersistedRetryState(phase: .backoff, attempt: 99, nextAttemptInMilliseconds: 86_400_000,
                                        retryAfterRemainingMilliseconds: -5)
        let restored = SourceScheduler(name: "posts", restoring: saved, at: ms(0))
        #expect(restored.attempt == 7)
        #expect(restored.nextDeadline() == ms(300_000))
    }

    @Test func aRetryInFlightIsSavedAsDueAtOnce() throws {
        var source = failingSource()
        var jitter = ConstantJitter(0.5)
        let due = source.nextDeadline()!
        _ = source.handle(.tick, at: due, jitter: &jitter)
        #expect(source.status.state == .syncing)
        let saved = try #require(source.exportRetryState(at: due))
        #expect(saved.phase == .backoff)
        #expect(saved.attempt == 3)
        #expect(saved.nextAttemptInMilliseconds == 0)
    }
}
