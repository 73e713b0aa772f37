import SyncCore
import SyncEngine

/// What the daemon logs when the network link comes and goes: one line per flap, not two. Going offline is
/// logged only once it lasted `window` (DebounceSec=); back before that, one line says the network dropped
/// and is back. A longer outage gets its "Offline" line when the window ends and its "Network is back" line
/// when it ends. Pure: the loop passes the monotonic instant.
struct LinkChangeLog {
    /// A log line and whether it is a notice (else info).
    struct Line: Equatable {
        var text: String
        var notice: Bool
    }

    /// When the link went down, and its state now, while that has not been logged yet.
    private var unreportedOffline: (since: MonotonicInstant, state: String)?

    /// When `due(at:)` has a line to log; nil when none is pending.
    func deadline(window: Duration) -> MonotonicInstant? {
        unreportedOffline.map { $0.since + window }
    }

    /// The line for a change of the link at `now` (`wasOnline` to `online`), if any.
    mutating func changed(to online: Bool, from wasOnline: Bool, state: String, significant: Bool,
                          at now: MonotonicInstant) -> Line? {
        if wasOnline && !online {
            unreportedOffline = (now, state)
            return nil
        }
        if !wasOnline && online {
            guard let offline = unreportedOffline else { return Line(text: "Network is back (\(state)); refreshing sources", notice: true) }
            unreportedOffline = nil
            return Line(text: "Network dropped for \(formatDelay(now - offline.since)) and is back (\(state)); refreshing sources", notice: true)
        }
        if !online {
            unreportedOffline?.state = state
            return nil
        }
        return significant ? Line(text: "Network changed (\(state)); refreshing sources", notice: false) : nil
    }

    /// The "Offline" line once the link has been down for `window`; nil before, or when it is back.
    mutating func due(at now: MonotonicInstant, window: Duration) -> Line? {
        guard let offline = unreportedOffline, offline.since + window <= now else { return nil }
        unreportedOffline = nil
        return Line(text: "Offline (\(offline.state)); serving cached data", notice: true)
    }
}
