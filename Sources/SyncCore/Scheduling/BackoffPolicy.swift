// Retry delays: exponential backoff with full jitter, bounded by
// [InitialDelaySec, MaxDelaySec] (syncd(8) GUARANTEES 7).
//
// "Full jitter" (Brooker, "Exponential Backoff And Jitter", AWS Architecture
// Blog, 2015) draws each delay uniformly from the whole window up to the
// exponential ceiling instead of adding a little noise to the ceiling; it
// decorrelates clients that failed together, which is what spreads a fleet's
// retries after an outage. syncd(8) GUARANTEES 7 also asks for InitialDelaySec as the
// floor, so the window starts there instead of at zero.

/// The retry-delay formula.
///
/// After the `n`-th failed attempt of a cycle (n ≥ 1):
///
///     ceiling(n) = min(maxDelay, initialDelay × 2ⁿ)
///     delay(n)   = initialDelay + f × (ceiling(n) − initialDelay),  f uniform in [0, 1)
///
/// so every delay lies in [initialDelay, ceiling(n)] ⊆ [initialDelay, maxDelay].
/// The exponent is `n`, not `n − 1`, so that the first retry is already
/// jittered (window [1 s, 2 s] with the defaults) rather than a fixed
/// `initialDelay` that a whole fleet would hit in lockstep. If the
/// configuration has `initialDelay > maxDelay`, `maxDelay` wins.
public enum BackoffPolicy {
    /// The upper end of the delay window after the `failedAttempt`-th failure.
    public static func ceiling(afterFailedAttempt failedAttempt: Int, settings: SchedulerSettings) -> Duration {
        let floor = min(settings.initialDelay, settings.maxDelay)
        let exponent = min(max(failedAttempt, 1), 62)
        var ceiling = floor
        for _ in 0..<exponent {
            ceiling = ceiling * 2
            if ceiling >= settings.maxDelay { return settings.maxDelay }
        }
        return max(floor, ceiling)
    }

    /// The delay before the next attempt after the `failedAttempt`-th failure,
    /// for a jitter `fraction` in [0, 1).
    public static func delay(
        afterFailedAttempt failedAttempt: Int, settings: SchedulerSettings, fraction: Double
    ) -> Duration {
        let floor = min(settings.initialDelay, settings.maxDelay)
        let ceiling = ceiling(afterFailedAttempt: failedAttempt, settings: settings)
        return SchedulingTime.interpolate(floor, ceiling, fraction: fraction)
    }

    /// The periodic refresh delay: `interval + f × randomizedDelay` (the
    /// semantics of systemd timers' `RandomizedDelaySec=`).
    public static func periodicDelay(settings: SchedulerSettings, fraction: Double) -> Duration {
        SchedulingTime.interpolate(
            settings.interval, settings.interval + settings.randomizedDelay, fraction: fraction)
    }
}
