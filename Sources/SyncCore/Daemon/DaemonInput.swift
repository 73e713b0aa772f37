// What the daemon's core (DaemonStateMachine) is told and what it asks the loop to do. The loop turns
// signals, timers, worker results and control calls into `DaemonInput`s and performs the returned
// `DaemonAction`s; the core does no I/O and reads no clock.

/// A control request that waits for the core (a refresh with `wait`, a logout); every one is answered
/// exactly once by a `.reply` action.
public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number the loop gave it; unique for the daemon's lifetime.
    public let value: Int
    /// Creates an identifier.
    public init(_ value: Int) { self.value = value }
    public static func < (a: RequestID, b: RequestID) -> Bool { a.value < b.value }
    public var description: String { "request \(value)" }
}

/// One refresh of one source: the loop runs it on a refresh lane with a cancellation flag of its own and
/// reports its end with the same ticket, so a result is matched by ticket, never by source name.
public struct RefreshTicket: Hashable, Sendable, CustomStringConvertible {
    /// Increasing for the daemon's lifetime: a waiter counts only tickets issued after it asked.
    public let id: Int
    /// The source refreshed.
    public let source: String
    /// The account generation it belongs to (bumped by logout): older results are discarded.
    public let generation: Int
    public var description: String { "refresh \(id) of \(source)" }
}

/// How one source's refresh ended, as a control client sees it.
public enum RefreshReportResult: String, Sendable, Equatable {
    case updated, unchanged, failed, cancelled
}

/// The outcome of one source's refresh for a waiting `Refresh` call.
public struct SourceRefreshReport: Sendable, Equatable {
    /// Source name.
    public var source: String
    /// How it ended.
    public var result: RefreshReportResult
    /// Records after the refresh.
    public var records: Int
    /// The reason, when it failed or was cancelled.
    public var error: String?

    /// Creates a report.
    public init(source: String, result: RefreshReportResult, records: Int, error: String? = nil) {
        self.source = source
        self.result = result
        self.records = records
        self.error = error
    }

    /// True when the refresh succeeded (updated or confirmed).
    public var succeeded: Bool { result == .updated || result == .unchanged }
}

/// The end of a refresh, classified by the loop from the engine's result.
public struct RefreshFinish: Sendable, Equatable {
    /// What the scheduler learns.
    public var outcome: RefreshOutcome
    /// The refresh was cancelled (stop, logout, reload); it says nothing about the source.
    public var cancelled: Bool
    /// The cached copy is stale afterwards (a reachability probe may help it).
    public var stale: Bool
    /// What a waiting client is told.
    public var report: SourceRefreshReport

    /// Creates a finish.
    public init(outcome: RefreshOutcome, cancelled: Bool = false, stale: Bool = false, report: SourceRefreshReport) {
        self.outcome = outcome
        self.cancelled = cancelled
        self.stale = stale
        self.report = report
    }
}

/// A configuration swapped in by a reload, reduced to what the core decides on.
public struct SourcePlan: Sendable, Equatable {
    /// The configured sources, in configuration order.
    public var sources: [String]
    /// Sources whose settings changed (they are refreshed, a running refresh of them cancelled).
    public var changed: Set<String>
    /// Timing rules for every source.
    public var settings: SchedulerSettings
    /// `ReachabilityIntervalSec=`; zero turns probes off.
    public var probeInterval: Duration
    /// `ReachabilityURL=` is set: probes go there, so they can run while no source is failing (offline).
    public var probeURL: Bool
    /// How many sources may refresh at once (each on its own lane; never two refreshes of one source).
    public var lanes: Int
    /// Sources whose URL needs no network link (loopback, `file:`): never offline (`Scheduler.localSources`).
    public var local: Set<String> = []

    /// Creates a plan.
    public init(sources: [String], changed: Set<String> = [], settings: SchedulerSettings, probeInterval: Duration,
                probeURL: Bool = false, lanes: Int = 1, local: Set<String> = []) {
        self.local = local
        self.sources = sources
        self.changed = changed
        self.settings = settings
        self.probeInterval = probeInterval
        self.probeURL = probeURL
        self.lanes = max(1, lanes)
    }
}

/// Everything that can happen to the daemon, as the core sees it.
public enum DaemonInput: Sendable {
    /// The loop runs: READY=1 was sent; every source gets its startup trigger.
    case started
    /// The earliest deadline (`nextDeadline`) passed.
    case timer
    /// SIGTERM or SIGINT: stop.
    case stop
    /// `Refresh(source, wait)`: nil refreshes every source.
    case refresh(RequestID, source: String?, wait: Bool)
    /// `Logout`; `pendingChanges` is what it would discard.
    case logout(RequestID, discardPending: Bool, pendingChanges: Int)
    /// The account's files were erased (or erasing failed) after `.eraseAccount`.
    case accountErased(RequestID, Result<Void, ManagerError>)
    /// The client of a waiting request went away.
    case cancelled(RequestID)
    /// A refresh ended.
    case refreshFinished(RefreshTicket, RefreshFinish)
    /// The links changed: `online` is the verdict, `significant` a change worth a refresh while online.
    case links(online: Bool, significant: Bool)
    /// A reachability probe ended.
    case probeFinished(reachable: Bool)
    /// A reload swapped in a new configuration.
    case reloaded(SourcePlan)
    /// A local change of this source was stored: push it soon.
    case localChanged(source: String)
    /// The state database was replaced by an empty one: every source must be rebuilt.
    case storeReplaced
    /// The cache file of this source was found changed outside syncd while running, set aside and its
    /// listing forgotten: fetch it again at once, as a manual refresh (even offline or in backoff).
    case cacheFileLost(source: String)
}

/// What a waiting request is answered with.
public enum DaemonReply: Sendable, Equatable {
    /// The refreshes it waited for, sorted by source (empty when it did not wait).
    case refreshed([SourceRefreshReport])
    /// Done (logout).
    case done
    /// Failed.
    case failed(ManagerError)
}

/// What the core asks the loop to do, in order.
public enum DaemonAction: Sendable, Equatable {
    /// Run this refresh on the worker, with a new cancellation flag.
    case startRefresh(RefreshTicket)
    /// Set the ticket's cancellation flag.
    case cancelRefresh(RefreshTicket)
    /// The result of a ticket of an old generation or of a removed source was dropped (log it).
    case discarded(RefreshTicket)
    /// Answer a waiting request.
    case reply(RequestID, DaemonReply)
    /// Store where this source's retry cycle stands.
    case saveRetryState(source: String)
    /// Probe these sources' servers (or `ReachabilityURL=`).
    case probe(sources: [String])
    /// Erase the account's cache and state, then report `.accountErased`.
    case eraseAccount(RequestID)
    /// Reachability came back: the loop logs it (the triggers are already fed).
    case reachableAgain
    /// Save every retry state and exit.
    case exit
}
