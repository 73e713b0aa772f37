/// When the daemon unmaps its clean code pages (docs/architecture.md, "Memory"): once refreshes have
/// ended and none started for `quietPeriod` — so that what runs right after a refresh (saving state,
/// status, log lines) has run and the release leaves what the idle loop really uses — and at most once
/// per `minimumInterval`, so that a daemon whose refreshes follow each other closely does not read smaps
/// and fault its code back in after each one. A release that falls in the interval is postponed, not lost.
public struct IdlePageRelease: Sendable, Equatable {
    /// How long no refresh must run before the release.
    public let quietPeriod: Duration
    /// The least time between two releases.
    public let minimumInterval: Duration
    /// When the next release is due; nil when none is planned.
    public private(set) var due: MonotonicInstant?
    /// When the last release ran.
    public private(set) var last: MonotonicInstant?

    /// A schedule with nothing planned.
    public init(quietPeriod: Duration = .seconds(2), minimumInterval: Duration = .seconds(30)) {
        self.quietPeriod = quietPeriod
        self.minimumInterval = minimumInterval
    }

    /// The last running refresh ended at `now`: plans a release after the quiet period (or at the end
    /// of the minimum interval, if that is later).
    public mutating func refreshesEnded(at now: MonotonicInstant) {
        let quiet = now + quietPeriod
        guard let last else { due = quiet; return }
        due = max(quiet, last + minimumInterval)
    }

    /// Whether to release now. A due release is taken off the plan either way; while a refresh runs it
    /// does not happen (that refresh's end plans the next one).
    public mutating func shouldRelease(at now: MonotonicInstant, refreshing: Bool) -> Bool {
        guard let due, due <= now else { return false }
        self.due = nil
        guard !refreshing else { return false }
        last = now
        return true
    }
}
