/// One deadline for a whole refresh: the push of local changes and every page of the listing together get
/// `budget` (ListingTimeoutSec=), so no source holds a refresh lane longer than that, however slowly its
/// server answers each request within TimeoutSec= (docs/syncd.8.md, "Refresh lanes"). Pure: the caller
/// measures the time elapsed since the refresh began on its own monotonic clock.
public struct RefreshDeadline: Sendable, Equatable {
    /// What a refresh may take in all.
    public let budget: Duration

    /// A deadline `budget` after the start of a refresh.
    public init(budget: Duration) {
        self.budget = budget
    }

    /// What is left `elapsed` after the start; zero once it has passed.
    public func remaining(after elapsed: Duration) -> Duration {
        max(.zero, budget - elapsed)
    }

    /// Whether the deadline has passed `elapsed` after the start.
    public func hasPassed(after elapsed: Duration) -> Bool {
        elapsed >= budget
    }

    /// The timeout of a request that starts `elapsed` after the start: its own `timeout` (TimeoutSec=), cut to
    /// what is left; nil once the deadline has passed, when no request may start.
    public func requestTimeout(_ timeout: Duration, after elapsed: Duration) -> Duration? {
        hasPassed(after: elapsed) ? nil : min(timeout, remaining(after: elapsed))
    }

    /// Whether a request that started `started` after the start with `timeout` and failed `elapsed` after the
    /// start was stopped by this deadline rather than by its own timeout: its timeout was cut to what was left
    /// and the deadline has (all but) passed.
    public func stoppedRequest(startedAfter started: Duration, timeout: Duration, failedAfter elapsed: Duration) -> Bool {
        requestTimeout(timeout, after: started).map { $0 < timeout } == true && remaining(after: elapsed) < .milliseconds(100)
    }
}
