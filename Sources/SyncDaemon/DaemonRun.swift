import Dispatch
import FoundationEssentials
internal import Glibc
import SyncControl
import SyncCore
import SyncRemote
import SyncStore

/// The long-running daemon (`syncd` without `--once`): serve the cache at once, report ready, then keep
/// every source fresh as triggers arrive, until SIGTERM or SIGINT.
public struct DaemonRun: Sendable {
    let configuration: Configuration
    let configurationDirectory: String
    let directories: Directories
    let userMode: Bool
    let logger: Logger
    let environment: [String: String]

    /// Creates the run.
    public init(configuration: Configuration, configurationDirectory: String, directories: Directories,
                userMode: Bool, logger: Logger, environment: [String: String]) {
        self.configuration = configuration
        self.configurationDirectory = configurationDirectory
        self.directories = directories
        self.userMode = userMode
        self.logger = logger
        self.environment = environment
    }

    /// Runs until asked to stop; returns the exit status.
    public func run() async -> Int32 {
        let (events, input) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .unbounded)
        let lock: InstanceLock
        let loop: DaemonLoop
        do {
            // Before anything opens the store or the control socket: one daemon per state directory.
            lock = try InstanceLock.acquire(stateDirectory: directories.state, userMode: userMode)
            loop = try DaemonLoop(run: self, input: input)
        } catch {
            logger.error("Failed to start: \(failureReason(error))")
            return 1
        }
        let status = await loop.run(events)
        withExtendedLifetime(lock) {}
        return status
    }
}

/// The daemon's state and its one event loop. Only the loop's task touches it.
final class DaemonLoop {
    let run: DaemonRun
    let input: AsyncStream<DaemonEvent>.Continuation
    var configuration: Configuration
    let logger: Logger
    let notifier: Notifier
    let worker: RefreshWorker
    let prober: Prober
    let clock = ContinuousClock()
    let origin: ContinuousClock.Instant
    var scheduler: Scheduler
    var jitter = SystemJitter()
    let timer: DispatchSourceTimer
    var signalSources: [DispatchSourceSignal] = []
    /// Stored state of every source, refreshed after each refresh.
    var states: [String: SourceState] = [:]
    /// Sources waiting for the worker, in order; `running` is the one it works on.
    var queue: [String] = []
    var running: String?
    /// Bumped on logout and account change: results of older generations are discarded (syncd(8) GUARANTEES 9).
    var generation = 0
    var linkState = "routable"
    var online = true
    var reachable: Bool?
    var nextProbe: MonotonicInstant?
    var probing = false
    /// Sources whose last refresh failed for a reason reachability cannot cure (401, 404, invalid data):
    /// they wait for the next trigger and are not probed.
    var permanentlyFailing: Set<String> = []
    var nextWatchdog: MonotonicInstant?
    var refreshWaiters: [RefreshWaiter] = []
    /// Refreshes started so far, per source.
    var refreshStarts: [String: Int] = [:]
    /// Each source's warnings from its latest listing (an unfollowed next page, an oversized validator).
    var notices: [String: [String]] = [:]
    var lastStatusLine = ""
    /// Why the last reload was rejected; shown in front of STATUS= until a reload succeeds.
    var reloadFailure: String?
    var stopping = false
    var loggedOut = false
    var linkMonitor: LinkMonitor?
    var controlServer: ControlServer?
    var controlTask: Task<Void, Never>?
    var watchers: [Int: AsyncStream<WatchEvent>.Continuation] = [:]
    var nextWatcher = 0
    var skipInitialLinkReport = false

    struct RefreshWaiter {
        var remaining: Set<String>
        /// Per source, the number of refreshes started when the request arrived.
        let startedBefore: [String: Int]
        let progress: AsyncStream<RefreshProgress>.Continuation?
        var reports: [SourceRefreshReport]
        let continuation: CheckedContinuation<Result<[SourceRefreshReport], ControlFailure>, Never>
    }

