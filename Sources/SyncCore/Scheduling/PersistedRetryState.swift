// Retry state that survives a daemon restart (syncd(8) GUARANTEES 7: "Retry
// state and a server's Retry-After survive a restart of the daemon").
//
// Monotonic instants mean nothing after a restart (the origin moves, and
// CLOCK_MONOTONIC restarts at boot), so the state is saved as durations that
// remain at save time and re-anchored at the restore instant. The time the
// daemon was down is not subtracted: it cannot be measured monotonically, and
// waiting a little longer than needed is the safe side for a server that
// asked for a pause.

/// A source's retry state in a clock-free form, for the daemon's state store.
public struct PersistedRetryState: Codable, Equatable, Hashable, Sendable {
    /// What the source was doing when saved.
    public enum Phase: String, Codable, Hashable, Sendable {
        /// Between attempts of a cycle: the next attempt is scheduled.
        case backoff
        /// Resting after a permanent failure or a used-up cycle, until a trigger.
        case error
    }

    /// What the source was doing.
    public var phase: Phase
    /// Attempts made in the cycle (the last one failed).
    public var attempt: Int
    /// `.backoff`: milliseconds that remained until the next attempt; nil otherwise.
    public var nextAttemptInMilliseconds: Int64?
    /// Milliseconds that remained of a server's `Retry-After`; nil if none.
    public var retryAfterRemainingMilliseconds: Int64?

    /// Creates a persisted state.
    public init(phase: Phase, attempt: Int, nextAttemptInMilliseconds: Int64?, retryAfterRemainingMilliseconds: Int64?) {
        self.phase = phase
        self.attempt = attempt
        self.nextAttemptInMilliseconds = nextAttemptInMilliseconds
        self.retryAfterRemainingMilliseconds = retryAfterRemainingMilliseconds
    }
}

extension SourceScheduler {
    /// The retry state to save at `now`; nil when the source is healthy and
    /// there is nothing to remember.
    ///
    /// A retry that is running (attempt 2 or later) is saved as due at once;
    /// a debounced request is saved as the attempt it leads to.
    public func exportRetryState(at now: MonotonicInstant) -> PersistedRetryState? {
        let now = max(now, self.now)
        let retryAfter = retryAfterUntil.flatMap { $0 > now ? Self.milliseconds(now.duration(to: $0)) : nil }
        func backoff(_ attempt: Int, _ next: MonotonicInstant) -> PersistedRetryState {
            PersistedRetryState(
                phase: .backoff, attempt: attempt,
                nextAttemptInMilliseconds: Self.milliseconds(now.duration(to: max(next, now))),
                retryAfterRemainingMilliseconds: retryAfter)
        }
        let error = PersistedRetryState(phase: .error, attempt: attempt, nextAttemptInMilliseconds: nil,
                                        retryAfterRemainingMilliseconds: retryAfter)
        switch state {
        case .backoff(let retryAt):
            return backoff(attempt, retryAt)
        case .error:
            return error
        case .pending(let pending) where pending.shownAs == .backoff || pending.shownAs == .error:
            return backoff(attempt, pending.startAt)
        case .syncing where attempt > 1:
            return backoff(attempt - 1, now)
        case .offline(resting: .backoff):
            return backoff(attempt, now)
        case .offline(resting: .error):
            return error
        case .idle, .pending, .syncing, .offline:
            return retryAfter == nil ? nil : backoff(0, now)
        }
    }

    /// A scheduler for `name` restored at `now` from a state saved by
    /// `exportRetryState(at:)` (nil: a fresh, healthy source).
    ///
    /// Restored durations are clamped to the current settings (`maxDelay`,
    /// `retryAfterCap`, `maxAttempts`), in case the configuration changed.
    /// Feed `.trigger(.startup)` next, as for a fresh source: a restored
    /// backoff keeps its schedule, a restored error starts a new cycle (no
    /// earlier than a restored `Retry-After`).
    public init(name: String, settings: SchedulerSettings = SchedulerSettings(),
                restoring saved: PersistedRetryState?, at now: MonotonicInstant) {
        self.init(name: name, settings: settings, at: now)
        guard let saved else { return }
        restore(saved)
    }

    private mutating func restore(_ saved: PersistedRetryState) {
        let settings = self.settings
        if let remaining = saved.retryAfterRemainingMilliseconds {
            retryAfterUntil = now + min(.milliseconds(max(0, remaining)), settings.retryAfterCap)
        }
        switch saved.phase {
        case .backoff:
            let wait = min(.milliseconds(max(0, saved.nextAttemptInMilliseconds ?? 0)), settings.maxDelay)
            restoreBackoff(attempt: min(max(0, saved.attempt), settings.maxAttempts - 1),
                           retryAt: max(now + wait, retryAfterUntil ?? now))
        case .error:
            restoreError(attempt: min(max(0, saved.attempt), settings.maxAttempts))
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let nanoseconds = SchedulingTime.nanoseconds(duration)
        // Round up: never resume earlier than the saved state allowed.
        return nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)
    }
}
