// The daemon's core as one pure state machine (docs/architecture.md, "The daemon's core"): it owns the
// per-source schedulers, the run queue, the running refresh tickets (at most one per source), the account
// generation, the waiting requests, the failing sources, the logged-out and stopping states and the probe schedule. The loop
// (SyncDaemon's DaemonLoop) feeds it inputs stamped with the monotonic time and performs the actions it
// returns; it reads no clock and does no I/O, so every scenario is a unit test with a manual clock.

/// The daemon's decisions. One entry point, `handle(_:at:jitter:)`, in the shape of `SourceScheduler`.
public struct DaemonStateMachine: Sendable {
    /// Where the daemon's life stands.
    public enum Phase: Equatable, Sendable {
        /// Serving and refreshing.
        case running
        /// Logged out: the sources rest until a manual refresh or a reload brings them back.
        case loggedOut
        /// Stopping: the running refreshes are cancelled; `deadline` is when the loop exits whatever the
        /// lanes do (within 5 s of SIGTERM, syncd(8) SIGNALS).
        case stopping(deadline: MonotonicInstant)
        /// `.exit` was returned; nothing happens any more.
        case exited
    }

    /// A `Refresh` call with `wait`, waiting for its sources.
    struct Waiter: Sendable {
        let id: RequestID
        /// Tickets before this one were issued before the call and do not answer it.
        let firstTicket: Int
        var remaining: Set<String>
        var reports: [SourceRefreshReport] = []
    }

    /// The most refreshes that ever run at once (docs/architecture.md, "Concurrency").
    public static let maxLanes = 4

    // The one stop deadline. syncd(8), SIGNALS, promises the daemon is gone within 5 seconds of SIGTERM or SIGINT;
    // the units' TimeoutStopSec= (15 s, packaging/systemd/) is only the safety net that SIGKILLs a daemon that broke
    // that promise. The whole budget is counted from the stop here, and both waits are carved out of it: the core
    // waits for cancelled refreshes until `stopGrace`, then the loop's shutdown (refusing queued requests, stopping
    // the control server and the link monitor, saving retry states) runs until `stopDeadline`, bounded by it
    // whatever clients or a refresh stuck in a transfer do. Half a second of the 5 s is left for the process's exit.

    /// The daemon is gone this long after the stop at the latest: `stopDeadline` is the stop plus this.
    public static let stopBudget: Duration = .milliseconds(4_500)
    /// The part of `stopBudget` kept for the loop's shutdown after the core's `.exit`.
    public static let shutdownReserve: Duration = .milliseconds(500)
    /// How long the core waits for cancelled refreshes before exiting anyway: the budget less the shutdown's reserve.
    public static let stopGrace: Duration = stopBudget - shutdownReserve

    /// Every source's refresh scheduling.
    public internal(set) var scheduler: Scheduler
    /// The configured sources, in configuration order.
    public internal(set) var sources: [String]
    var configured: Set<String>
    public internal(set) var phase: Phase = .running
    /// When the process must be gone (`stopBudget` after SIGTERM or SIGINT): the loop's shutdown waits no longer.
    /// Nil until the stop.
    public internal(set) var stopDeadline: MonotonicInstant?

