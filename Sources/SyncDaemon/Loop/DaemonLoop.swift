import Dispatch
internal import Glibc
import SyncControl
import SyncCore
import SyncRemote
import SyncStore
import SyncEngine

/// The interpreter around the daemon's core (`DaemonStateMachine`, docs/architecture.md): it turns events
/// into inputs, performs the core's actions, and owns the effects the core must not: the worker, the
/// notifier, the timer, the sources' stored state for status, watchers and the control server. Only the
/// loop's task touches it.
final class DaemonLoop {
    let run: DaemonRun
    let input: AsyncStream<DaemonEvent>.Continuation
    var configuration: Configuration {
        didSet {
            sourcesByName = Dictionary(configuration.sources.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            statusBoard.setSources(configuration.sources)
        }
    }
    /// The configured sources by name (O(1) lookups per refresh).
    var sourcesByName: [String: SourceConfiguration] = [:]
    let logger: Logger
    let notifier: Notifier
    let worker: RefreshWorker
    /// What the daemon's engines share (a full listing asked for by `Refresh`, among others).
    let engineShared: EngineShared
    let prober: Prober
    let clock = ContinuousClock()
    let origin: ContinuousClock.Instant
    var core: DaemonStateMachine
    var jitter = SystemJitter()
    let timer: WakeupTimer
    /// Stored state of every source, refreshed after each refresh (kept in `statusBoard`: setting one marks
    /// the source's status changed).
    var states: SourceTable<SourceState> {
        get { statusBoard.states }
        _modify { yield &statusBoard.states }
    }
    /// The stamp of each source's state in `states` (`StampedState`): older reports do not replace it.
    var stateStamps: [String: Int] = [:]
    /// The change number and save time of a listing a running refresh published before going on
    /// (`.listingPublished`): its end sends `saved` only when the file changed again.
    var published: [String: PublishedListing] = [:]
    /// Each source's warnings from its latest listing (kept in `statusBoard`, like `states`).
    var notices: SourceTable<[SourceNotice]> {
        get { statusBoard.notices }
        _modify { yield &statusBoard.notices }
    }
    /// Each running ticket's cancellation flag: made here, set by `.cancelRefresh`, never reset.
    var cancellations: [Int: CancellationFlag] = [:]
    /// Waiting requests and how to answer them.
    var pending: [RequestID: PendingRequest] = [:]
    var linkState = "routable"
    /// One log line per link flap (`LinkChangeLog`).
    var linkLog = LinkChangeLog()
    /// When STATUS= is rebuilt and `WATCHDOG=1` sent (`NotifyPacing`); `pacing.changed` marks a change STATUS= shows.
    var pacing: NotifyPacing
    var lastStatusLine = ""
    /// Each source's status inputs held by the loop, and the `GetStatus` reply made from them.
    var statusBoard = StatusBoard()
    /// Why the last reload was rejected; shown in front of STATUS= and in GetStatus until a reload succeeds.
    var reloadFailure: String?
    /// `.source` files left out because of a configuration error; GetStatus lists them.
    var failedSources: [FailedSource]
    var exiting = false
    var linkMonitor: LinkMonitor?
    var controlServer: ControlServer?
    var controlTask: Task<Void, Never>?
    var watchers: [Int: AsyncStream<WatchEvent>.Continuation] = [:]
    var nextWatcher = 0
    var skipInitialLinkReport = false
    /// When the idle daemon next unmaps its clean code pages (docs/architecture.md, "Memory").
    var idlePages = IdlePageRelease()
    /// When libcurl, kept loaded after its last use, is unloaded (docs/architecture.md, "libcurl on demand").
    var libraryLinger = LibraryLinger()

    /// A request the core answers later, with what the loop needs to deliver the answer.
    struct PendingRequest {
        let progress: AsyncStream<RefreshProgress>.Continuation?
        let continuation: CheckedContinuation<DaemonReply, Never>
    }

    init(run: DaemonRun, input: AsyncStream<DaemonEvent>.Continuation) throws {
        self.run = run
        self.input = input
        self.configuration = run.configuration
        self.failedSources = run.failedSources
        self.sourcesByName = Dictionary(run.configuration.sources.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.logger = run.logger
        self.notifier = Notifier(environment: run.environment)
        self.pacing = NotifyPacing(watchdogInterval: notifier.watchdogInterval)
        self.origin = clock.now
        let shared = EngineShared(outboxObserver: { [input] source, state in input.yield(.outboxChanged(source: source, state: state)) },
                                  cacheFileObserver: { [input] source, state in input.yield(.cacheFileLost(source: source, state: state)) },
                                  outcomeObserver: { [input] source, outcome in input.yield(.outboxOutcome(source: source, outcome)) },
                                  publishObserver: { [input] source, state in input.yield(.listingPublished(source: source, state: state)) })
        engineShared = shared
        let engine = try DaemonLoop.makeEngine(run: run, configuration: run.configuration, shared: shared)
        // Account and directories never change on reload, so the lanes' engines open the same storage.
        let configuration = run.configuration
        self.worker = RefreshWorker(engine: engine,
                                    make: { try DaemonLoop.makeEngine(run: run, configuration: configuration, shared: shared) },
                                    onStoreReplaced: { [input] in input.yield(.storeReplaced) })
        // A local change to a large cache file is written once for a burst (docs/syncd.8.md, "Local changes").
        shared.setWriteScheduler(.daemon) { [worker = self.worker, input] name, delay in
            worker.later(delay) { engine in
                engine.writeScheduledCacheFile(name)
                input.yield(.cacheFileWritten(source: name, state: engine.shared.stampedState(of: name, from: engine.store)))
            }
        }
        self.prober = Prober()
        self.timer = try WakeupTimer { [input] in input.yield(.timer) }
        // syncd(8) GUARANTEES 1: serve the cached copy from the first moment, from the store, before any network.
        engine.restoreSnapshots(configuration.sources)
        var saved: [String: PersistedRetryState] = [:]
        var stored: [String: SourceState] = [:]
        for source in configuration.sources {
            let state = (try? engine.store.state(of: source.name, countingLocalView: true)) ?? SourceState(name: source.name)
            stored[source.name] = state
            saved[source.name] = DaemonLoop.decodeRetryState(state.retryState, source: source.name, logger: run.logger)
        }
        let stale = Set(stored.values.filter(\.isStale).map(\.name))
        core = DaemonStateMachine(SourcePlan(configuration), restoring: saved, stale: stale, at: MonotonicInstant(offset: .zero))
        statusBoard.states.replaceAll(with: stored)
        statusBoard.cacheFolder = engine.snapshots.folder
        statusBoard.setSources(configuration.sources)
    }

    static func makeEngine(run: DaemonRun, configuration: Configuration, shared: EngineShared) throws -> SyncEngine {
        let account = configuration.daemon.account
        let directories = Directories(configuration.daemon, userMode: run.userMode, environment: run.environment)
        // A lane that finds the file unusable replaces it; the other engines follow (docs/architecture.md, "Concurrency").
        let store = try AccountStorage.openStore(directories: directories, account: account, logger: run.logger, now: currentTimestamp(),
                                                 replaced: { shared.storeGeneration.withLock { $0 += 1 } })
        let snapshots = try AccountStorage.snapshots(directories: directories, account: account, group: configuration.daemon.cacheFileGroup)
        return try SyncEngine(store: store, snapshots: snapshots, logger: run.logger, environment: run.environment, shared: shared)
    }

    func monotonicNow() -> MonotonicInstant {
        MonotonicInstant(offset: clock.now - origin)
    }

    // MARK: Loop

    func run(_ events: AsyncStream<DaemonEvent>) async -> Int32 {
        installSignals()
        await startLinkMonitor()
        startControlServer()
        pacing.start(at: monotonicNow())
        notifier.ready(status: snapshot().summary)
        logger.notice("Started: account \(configuration.daemon.account), \(counted(configuration.sources.count, "source")), \(startupCacheSummary())")
        feed(.started)
        afterEvent()
        for await event in events {
            handle(event)
            if exiting { break }
            afterEvent()
        }
        await shutdown(events)
        return 0
    }

    /// What the start-up line says of the cache: only sources whose cache file syncd checked serve cached
    /// data; the others (never fetched, or their file missing or set aside) are named, and the start-up
    /// refresh fetches them.
    func startupCacheSummary() -> String {
        let missing = configuration.sources.map(\.name).filter { states[$0]?.snapshotFingerprint == nil }
        if missing.isEmpty { return "serving cached data" }
        let shown = missing.prefix(3).joined(separator: ", ") + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
        let serving = configuration.sources.count - missing.count
        return (serving == 0 ? "no cached data yet" : "serving cached data for \(serving)")
            + " (no cache file for \(shown): fetching \(missing.count == 1 ? "its listing" : "their listings"))"
    }

    /// Hands `input` to the core and performs what it returns.
    func feed(_ input: DaemonInput) {
        for action in core.handle(input, at: monotonicNow(), jitter: &jitter) { perform(action) }
    }

    func perform(_ action: DaemonAction) {
        switch action {
        case .startRefresh(let ticket): startRefresh(ticket)
        case .cancelRefresh(let ticket): cancellations[ticket.id]?.cancel()
        case .discarded(let ticket):
            cancellations[ticket.id] = nil
            logger.forSource(ticket.source).info("discarded the result of a refresh for a previous account or configuration")
        case .reply(let id, let reply): answer(id, reply)
        case .saveRetryState(let source): saveRetryState(source)
        case .probe(let sources): startProbe(sources)
        case .eraseAccount(let id): eraseAccount(id)
        case .reachableAgain: logger.notice("Reachability probe succeeds again; refreshing failing sources")
        case .exit: exiting = true
        }
        pacing.changed = true
    }

    func answer(_ id: RequestID, _ reply: DaemonReply) {
        guard let request = pending.removeValue(forKey: id) else { return }
        request.progress?.finish()
        request.continuation.resume(returning: reply)
    }

    func handle(_ event: DaemonEvent) {
        switch event {
        case .timer:
            let now = monotonicNow()
            if pacing.watchdogDue(at: now) { notifier.watchdog() }
            if let line = linkLog.due(at: now, window: configuration.network.debounce) { logger.notice(line.text) }
            feed(.timer)
            unloadLibraryIfDue(at: now)
            releaseIdlePagesIfDue(at: now)
        case .signal(let number):
            if number == SIGHUP {
                _ = reload()
            } else if core.stopDeadline == nil {
                logger.notice("Received \(number == SIGINT ? "SIGINT" : "SIGTERM"), stopping")
                notifier.stopping()
                feed(.stop)
            }
        case .refreshed(let ticket, let result, let state):
            finishRefresh(ticket, result: result, state: state)
        case .links(let state, let isOnline, let significant):
            updateLinks(state: state, online: isOnline, significant: significant)
        case .probed(let isReachable):
            feed(.probeFinished(reachable: isReachable))
        case .request(let request):
            handle(request)
        case .cancelled(let id):
            feed(.cancelled(id))
        case .accountErased(let id, let result, let erased):
            // What the (now empty) store holds, for status and for watchers (docs/syncctl.1.md, "watch").
            for source in configuration.sources {
                guard let state = keepNewest(erased[source.name], of: source.name) else { continue }
                broadcast(watchEvent(source.name, state, .logout))
            }
            pacing.changed = true
            feed(.accountErased(id, result))
        case .outboxChanged(let name, let stamped):
            let previous = states[name]
            if let state = keepNewest(stamped, of: name),
               state.pendingCount != previous?.pendingCount || state.conflictCount != previous?.conflictCount {
                broadcast(watchEvent(name, state, .saved))
            }
            pacing.changed = true
        case .listingPublished(let name, let stamped):
            // The refresh goes on, but apps read this listing now: counts, warnings and watchers follow it, and
            // the refresh's end sends `saved` again only if it changes the file again (`published`).
            if let state = keepNewest(stamped, of: name) {
                notices[name] = stamped.state.notices
                published[name] = PublishedListing(seq: state.changeSeq, savedAt: state.savedAt)
                broadcast(watchEvent(name, state, .saved))
            }
            pacing.changed = true
        case .outboxOutcome(let name, let outcome):
            // Sent with the counts the loop knows now; the outbox change's own report follows with the new ones.
            var event = watchEvent(name, states[name] ?? SourceState(name: name), WatchEvent.Kind(rawValue: outcome.kind.rawValue) ?? .local)
            event.outcome = WatchEvent.Outcome(id: outcome.recordID, outboxSeq: outcome.outboxSeq, httpStatus: outcome.httpStatus,
                                               message: outcome.message, publicMessage: outcome.publicMessage)
            broadcast(event)
        case .storeReplaced:
            // What the damaged file held is gone: forget it and rebuild every source from its server.
            logger.notice("Rebuilding every source into the new state database")
            for name in core.scheduler.sourceNames { states[name] = SourceState(name: name) }
            feed(.storeReplaced)
        case .cacheFileDamaged(let name):
            recoverCacheFile(name)
        case .cacheFileLost(let name, let stamped):
            if let state = keepNewest(stamped, of: name) { broadcast(watchEvent(name, state, .saved)) }
            feed(.cacheFileLost(source: name))
            pacing.changed = true
        case .cacheFileWritten(let name, let stamped):
            _ = keepNewest(stamped, of: name)
            pacing.changed = true
        case .localChanged(let name, let stamped):
            let state = keepNewest(stamped, of: name)
            feed(.localChanged(source: name))
            if let state { broadcast(watchEvent(name, state, .local)) }
            pacing.changed = true
        case .refreshProgress(let name, let count):
            for id in core.requests(waitingFor: name) {
                pending[id]?.progress?.yield(RefreshProgress(source: name, state: "syncing", pages: count.pages, bytes: count.bytes,
                                                             records: count.records))
            }
        }
    }

    /// After each event: keep STATUS= current when `pacing` says so (the line summarises every source, so
    /// per-event work does not grow with their number), re-arm the timer.
    func afterEvent() {
        statusBoard.collectChanges(from: &core)
        if pacing.rebuildsStatus(at: monotonicNow(), sources: configuration.sources.count) {
            let line = statusLine()
            if line != lastStatusLine {
                lastStatusLine = line
                notifier.status(line)
            }
        }
        if libraryLinger.due == nil, let releases = HTTPClient.loadedLibraryReleases() {
            libraryLinger.loaded(releases: releases, at: monotonicNow())
        }
        armTimer()
    }

    /// Unloads libcurl once nothing used it for `libraryLinger`'s quiet period; looks again later while it is used.
    func unloadLibraryIfDue(at now: MonotonicInstant) {
        guard let releases = libraryLinger.look(at: now) else { return }
        if let again = HTTPClient.unloadLibraryIfIdle(since: releases) { libraryLinger.loaded(releases: again, at: now) }
    }

    func armTimer() {
        let deadlines = pacing.deadlines + [core.nextDeadline, idlePages.due, libraryLinger.due,
                                            linkLog.deadline(window: configuration.network.debounce)].compactMap { $0 }
        guard let earliest = deadlines.min() else {
            timer.schedule(after: nil)
            return
        }
        let delay = max(Duration.zero, earliest - monotonicNow())
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000) + 1_000_000
        timer.schedule(after: .nanoseconds(nanoseconds))
    }
}

extension SchedulerSettings {
    /// The scheduler's settings from the configuration.
    init(_ configuration: Configuration) {
        self.init(
            debounce: configuration.network.debounce,
            interval: configuration.refresh.interval,
            randomizedDelay: configuration.refresh.randomizedDelay,
            initialDelay: configuration.retry.initialDelay,
            maxDelay: configuration.retry.maxDelay,
            maxAttempts: configuration.retry.maxAttempts)
    }
}

extension SourcePlan {
    /// What the core needs of a configuration.
    init(_ configuration: Configuration, changed: Set<String> = []) {
        self.init(sources: configuration.sources.map(\.name), changed: changed, settings: SchedulerSettings(configuration),
                  probeInterval: configuration.network.reachabilityInterval, probeURL: configuration.network.reachabilityURL != nil,
                  lanes: min(DaemonStateMachine.maxLanes, configuration.sources.count),
                  // A loopback server or a file needs no network link (syncd(8), "Network").
                  local: Set(configuration.sources.filter { URLOrigin(url: $0.url).map { $0.scheme == "file" || $0.isLoopback } == true }
                      .map(\.name)))
    }
}
