/// When the daemon tells the service manager something (sd_notify(3)): when STATUS= is rebuilt and when the
/// next `WATCHDOG=1` is due. The loop asks after each event and at each timer firing, and only performs
/// (builds the line, sends it); every timing decision is here, on the monotonic clock it is given.
///
/// STATUS= summarises every source, so rebuilding it costs O(sources): with up to `statusEveryEventLimit`
/// sources it is rebuilt after every change (each state shows), beyond that at most once per
/// `statusSpacing`, however many events arrive (docs/benchmarks.md, "Scale in sources"). A change that
/// arrives too soon is not lost: the rebuild is due at the end of the spacing, and the loop's timer fires then.
public struct NotifyPacing: Sendable, Equatable {
    /// Up to this many sources, STATUS= is rebuilt after every change.
    public static let statusEveryEventLimit = 100
    /// Beyond `statusEveryEventLimit` sources, the least time between two rebuilds of STATUS=.
    public static let statusSpacing: Duration = .seconds(1)

    /// How often `WATCHDOG=1` is sent (half of `$WATCHDOG_USEC`); nil when the watchdog is off.
    public let watchdogInterval: Duration?
    /// When the next `WATCHDOG=1` is due; nil when the watchdog is off or the daemon has not started.
    public private(set) var nextWatchdog: MonotonicInstant?
    /// When STATUS= was last rebuilt.
    public private(set) var statusSentAt: MonotonicInstant?
    /// When the next rebuild is due, when something changed too soon after the last one.
    public private(set) var statusDue: MonotonicInstant?
    /// Something STATUS= shows changed since it was last rebuilt (true at start: the first line is built).
    public var changed = true

    /// Pacing for a daemon whose watchdog wants `WATCHDOG=1` every `watchdogInterval` (nil: no watchdog).
    public init(watchdogInterval: Duration?) {
        self.watchdogInterval = watchdogInterval
    }

    /// The daemon reports ready at `now`: the first `WATCHDOG=1` is due one interval later.
    public mutating func start(at now: MonotonicInstant) {
        if let watchdogInterval { nextWatchdog = now + watchdogInterval }
    }

    /// Whether `WATCHDOG=1` is to be sent at `now`; when it is, the next one is due one interval from now
    /// (not from when it was due: a late timer does not send a burst).
    public mutating func watchdogDue(at now: MonotonicInstant) -> Bool {
        guard let due = nextWatchdog, due <= now, let watchdogInterval else { return false }
        nextWatchdog = now + watchdogInterval
        return true
    }

    /// Whether STATUS= is to be rebuilt at `now` for a configuration of `sources` sources: something changed,
    /// and either the sources are few or the last rebuild is `statusSpacing` ago. When it is too soon, the
    /// rebuild is due at the end of the spacing (`statusDue`). A rebuild clears `changed`.
    public mutating func rebuildsStatus(at now: MonotonicInstant, sources: Int) -> Bool {
        guard changed else { return false }
        if sources > Self.statusEveryEventLimit, let sent = statusSentAt, now < sent + Self.statusSpacing {
            statusDue = sent + Self.statusSpacing
            return false
        }
        changed = false
        statusDue = nil
        statusSentAt = now
        return true
    }

    /// The instants the loop's timer must wake at for the pacing: the next watchdog, a rebuild held back.
    public var deadlines: [MonotonicInstant] {
        [nextWatchdog, statusDue].compactMap { $0 }
    }
}