    /// Whether a local change (`Put`, `Delete`, `Resolve`, an outbox retry, drop or restore) is taken now: not
    /// once the stop began. Taken then, it would be queued for a push that never comes in this process; the
    /// caller is told `Stopping` instead, as for every other call (docs/control-api.md).
    public var takesLocalChanges: Bool {
        switch phase {
        case .running, .loggedOut: return true
        case .stopping, .exited: return false
        }
    }
    /// The refreshes running, by source: at most one per source (a refresh of a source never overlaps
    /// another of the same source, whatever its generation), at most `lanes` in all.
    public internal(set) var running: [String: RefreshTicket] = [:] {
        // At most `lanes` entries each side: a source starting or ending its refresh changes its status.
        didSet {
            for name in oldValue.keys where running[name] == nil { refreshChanges.insert(name) }
            for (name, ticket) in running where oldValue[name]?.id != ticket.id { refreshChanges.insert(name) }
        }
    }
    /// How many refreshes may run at once.
    public internal(set) var lanes: Int
    /// Queued sources met while their own refresh was still running: queued again when it ends.
    var waitingForSelf: Set<String> = []
    /// Bumped by logout: results of older tickets are discarded (syncd(8) GUARANTEES 9).
    public internal(set) var generation = 0 {
        didSet { for name in running.keys { refreshChanges.insert(name) } }
    }
    /// Sources whose `isRefreshing` may have changed since the last `takeStatusChanges()`.
    var refreshChanges = SourceChanges()
    var nextTicket = 1
    /// Sources waiting for a lane, in order (`queued` mirrors it for O(1) membership).
    var queue: [String] = []
    var queueHead = 0
    var queued: Set<String> = []
    var waiters: [Waiter] = []
    var pendingLogout: RequestID?
    /// Failing for a reason reachability cannot cure (401, 404, invalid data): not probed.
    public internal(set) var permanentlyFailing: Set<String> = []
    /// Sources whose last refresh failed or left the copy stale: the candidates for probes.
    var unhealthy: Set<String> = []
    /// Sources whose cached copy is stale.
    var stale: Set<String> = []
    /// The links' verdict.
    public internal(set) var online = true
    /// The last probe's verdict; nil until one ran.
    public internal(set) var reachable: Bool?
    var probeInterval: Duration
    var probeURL: Bool
    /// When the next reachability probe is due.
    public internal(set) var nextProbe: MonotonicInstant?
    var probing = false

    /// A core for the plan's sources; `restoring` holds saved retry states by source, `stale` the sources
    /// whose stored copy is stale (a probe may help them).
    public init(_ plan: SourcePlan, restoring saved: [String: PersistedRetryState] = [:], stale: Set<String> = [],
                at now: MonotonicInstant) {
        self.stale = stale
        unhealthy = stale
        sources = plan.sources
        configured = Set(plan.sources)
        probeInterval = plan.probeInterval
        probeURL = plan.probeURL
        lanes = plan.lanes
        scheduler = Scheduler(settings: plan.settings)
        scheduler.setLocalSources(plan.local)
        for name in plan.sources { scheduler.addSource(name, restoring: saved[name], at: now) }
    }

    /// The earliest instant the core needs `.timer`; nil if none.
    public var nextDeadline: MonotonicInstant? {
        var deadlines = [scheduler.nextDeadline(), nextProbe].compactMap { $0 }
        if case .stopping(let deadline) = phase { deadlines.append(deadline) }
        return deadlines.min()
    }

    /// The sources whose status inputs held here (the scheduler's state, attempt and next attempt; whether a
    /// lane refreshes it) changed since the last call, and clears the marks (docs/architecture.md, "Status at scale").
    public mutating func takeStatusChanges() -> SourceChanges {
        var changes = scheduler.statusChanges.take()
        changes.formUnion(refreshChanges.take())
        return changes
    }

    /// Whether `source` is being refreshed for the current account.
    public func isRefreshing(_ source: String) -> Bool {
        running[source]?.generation == generation
    }

    /// The waiting requests a progress report of `source` concerns (refreshes issued after they asked).
    public func requests(waitingFor source: String) -> [RequestID] {
        guard let running = running[source] else { return [] }
        return waiters.filter { $0.remaining.contains(source) && running.id >= $0.firstTicket }.map(\.id)
    }

    /// Sources a reachability probe may help: failing for a reason the network could cure.
    public var failingSources: [String] {
        unhealthy.filter(isFailing).sorted()
    }

    /// Whether some source is failing: stops at the first one (called after every input).
    var hasFailingSource: Bool { unhealthy.contains(where: isFailing) }

