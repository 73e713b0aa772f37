import SyncControl
import SyncCore
import SyncStore

extension DaemonLoop {
    func handle(_ request: ControlRequest) {
        switch request {
        case .status(let continuation):
            continuation.resume(returning: snapshot())
        case .refresh(let source, let wait, let progress, let continuation):
            refresh(source: source, wait: wait, progress: progress, continuation: continuation)
        case .reload(let continuation):
            continuation.resume(returning: reload())
        case .logout(let discardPending, let continuation):
            logout(discardPending: discardPending, continuation: continuation)
        case .change(let change, let continuation):
            apply(change, continuation: continuation)
        case .watch(let sink, let continuation):
            nextWatcher += 1
            watchers[nextWatcher] = sink
            // A baseline first, in configuration order; the loop owns `states`, so no change can slip in
            // between these and the events broadcast later.
            for source in configuration.sources {
                sink.yield(watchEvent(source.name, states[source.name] ?? SourceState(name: source.name), .current))
            }
            continuation.resume(returning: nextWatcher)
        case .unwatch(let token):
            watchers[token]?.finish()
            watchers[token] = nil
        }
    }

    /// A manual refresh: immediate, restarts a backoff cycle, tried even while offline.
    func refresh(source: String?, wait: Bool, progress: AsyncStream<RefreshProgress>.Continuation?,
                 continuation: CheckedContinuation<Result<[SourceRefreshReport], ControlFailure>, Never>) {
        if stopping {
            progress?.finish()
            return continuation.resume(returning: .failure(.shuttingDown))
        }
        if let source, scheduler.source(source) == nil {
            progress?.finish()
            return continuation.resume(returning: .failure(.noSuchSource(source)))
        }
        if loggedOut { readdSources() }
        let names = source.map { [$0] } ?? scheduler.sourceNames
        feed(.trigger(.manual), source: source)
        if wait && !names.isEmpty {
            let before = Dictionary(uniqueKeysWithValues: names.map { ($0, refreshStarts[$0, default: 0]) })
            refreshWaiters.append(RefreshWaiter(remaining: Set(names), startedBefore: before, progress: progress, reports: [],
                                                continuation: continuation))
        } else {
            progress?.finish()
            continuation.resume(returning: .success([]))
        }
    }

    /// SIGHUP or `Reload`: parse and validate the whole configuration; swap it in whole, or keep the old one.
    func reload() -> Result<Void, ControlFailure> {
        notifier.reloading()
        if loggedOut { readdSources() }
        logger.notice("Reloading configuration from \(run.configurationDirectory)")
        let loaded = ConfigurationDirectory.load(directory: run.configurationDirectory)
        guard case .success(let new) = loaded else {
            if case .failure(let errors) = loaded {
                for problem in errors.problems { logger.error("\(problem)") }
                // Stays in STATUS= (in front of the summary) until a reload succeeds: systemctl status must show it.
                reloadFailure = errors.problems.first.map(\.description) ?? "invalid configuration"
                lastStatusLine = statusLine()
                notifier.ready(status: lastStatusLine)
                return .failure(.reloadFailed(errors.problems.map(\.description).joined(separator: "; ")))
            }
            return .failure(.reloadFailed("invalid configuration"))
        }
        let old = configuration
        if new.daemon.account != old.daemon.account || new.daemon.stateDirectory != old.daemon.stateDirectory
            || new.daemon.cacheDirectory != old.daemon.cacheDirectory || new.daemon.controlGroup != old.daemon.controlGroup {
            logger.warning("Account or directories changed; restart syncd to apply them (keeping \(old.daemon.account))")
        }
        var applied = new
        applied.daemon = old.daemon
        configuration = applied
        scheduler.updateSettings(SchedulerSettings(applied))
        let oldSources = Dictionary(uniqueKeysWithValues: old.sources.map { ($0.name, $0) })
        let now = monotonicNow()
        for source in applied.sources {
            if let previous = oldSources[source.name] {
                if previous != source {
                    logger.info("\(source.name): configuration changed; refreshing")
                    if running == source.name { worker.cancel() }
                    feed(.trigger(.reload), source: source.name)
                }
            } else {
                logger.info("\(source.name): new source")
                states[source.name] = states[source.name] ?? SourceState(name: source.name)
                scheduler.addSource(source.name, at: now)
                feed(.trigger(.reload), source: source.name)
            }
        }
        let kept = Set(applied.sources.map(\.name))
        for name in oldSources.keys where !kept.contains(name) {
            logger.info("\(name): removed from the configuration; its cached file stays until logout")
            scheduler.removeSource(name)
            queue.removeAll { $0 == name }
            if running == name { worker.cancel() }
        }
        reloadFailure = nil
        lastStatusLine = statusLine()
        notifier.ready(status: lastStatusLine)
        logger.notice("Configuration reloaded: \(counted(applied.sources.count, "source"))")
        return .success(())
    }

