// The scheduler's inputs and outputs.

/// Why a refresh was asked for.
public enum TriggerKind: String, CaseIterable, Hashable, Sendable {
    /// The daemon started; the first refresh is immediate.
    case startup
    /// A periodic timer fired; immediate (the scheduler also raises this itself).
    case periodic
    /// A link became routable, or an address or default route changed; debounced.
    case network
    /// The reachability probe succeeded after failing; debounced.
    case probeRecovered
    /// `syncctl refresh` / the `Refresh` method; immediate, even while offline.
    case manual
    /// The configuration was reloaded; debounced.
    case reload
    /// A local change was queued (`Put`, `Delete`); debounced, so a burst of edits is pushed together.
    /// It does not cut a backoff short: a failing server is not hammered because someone typed.
    case localChange

    /// Whether the refresh starts at once rather than after the debounce period.
    public var isImmediate: Bool {
        switch self {
        case .startup, .periodic, .manual: true
        case .network, .probeRecovered, .reload, .localChange: false
        }
    }

    /// Whether this trigger abandons a running backoff cycle and starts a new
    /// one (syncd(8) GUARANTEES 7: "a network change restarts a backoff cycle early").
    /// A probe that sees the server again, a reload and a user's request do too;
    /// a periodic or start-up trigger leaves a backoff schedule alone (after a
    /// restart, the restored schedule is kept).
    public var restartsBackoff: Bool {
        switch self {
        case .network, .probeRecovered, .reload, .manual: true
        case .localChange: false
        case .startup, .periodic: false
        }
    }

    /// Precedence when several triggers merge into one follow-up refresh: the
    /// merged burst behaves like its strongest member.
    var precedence: Int {
        switch self {
        case .periodic: 0
        case .startup: 1
        case .localChange: 1
        case .probeRecovered: 2
        case .reload: 3
        case .network: 4
        case .manual: 5
        }
    }
}

/// How a failed refresh failed.
public enum FailureKind: String, Hashable, Sendable {
    /// Network error, timeout, HTTP 5xx or 429: retried with backoff.
    case transient
    /// HTTP 401, 403, 404, or a response that failed validation: not retried
    /// until the next trigger.
    case permanent
    /// A local condition that clears by itself (a full disk kept the cache file from being written): the
    /// network is fine, so it is retried with backoff and never given up; past `maxAttempts` at the longest delay.
    case local
}

/// What became of a refresh the scheduler started.
public enum RefreshOutcome: Hashable, Sendable {
    /// New content was stored.
    case success
    /// The server confirmed the cached content (304 or identical body).
    case unchanged
    /// The refresh failed; `retryAfter` is the server's `Retry-After`, already
    /// turned into a delay (see `RetryAfter.parse`).
    case failure(FailureKind, retryAfter: Duration?)

    /// Whether the refresh got an answer from its server: new content, or the content confirmed. (A failure
    /// may have had one too, an HTTP error; it is not counted, so as not to guess.)
    public var reachedServer: Bool {
        switch self {
        case .success, .unchanged: return true
        case .failure: return false
        }
    }
}

/// Something that happened, fed to the scheduler with the instant it happened.
public enum SchedulerEvent: Hashable, Sendable {
    /// A refresh was asked for.
    case trigger(TriggerKind)
    /// The refresh started by the last `.startRefresh` action ended.
    case refreshFinished(RefreshOutcome)
    /// The link monitor's verdict changed: `online` means some allowed
    /// interface is routable.
    case linkState(online: Bool)
    /// Time passed; fire whatever is due. (Every event first fires what is due
    /// at its instant, so `.tick` only matters when nothing else happens.)
    case tick
}

/// What the daemon must do in response to an event.
public enum SchedulerAction: Hashable, Sendable {
    /// Start one refresh of the named source now, and report its end with
    /// `.refreshFinished`.
    case startRefresh(source: String)
}

/// The state names `GetStatus` shows (docs/control-api.md).
public enum SourceStateName: String, CaseIterable, Hashable, Sendable {
    /// Healthy, or waiting for a refresh that was asked for.
    case idle
    /// A refresh is running.
    case syncing
    /// The last attempt failed transiently; another is scheduled.
    case backoff
    /// The link is down; periodic refreshes and retries wait for it.
    case offline
    /// The last cycle ended in a permanent failure or used up its attempts.
    case error
}

/// A source's scheduling status, for `GetStatus`.
public struct SourceScheduleStatus: Hashable, Sendable {
    /// The state name shown to users.
    public var state: SourceStateName
    /// The number of the running or most recent attempt of the current cycle,
    /// 1-based; 0 when the source is healthy.
    public var attempt: Int
    /// When the next attempt of a failing source, or a requested (debounced)
    /// refresh, starts; nil otherwise (periodic refreshes show in `nextRefresh`).
    public var nextAttempt: MonotonicInstant?
    /// When the scheduler next wants to start a refresh for any reason; nil
    /// while syncing or offline.
    public var nextRefresh: MonotonicInstant?
    /// Until when a server's `Retry-After` forbids automatic requests; nil if none.
    public var retryAfterUntil: MonotonicInstant?

    /// Creates a status value.
    public init(
        state: SourceStateName, attempt: Int, nextAttempt: MonotonicInstant?,
        nextRefresh: MonotonicInstant?, retryAfterUntil: MonotonicInstant?
    ) {
        self.state = state
        self.attempt = attempt
        self.nextAttempt = nextAttempt
        self.nextRefresh = nextRefresh
        self.retryAfterUntil = retryAfterUntil
    }
}