    private func isFailing(_ name: String) -> Bool {
        guard !permanentlyFailing.contains(name), let status = scheduler.status(of: name) else { return false }
        return status.state == .backoff || status.state == .error || stale.contains(name)
    }

    /// Handles one input at `now`; returns what the loop must do, in order.
    public mutating func handle<J: JitterSource>(_ input: DaemonInput, at now: MonotonicInstant, jitter: inout J) -> [DaemonAction] {
        var actions: [DaemonAction] = []
        switch (phase, input) {
        case (.exited, _):
            return []
        case (.stopping, .refresh(let id, _, _)), (.stopping, .logout(let id, _, _)):
            actions.append(.reply(id, .failed(.stopping)))
        case (.stopping(let deadline), .timer):
            if now >= deadline { actions += exit() }
        case (.stopping, .refreshFinished(let ticket, _)):
            release(ticket)
            if running.isEmpty { actions += exit() }
        case (.stopping, .accountErased(let id, _)):
            actions.append(.reply(id, .failed(.stopping)))
        case (.stopping, _):
            break
        case (_, .stop):
            actions += stop(at: now)
        case (_, .started):
            feed(.trigger(.startup), source: nil, at: now, jitter: &jitter)
        case (_, .timer):
            if let due = nextProbe, due <= now, !probing { actions += startProbe() }
            feed(.tick, source: nil, at: now, jitter: &jitter)
        case (_, .refresh(let id, let source, let wait)):
            actions += refresh(id, source: source, wait: wait, at: now, jitter: &jitter)
        case (_, .logout(let id, let discardPending, let pending)):
            actions += logout(id, discardPending: discardPending, pendingChanges: pending)
        case (_, .accountErased(let id, let result)):
            if pendingLogout == id { pendingLogout = nil }
            switch result {
            case .success: actions.append(.reply(id, .done))
            case .failure(let error): actions.append(.reply(id, .failed(error)))
            }
        case (_, .cancelled(let id)):
            if let index = waiters.firstIndex(where: { $0.id == id }) {
                waiters.remove(at: index)
                actions.append(.reply(id, .failed(.invalidParameter(parameter: "connection", reason: "the client went away"))))
            }
        case (_, .refreshFinished(let ticket, let finish)):
            actions += finished(ticket, finish, at: now, jitter: &jitter)
        case (_, .links(let isOnline, let significant)):
            let was = online
            online = isOnline
            if was != isOnline {
                feed(.linkState(online: isOnline), source: nil, at: now, jitter: &jitter)
                if isOnline { feed(.trigger(.network), source: nil, at: now, jitter: &jitter) }
            } else if isOnline && significant {
                feed(.trigger(.network), source: nil, at: now, jitter: &jitter)
            }
        case (_, .probeFinished(let isReachable)):
            probing = false
            let was = reachable
            reachable = isReachable
            if isReachable && was == false {
                actions.append(.reachableAgain)
                for name in failingSources { feed(.trigger(.probeRecovered), source: name, at: now, jitter: &jitter) }
            }
        case (_, .reloaded(let plan)):
            actions += reload(plan, at: now, jitter: &jitter)
        case (_, .localChanged(let source)):
            if scheduler.source(source) != nil { feed(.trigger(.localChange), source: source, at: now, jitter: &jitter) }
        case (_, .cacheFileLost(let source)):
            if scheduler.source(source) != nil { feed(.trigger(.manual), source: source, at: now, jitter: &jitter) }
        case (_, .storeReplaced):
            permanentlyFailing.removeAll()
            unhealthy.removeAll()
            stale.removeAll()
            for name in scheduler.sourceNames { feed(.trigger(.reload), source: name, at: now, jitter: &jitter) }
        }
        if case .stopping = phase { return actions }
        if case .exited = phase { return actions }
        actions += startNext()
        scheduleProbe(at: now, jitter: &jitter)
        return actions
    }
}
