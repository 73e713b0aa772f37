// The scheduler's own view of the configuration ([Network] DebounceSec,
// [Refresh], [Retry] in syncd.conf(5)). The daemon fills it from the parsed
// configuration; keeping it separate lets SyncCore's scheduler be written and
// tested without the configuration types.

/// Timing rules for one source's refresh scheduling.
public struct SchedulerSettings: Equatable, Hashable, Sendable {
    /// Triggers closer together than this coalesce into one refresh, which
    /// starts `debounce` after the last of them (`[Network] DebounceSec`).
    public var debounce: Duration
    /// A debounced refresh starts at the latest this long after the first
    /// trigger of a burst, so constant flapping cannot starve refreshes.
    public var maxDebounceWait: Duration
    /// Periodic refresh period while healthy (`[Refresh] IntervalSec`).
    public var interval: Duration
    /// Upper bound of the random extra delay added to each periodic refresh
    /// (`[Refresh] RandomizedDelaySec`).
    public var randomizedDelay: Duration
    /// Smallest retry delay, and the base of the exponential growth
    /// (`[Retry] InitialDelaySec`).
    public var initialDelay: Duration
    /// Largest retry delay (`[Retry] MaxDelaySec`).
    public var maxDelay: Duration
    /// Attempts per refresh cycle, the first one included (`[Retry] MaxAttempts`).
    public var maxAttempts: Int
    /// A server's `Retry-After` longer than this is treated as this long, so a
    /// broken or hostile header cannot park a source for years.
    public var retryAfterCap: Duration

    /// The syncd.conf(5) defaults: debounce 2 s, interval 15 min, randomized delay 30 s,
    /// initial delay 1 s, max delay 5 min, 8 attempts, Retry-After capped at 24 h;
    /// `maxDebounceWait` nil means `defaultMaxDebounceWait(for: debounce)`.
    public init(
        debounce: Duration = .seconds(2),
        maxDebounceWait: Duration? = nil,
        interval: Duration = .seconds(15 * 60),
        randomizedDelay: Duration = .seconds(30),
        initialDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(5 * 60),
        maxAttempts: Int = 8,
        retryAfterCap: Duration = .seconds(24 * 60 * 60)
    ) {
        self.debounce = SchedulingTime.nonNegative(debounce)
        self.maxDebounceWait = max(
            self.debounce,
            maxDebounceWait ?? Self.defaultMaxDebounceWait(for: self.debounce))
        self.interval = SchedulingTime.nonNegative(interval)
        self.randomizedDelay = SchedulingTime.nonNegative(randomizedDelay)
        self.initialDelay = SchedulingTime.nonNegative(initialDelay)
        self.maxDelay = SchedulingTime.nonNegative(maxDelay)
        self.maxAttempts = max(1, maxAttempts)
        self.retryAfterCap = SchedulingTime.nonNegative(retryAfterCap)
    }

    /// The default cap on a debounce burst: four debounce periods, but never
    /// more than one minute beyond a single period (a 5 min debounce waits at
    /// most 6 min), and never less than one period. For the 2 s default: 8 s.
    public static func defaultMaxDebounceWait(for debounce: Duration) -> Duration {
        let debounce = SchedulingTime.nonNegative(debounce)
        return max(debounce, min(debounce * 4, debounce + .seconds(60)))
    }
}