    init(run: DaemonRun, input: AsyncStream<DaemonEvent>.Continuation) throws {
        self.run = run
        self.input = input
        self.configuration = run.configuration
        self.logger = run.logger
        self.notifier = Notifier(environment: run.environment)
        self.origin = clock.now
        self.scheduler = Scheduler(settings: SchedulerSettings(configuration))
        let engine = try DaemonLoop.makeEngine(run: run, configuration: run.configuration)
        self.worker = RefreshWorker(engine: engine, onStoreReplaced: { [input] in input.yield(.storeReplaced) })
        self.prober = try Prober()
        self.timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "syncd.timer"))
        // Rule 1: serve the cached copy from the first moment, from the store, before any network.
        engine.restoreSnapshots(configuration.sources)
        let now = monotonicNow()
        for source in configuration.sources {
            let state = (try? engine.store.state(of: source.name, countingLocalView: true)) ?? SourceState(name: source.name)
            states[source.name] = state
            scheduler.addSource(source.name, restoring: DaemonLoop.decodeRetryState(state.retryState), at: now)
        }
    }

    static func makeEngine(run: DaemonRun, configuration: Configuration) throws -> SyncEngine {
        let account = configuration.daemon.account
        let directories = Directories(
            state: configuration.daemon.stateDirectory, cache: configuration.daemon.cacheDirectory,
            runtime: configuration.daemon.runtimeDirectory, userMode: run.userMode, environment: run.environment)
        let store = try AccountStorage.openStore(directories: directories, account: account, logger: run.logger, now: currentTimestamp())
        let snapshots = try AccountStorage.snapshots(directories: directories, account: account, group: configuration.daemon.controlGroup)
        return try SyncEngine(store: store, snapshots: snapshots, logger: run.logger, environment: run.environment)
    }

    func monotonicNow() -> MonotonicInstant {
        MonotonicInstant(offset: clock.now - origin)
    }

    // MARK: Loop

    func run(_ events: AsyncStream<DaemonEvent>) async -> Int32 {
        installSignals()
        timer.setEventHandler { [input] in input.yield(.timer) }
        timer.resume()
        await startLinkMonitor()
        startControlServer()
        if let interval = notifier.watchdogInterval { nextWatchdog = monotonicNow() + interval }
        notifier.ready(status: snapshot().summary)
        logger.notice("Started: account \(configuration.daemon.account), \(counted(configuration.sources.count, "source")), serving cached data")
        feed(.trigger(.startup), source: nil)
        afterEvent()
        for await event in events {
            handle(event)
            if stopping && running == nil { break }
            afterEvent()
        }
        await shutdown()
        return 0
    }

    func handle(_ event: DaemonEvent) {
        switch event {
        case .timer:
            let now = monotonicNow()
            if let due = nextWatchdog, due <= now {
                notifier.watchdog()
                nextWatchdog = now + (notifier.watchdogInterval ?? .seconds(30))
            }
            if let due = nextProbe, due <= now, !probing { startProbe() }
            feed(.tick, source: nil)
        case .signal(let number):
            if number == SIGHUP {
                _ = reload()
            } else if !stopping {
                logger.notice("Received \(number == SIGINT ? "SIGINT" : "SIGTERM"), stopping")
                notifier.stopping()
                stopping = true
                queue.removeAll()
                worker.cancel()
            }
        case .refreshed(let name, let result, let state, let eventGeneration, let start):
            finishRefresh(name, result: result, state: state, generation: eventGeneration, start: start)
        case .links(let state, let isOnline, let significant):
            updateLinks(state: state, online: isOnline, significant: significant)
        case .probed(let isReachable):
            probeFinished(reachable: isReachable)
        case .request(let request):
            handle(request)
        case .cacheChanged(let event):
            broadcast(event)
        case .storeReplaced:
            // What the damaged file held is gone: forget it and rebuild every source from its server.
            logger.notice("Rebuilding every source into the new state database")
            for name in scheduler.sourceNames {
                states[name] = SourceState(name: name)
                permanentlyFailing.remove(name)
                feed(.trigger(.reload), source: name)
            }
        case .localChanged(let name, let state):
            if let state { states[name] = state }
            if scheduler.source(name) != nil { feed(.trigger(.localChange), source: name) }
            if let state { broadcast(watchEvent(name, state, .local)) }
        case .refreshProgress(let name, let count):
            for waiter in refreshWaiters
            where waiter.remaining.contains(name) && refreshStarts[name, default: 0] > waiter.startedBefore[name, default: 0] {
                waiter.progress?.yield(RefreshProgress(source: name, state: "syncing", pages: count.pages, bytes: count.bytes, records: count.records))
            }
        }
    }

    /// After each event: start queued work, re-arm the timer, keep STATUS= current.
    func afterEvent() {
        startNextRefresh()
        scheduleProbeIfNeeded()
        armTimer()
        let line = statusLine()
        if line != lastStatusLine {
            lastStatusLine = line
            notifier.status(line)
        }
    }

    func feed(_ event: SchedulerEvent, source: String?) {
        let actions = scheduler.handle(event, source: source, at: monotonicNow(), jitter: &jitter)
        for case .startRefresh(let name) in actions where !queue.contains(name) && running != name {
            queue.append(name)
        }
    }

    func armTimer() {
        let deadlines = [scheduler.nextDeadline(), nextProbe, nextWatchdog].compactMap { $0 }
        guard let earliest = deadlines.min() else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        let delay = max(Duration.zero, earliest - monotonicNow())
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000) + 1_000_000
        // A little leeway lets the kernel batch wakeups; timing stays well within a second.
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(50))
    }

    // MARK: Refreshes

    func startNextRefresh() {
        guard running == nil, !stopping, !queue.isEmpty else { return }
        let name = queue.removeFirst()
        guard let source = configuration.sources.first(where: { $0.name == name }) else { return startNextRefresh() }
        running = name
        let generation = self.generation
        refreshStarts[name, default: 0] += 1
        let start = refreshStarts[name, default: 0]
        logger.debug("\(name): refreshing \(source.url)")
        worker.refresh(source, progress: { [input] count in
            input.yield(.refreshProgress(source: name, count))
        }) { [input] result, state in
            input.yield(.refreshed(source: name, result: result, state: state, generation: generation, start: start))
        }
    }

    func finishRefresh(_ name: String, result: RefreshResult, state: SourceState?, generation: Int, start: Int) {
        if running == name { running = nil }
        guard generation == self.generation, scheduler.source(name) != nil else {
            logger.info("\(name): discarded the result of a refresh for a previous account or configuration")
            return
        }
        let previous = states[name]
        if let state {
            states[name] = state
            notices[name] = state.notices
        }
        // The cache file was rewritten by this refresh: a new listing, or a push that settled local changes.
        let replaced: Bool
        switch result {
        case .updated: replaced = true
        case .failed(let failure): replaced = failure.listingReplaced  // pulled, but a change failed to push
        case .unchanged: replaced = false
        }
        if let state, replaced || state.pendingCount != previous?.pendingCount || state.conflictCount != previous?.conflictCount {
            broadcast(watchEvent(name, state, .saved))
        }
        let outcome: RefreshOutcome
        var report = SourceRefreshReport(source: name, succeeded: false, result: "failed", records: states[name]?.recordCount ?? 0, error: nil)
        switch result {
        case .updated:
            outcome = .success
            report.succeeded = true
            report.result = "updated"
        case .unchanged:
            outcome = .unchanged
            report.succeeded = true
            report.result = "unchanged"
        case .failed(let failure):
            report.error = failure.message
            switch failure.kind {
            case .cancelled:
                report.result = "cancelled"
                outcome = .failure(.transient, retryAfter: nil)
            case .transient:
                let retryAfter = failure.retryAfter.flatMap { RetryAfter.parse($0, now: currentTimestamp().secondsSinceEpoch) }
                outcome = .failure(.transient, retryAfter: retryAfter)
            case .permanent:
                outcome = .failure(.permanent, retryAfter: nil)
            }
        }
        switch result {
        case .failed(let failure) where failure.kind == .permanent: permanentlyFailing.insert(name)
        case .failed(let failure) where failure.kind == .cancelled: break
        default: permanentlyFailing.remove(name)
        }
        if case .failed(let failure) = result, failure.kind == .cancelled, stopping {
            resolveWaiters(with: report, start: start)
            return
        }
        feed(.refreshFinished(outcome), source: name)
        if case .failed(let failure) = result, failure.kind != .cancelled {
            // Only a source that once had a good listing has a cached copy to serve.
            let serving = states[name]?.lastSuccess != nil ? "serving the cached copy" : "no cached copy yet"
            logger.warning("\(name): refresh failed, \(serving): \(failure.message); \(retryDescription(name))")
        }
        saveRetryState(name)
        resolveWaiters(with: report, start: start)
    }

    func retryDescription(_ name: String) -> String {
        guard let status = scheduler.status(of: name) else { return "source removed" }
        switch status.state {
        case .backoff:
            let delay = status.nextAttempt.map { $0 - monotonicNow() } ?? .zero
            return "retrying in \(formatDelay(delay)) (attempt \(status.attempt + 1) of \(scheduler.settings.maxAttempts))"
        case .error:
            return "not retrying until the next trigger"
        case .offline:
            return "offline; retrying when the network returns"
        default:
            return "will retry"
        }
    }

    func saveRetryState(_ name: String) {
        let saved = scheduler.source(name)?.exportRetryState(at: monotonicNow())
        let text = saved.flatMap { try? String(decoding: JSONEncoder().encode($0), as: UTF8.self) }
        guard states[name]?.retryState != text else { return }
        states[name]?.retryState = text
        Task(executorPreference: DaemonExecutor.shared) { [worker, logger] in
            await worker.withEngine { engine in
                do {
                    try engine?.store.saveRetryState(source: name, text)
                } catch {
                    logger.error("\(name): Failed to save retry state: \(failureReason(error))")
                }
            }
        }
    }

    static func decodeRetryState(_ text: String?) -> PersistedRetryState? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(PersistedRetryState.self, from: Data(text.utf8))
    }

    func resolveWaiters(with report: SourceRefreshReport, start: Int) {
        var kept: [RefreshWaiter] = []
        for var waiter in refreshWaiters {
            // A refresh that was already running when the client asked does not answer it.
            if start > waiter.startedBefore[report.source, default: 0], waiter.remaining.remove(report.source) != nil {
                waiter.reports.append(report)
            }
            if waiter.remaining.isEmpty {
                waiter.progress?.finish()
                waiter.continuation.resume(returning: .success(waiter.reports.sorted { $0.source < $1.source }))
            } else {
                kept.append(waiter)
            }
        }
        refreshWaiters = kept
    }

    // MARK: Network

    func updateLinks(state: String, online isOnline: Bool, significant: Bool) {
        let significant = significant && !skipInitialLinkReport
        skipInitialLinkReport = false
        let wasOnline = online
        linkState = state
        online = isOnline
        if wasOnline != isOnline {
            logger.notice(isOnline ? "Network is back (\(state)); refreshing sources" : "Offline (\(state)); serving cached data")
            feed(.linkState(online: isOnline), source: nil)
            if isOnline { feed(.trigger(.network), source: nil) }
        } else if isOnline && significant {
            logger.info("Network changed (\(state)); refreshing sources")
            feed(.trigger(.network), source: nil)
        }
    }

    /// Sources a reachability probe may help: failing for a reason the network could cure.
    var failingSources: [String] {
        scheduler.sourceNames.filter { name in
            guard !permanentlyFailing.contains(name), let status = scheduler.status(of: name) else { return false }
            return status.state == .backoff || status.state == .error || (states[name]?.isStale ?? false)
        }
    }

    /// Probes run only while some source is failing or the daemon is offline; never while all is healthy.
    func scheduleProbeIfNeeded() {
        let interval = configuration.network.reachabilityInterval
        let needed = !stopping && interval > .zero && (!online || !failingSources.isEmpty)
        if !needed {
            nextProbe = nil
            return
        }
        if nextProbe == nil && !probing {
            // Jittered to 0.5-1.5x so a fleet that failed together does not probe in step.
            nextProbe = monotonicNow() + interval * (0.5 + jitter.fraction())
        }
    }

    func startProbe() {
        nextProbe = nil
        let urls = configuration.network.reachabilityURL.map { [$0] }
            ?? failingSources.compactMap { name in configuration.sources.first { $0.name == name }?.url }
        guard !urls.isEmpty else { return }
        probing = true
        prober.probe(urls: urls) { [input] isReachable in input.yield(.probed(reachable: isReachable)) }
    }

    func probeFinished(reachable isReachable: Bool) {
        probing = false
        let was = reachable
        reachable = isReachable
        if isReachable && was == false {
            logger.notice("Reachability probe succeeds again; refreshing failing sources")
            for name in failingSources { feed(.trigger(.probeRecovered), source: name) }
        }
    }

    // MARK: Status

    func snapshot() -> DaemonStatusSnapshot {
        let now = monotonicNow()
        let wall = currentTimestamp()
        let daemon = DaemonStatusSnapshot.Daemon(
            version: syncdVersion, account: configuration.daemon.account, online: online, links: linkState,
            reachable: reachable, uptimeSec: Int((now - .zero).components.seconds))
        let sources = configuration.sources.map { source -> DaemonStatusSnapshot.Source in
            let state = states[source.name] ?? SourceState(name: source.name)
            let status = scheduler.status(of: source.name)
            var name = status?.state.rawValue ?? "idle"
            if running == source.name { name = "syncing" }
            let next = status?.nextAttempt.map { instant -> String in
                let seconds = max(0, (instant - now).components.seconds)
                return Timestamp(secondsSinceEpoch: wall.secondsSinceEpoch + seconds).rfc3339
            }
            return DaemonStatusSnapshot.Source(
                name: source.name, url: source.url, state: name, records: state.localRecordCount, pending: state.pendingCount,
                parked: state.parkedCount, conflicts: state.conflictCount, warnings: notices[source.name] ?? [],
                lastSuccess: state.lastSuccess, lastAttempt: state.lastAttempt, lastError: state.lastError,
                stale: state.isStale, attempt: status?.attempt ?? 0, nextAttempt: next)
        }
        return DaemonStatusSnapshot(daemon: daemon, sources: sources)
    }

    /// The `STATUS=` line: the summary, after the reason of a rejected reload while the old configuration is kept.
    func statusLine() -> String {
        let summary = snapshot().summary
        guard let reloadFailure else { return summary }
        return "Reload failed (keeping previous configuration): \(reloadFailure); \(summary)"
    }

    func broadcast(_ event: WatchEvent) {
        for watcher in watchers.values { watcher.yield(event) }
    }

    /// The `Watch` reply telling that `source` is now as `state` says.
    func watchEvent(_ source: String, _ state: SourceState, _ kind: WatchEvent.Kind) -> WatchEvent {
        WatchEvent(source: source, records: Int64(state.localRecordCount), pending: Int64(state.pendingCount),
                   conflicts: Int64(state.conflictCount), savedAt: state.savedAt, event: kind.rawValue)
    }

    /// Opens the Varlink socket before READY=1, so clients that connect early wait in the backlog.
    /// Without it the daemon still syncs; the failure is logged.
    func startControlServer() {
        let directories = Directories(
            state: configuration.daemon.stateDirectory, cache: configuration.daemon.cacheDirectory,
            runtime: configuration.daemon.runtimeDirectory, userMode: run.userMode, environment: run.environment)
        do {
            try Directories.create(directories.runtime, mode: 0o755)
            let handler = DaemonControlHandler(
                input: input, databasePath: directories.state + "/" + configuration.daemon.account + "/state.db")
            let server = try ControlServer.listen(
                path: directories.runtime + "/io.syncd.Manager", handler: handler,
                policy: AccessPolicy(controlGroup: configuration.daemon.controlGroup),
                info: ControlServiceInfo(version: syncdVersion), logger: logger)
            controlServer = server
            controlTask = Task(executorPreference: DaemonExecutor.shared) { await server.run() }
        } catch {
            logger.error("Failed to open the control socket, continuing without syncctl access: \(failureReason(error))")
        }
    }

    // MARK: Signals and shutdown

    func installSignals() {
        let queue = DispatchQueue(label: "syncd.signals")
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [input] in input.yield(.signal(number)) }
            source.resume()
            signalSources.append(source)
        }
    }

    func shutdown() async {
        stopping = true
        worker.cancel()
        await linkMonitor?.stop()
        controlTask?.cancel()
        await controlTask?.value
        for watcher in watchers.values { watcher.finish() }
        timer.cancel()
        for waiter in refreshWaiters {
            waiter.progress?.finish()
            waiter.continuation.resume(returning: .failure(.shuttingDown))
        }
        refreshWaiters.removeAll()
        // Save where each source's retry cycle stands, so a restart continues it (syncd(8) GUARANTEES 7).
        let now = monotonicNow()
        let retryStates = scheduler.exportRetryStates(at: now)
        let names = scheduler.sourceNames
        await worker.withEngine { engine in
            for name in names {
                let text = retryStates[name].flatMap { try? String(decoding: JSONEncoder().encode($0), as: UTF8.self) }
                try? engine?.store.saveRetryState(source: name, text)
            }
        }
        logger.notice("Stopped")
    }
}

func formatDelay(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    if seconds < 10 {
        let tenths = Int(attoseconds / 100_000_000_000_000_000)
        return "\(seconds).\(tenths)s"
    }
    if seconds < 120 { return "\(seconds)s" }
    if seconds < 7200 { return "\(seconds / 60)min" }
    return "\(seconds / 3600)h"
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