    /// Runs a local change on the worker (the engine is the store's only writer), then answers, republishes
    /// and schedules a debounced push.
    func apply(_ change: LocalChangeRequest, continuation: CheckedContinuation<Result<String, ManagerError>, Never>) {
        let sourceName: String?
        switch change {
        case .put(let source, _), .delete(let source, _), .resolve(let source, _, _): sourceName = source
        case .retry, .drop: sourceName = nil
        }
        let config = sourceName.flatMap { name in configuration.sources.first { $0.name == name } }
        if let sourceName, config == nil {
            return continuation.resume(returning: .failure(.noSuchSource(source: sourceName)))
        }
        Task(executorPreference: DaemonExecutor.shared) { [worker, input] in
            let outcome: (Result<String, ManagerError>, String?, SourceState?) = await worker.withEngine { engine in
                guard let engine else { return (.failure(.storageFailure(reason: "no account storage")), nil, nil) }
                do throws(LocalChangeError) {
                    let touched: String
                    let answer: String
                    func source() throws(LocalChangeError) -> SourceConfiguration {
                        guard let config else { throw .storage("the source is no longer configured") }
                        return config
                    }
                    switch change {
                    case .put(_, let record):
                        answer = try engine.put(record, into: try source())
                        touched = try source().name
                    case .delete(_, let id):
                        try engine.delete(id: id, from: try source())
                        (answer, touched) = (id, try source().name)
                    case .retry(let seq):
                        touched = try engine.retryOutboxEntry(seq)
                        answer = String(seq)
                    case .drop(let seq):
                        touched = try engine.dropOutboxEntry(seq)
                        answer = String(seq)
                    case .resolve(_, let id, let keepLocal):
                        try engine.resolve(source: try source(), id: id, keepLocal: keepLocal)
                        (answer, touched) = (id, try source().name)
                    }
                    return (.success(answer), touched, try? engine.store.state(of: touched, countingLocalView: true))
                } catch {
                    return (.failure(error.managerError), nil, nil)
                }
            }
            continuation.resume(returning: outcome.0)
            if let touched = outcome.1 { input.yield(.localChanged(source: touched, state: outcome.2)) }
        }
    }

    /// syncd(8) GUARANTEES 9: cancel in-flight work, erase the account's cache folder and state; a response that
    /// arrives afterwards belongs to an old generation and is discarded.
    func logout(discardPending: Bool, continuation: CheckedContinuation<Result<Void, ControlFailure>, Never>) {
        let pending = states.values.reduce(0) { $0 + $1.unpushedCount + $1.conflictCount }
        if pending > 0 && !discardPending {
            return continuation.resume(returning: .failure(.pendingChanges(pending)))
        }
        generation += 1
        queue.removeAll()
        worker.cancel()
        let names = scheduler.sourceNames
        for name in names { scheduler.removeSource(name) }
        for waiter in refreshWaiters {
            waiter.progress?.finish()
            waiter.continuation.resume(returning: .failure(.storageFailure("logged out")))
        }
        refreshWaiters.removeAll()
        permanentlyFailing.removeAll()
        loggedOut = true
        let run = self.run
        let configuration = self.configuration
        let logger = self.logger
        Task(executorPreference: DaemonExecutor.shared) { [worker, input] in
            do {
                try await worker.replaceEngine(
                    teardown: { try AccountErasure.erase(configuration: configuration, run: run) },
                    make: { try DaemonLoop.makeEngine(run: run, configuration: configuration) })
                logger.notice("Logged out: erased the cache and state of account \(configuration.daemon.account)")
                for source in configuration.sources {
                    input.yield(.cacheChanged(WatchEvent(source: source.name, records: 0, pending: 0, conflicts: 0, savedAt: nil,
                                                                event: WatchEvent.Kind.logout.rawValue)))
                }
                continuation.resume(returning: .success(()))
            } catch {
                logger.error("Failed to log out: \(failureReason(error))")
                continuation.resume(returning: .failure(.storageFailure("Failed to erase the account's data: \(failureReason(error))")))
            }
        }
        states = Dictionary(uniqueKeysWithValues: configuration.sources.map { ($0.name, SourceState(name: $0.name)) })
    }

    /// After a logout, sources rest until a manual refresh or a reload brings them back.
    func readdSources() {
        loggedOut = false
        let now = monotonicNow()
        for source in configuration.sources where scheduler.source(source.name) == nil {
            scheduler.addSource(source.name, at: now)
        }
    }
}

extension DaemonLoop {
    /// Starts watching links when `WatchLinks=yes` (rtnetlink, local and quick, so it happens before
    /// READY=1 and before the startup refresh). Without a monitor, or if netlink is refused, the daemon
    /// assumes it is online and reports the links as "unknown": only a real request decides (rule 5).
    func startLinkMonitor() async {
        guard configuration.network.watchLinks else {
            linkState = "unknown"
            return
        }
        let input = self.input
        let monitor = LinkMonitor(allowedInterfaces: Set(configuration.network.interfaces), logger: logger) { state, change in
            input.yield(.links(state: state.rawValue, online: state.isOnline, significant: change?.schedulesRefresh ?? false))
        }
        do {
            try await monitor.start()
            linkMonitor = monitor
            // The monitor's first report (already queued) carries this same state; it must not trigger a refresh
            // on top of the startup one.
            skipInitialLinkReport = true
            linkState = monitor.state.rawValue
            online = monitor.state.isOnline
            if !online {
                logger.notice("Offline (\(linkState)) at start; serving cached data until the network returns")
                feed(.linkState(online: false), source: nil)
            }
        } catch {
            logger.warning("Failed to watch network links, assuming online: \(failureReason(error))")
            linkState = "unknown"
        }
    }
}

extension LocalChangeError {
    var managerError: ManagerError {
        switch self {
        case .notWritable(let source): return .notWritable(source: source)
        case .noSuchRecord(let source, let id): return .noSuchRecord(source: source, id: id)
        case .invalidRecord(let reason): return .invalidParameter(parameter: "record", reason: reason)
        case .noSuchOutboxEntry(let seq): return .noSuchOutboxEntry(seq: seq)
        case .noConflict(let source, let id): return .invalidParameter(parameter: "id", reason: "record \"\(id)\" of \"\(source)\" is not in conflict")
        case .storage(let reason): return .storageFailure(reason: reason)
        }
    }
}
