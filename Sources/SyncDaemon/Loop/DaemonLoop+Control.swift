import SyncControl
import SyncCore
import SyncStore
import SyncEngine

extension DaemonLoop {
    func handle(_ request: ControlRequest) {
        switch request {
        case .status(let audience, let continuation):
            continuation.resume(returning: statusReply(audience: audience))
        case .sourceExists(let name, let continuation):
            continuation.resume(returning: sourcesByName[name] != nil)
        case .refresh(let id, let source, let wait, let full, let progress, let continuation):
            pending[id] = PendingRequest(progress: progress, continuation: continuation)
            if full { engineShared.askFullListing(of: source.map { [$0] } ?? configuration.sources.map(\.name)) }
            feed(.refresh(id, source: source, wait: wait))
        case .reload(let continuation):
            continuation.resume(returning: reload())
        case .logout(let id, let discardPending, let continuation):
            pending[id] = PendingRequest(progress: nil, continuation: continuation)
            let changes = states.values.reduce(0) { $0 + $1.unpushedCount + $1.conflictCount }
            feed(.logout(id, discardPending: discardPending, pendingChanges: changes))
        case .change(let change, let continuation):
            guard core.takesLocalChanges else { return continuation.resume(returning: .failure(.stopping)) }
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

    /// SIGHUP or `Reload`: parse and validate the whole configuration; swap it in whole, or keep the old one.
    /// The core learns the new source list and which sources changed.
    func reload() -> Result<Void, ManagerError> {
        if core.stopDeadline != nil { return .failure(.stopping) }
        notifier.reloading()
        logger.notice("Reloading configuration from \(run.configurationDirectory)")
        // A .source file with a problem is left out (and listed as failed); syncd.conf problems refuse the reload.
        let new: Configuration
        let loaded: LoadedConfiguration
        switch ConfigurationDirectory.loadSkippingFailedSources(directory: run.configurationDirectory) {
        case .success(let result):
            loaded = result
            new = result.configuration
        case .failure(let errors):
            logger.configurationRejected(errors.problems)
            return rejectReload(errors.problems.first.map(\.description) ?? "invalid configuration",
                                whole: errors.problems.map(\.description).joined(separator: "; "))
        }
        let old = configuration
        // All or nothing (syncd.conf(5), DESCRIPTION): a new account or directory is applied by a restart only, so
        // such a reload is rejected whole; so is one whose folders syncd must not use.
        if let refusal = reloadRefusal(new) {
            logger.error("Reload rejected, keeping the previous configuration: \(refusal)")
            return rejectReload(refusal, whole: refusal)
        }
        for failed in loaded.failedSources { logger.sourceFailed(failed) }
        failedSources = loaded.failedSources
        let applied = new
        configuration = applied
        let changes = SourceListChanges(from: old.sources, to: applied.sources)
        for entry in changes.entries {
            switch entry.change {
            case .changed:
                logger.forSource(entry.name).info("configuration changed; refreshing")
            case .added:
                logger.forSource(entry.name).info("new source")
                states[entry.name] = states[entry.name] ?? SourceState(name: entry.name)
            }
        }
        for name in changes.removed {
            if failedSources.contains(where: { $0.name == name }) {
                logger.forSource(name).warning("stopped: its .source file now has an error (see above); its cached file stays")
            } else if let state = states[name], state.pendingCount + state.conflictCount > 0 {
                // Its changes are not lost, but nothing pushes them now: say so, and how to get them out.
                let waiting = state.pendingCount + state.conflictCount
                logger.forSource(name).warning("removed from the configuration with \(counted(waiting, "record")) whose local changes "
                    + "are not pushed yet: they stay in the outbox ('syncctl outbox' lists them) and go out once a source named "
                    + "\(name) is configured again; its cached file stays until logout")
            } else {
                logger.forSource(name).info("removed from the configuration; its cached file stays until logout")
            }
        }
        // systemd passes credentials only at start: say at once that a token it did not pass needs a restart.
        for missing in Credentials.missingAfterReload(applied.sources, environment: run.environment) {
            logger.warning(missing.message, source: missing.source)
        }
        feed(.reloaded(SourcePlan(applied, changed: changes.changed)))
        reloadFailure = nil
        lastStatusLine = statusLine()
        notifier.ready(status: lastStatusLine)
        logger.notice("Configuration reloaded: \(counted(applied.sources.count, "source"))"
                      + (failedSources.isEmpty ? "" : ", \(counted(failedSources.count, "source")) not loaded"))
        return .success(())
    }

    /// Why `new` cannot be swapped in, or nil: a folder it names that syncd must not use (checked first: a restart
    /// would be refused too), else the `[Daemon]` keys only a restart applies.
    func reloadRefusal(_ new: Configuration) -> String? {
        let directories = Directories(new.daemon, userMode: run.userMode, environment: run.environment)
        let paths = directories.paths(of: new.daemon.account)
        do {
            for (path, kind, mode) in [(directories.state, FolderKind.state, UInt32(0o700)), (directories.cache, .cache, 0o750),
                                       (directories.runtime, .runtime, 0o755)] {
                try FolderCheck.inspect(path, kind: kind, mode: mode, followingLinks: true)
            }
            for (folder, mode) in [(paths.stateFolder, UInt32(0o700)), (paths.cacheFolderPath, 0o750)] {
                try FolderCheck.inspect(folder, kind: .account, mode: mode, followingLinks: false)
            }
        } catch {
            return "\(error)"
        }
        func settings(_ daemon: DaemonSettings, _ directories: Directories) -> RestartSettings {
            RestartSettings(account: daemon.account, stateDirectory: directories.state, cacheDirectory: directories.cache,
                            runtimeDirectory: directories.runtime, controlGroup: daemon.controlGroup,
                            readGroup: daemon.readGroup ?? "")
        }
        let changes = ReloadDecision.changesNeedingRestart(from: settings(configuration.daemon, run.directories),
                                                           to: settings(new.daemon, directories))
        return ReloadDecision.rejection(changes, userMode: run.userMode)
    }

    /// A rejected reload: the reason stays in STATUS= (in front of the summary) and in GetStatus until a reload
    /// succeeds (systemctl status and syncctl status must show it); `whole` is the reply's reason.
    func rejectReload(_ reason: String, whole: String) -> Result<Void, ManagerError> {
        reloadFailure = reason
        lastStatusLine = statusLine()
        notifier.ready(status: lastStatusLine)
        return .failure(.reloadFailed(reason: whole))
    }

    /// Runs a local change on the local lane (its own engine: it never waits for a refresh's paging, at most
    /// for a refresh of the same source to commit and publish), then answers, republishes and schedules a
    /// debounced push.
    func apply(_ change: LocalChangeRequest, continuation: CheckedContinuation<Result<ChangeAnswer, ManagerError>, Never>) {
        let sourceName: String?
        switch change {
        case .put(let source, _), .delete(let source, _), .resolve(let source, _, _): sourceName = source
        case .retry, .drop, .restore: sourceName = nil
        }
        let config = sourceName.flatMap { sourcesByName[$0] }
        let configured = sourcesByName
        if let sourceName, config == nil {
            return continuation.resume(returning: .failure(.noSuchSource(source: sourceName)))
        }
        Task(executorPreference: DaemonExecutor.shared) { [worker, input] in
            let outcome: (Result<ChangeAnswer, ManagerError>, String?, StampedState?) = await worker.withEngine { engine in
                guard let engine else { return (.failure(.storageFailure(reason: "no account storage")), nil, nil) }
                do throws(ManagerError) {
                    let touched: String
                    let answer: String
                    var reply: JSONObject = [:]
                    func source() throws(ManagerError) -> SourceConfiguration {
                        guard let config else { throw .storageFailure(reason: "the source is no longer configured") }
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
                        let dropped = try engine.dropOutboxEntry(seq)
                        (answer, touched) = (dropped.shows.rawValue, dropped.source)
                    case .resolve(_, let id, let keepLocal):
                        try engine.resolve(source: try source(), id: id, keepLocal: keepLocal)
                        (answer, touched) = (id, try source().name)
                    case .restore(let seq):
                        let restored = try engine.restoreDiscarded(seq) { configured[$0] }
                        (answer, touched) = (restored.id, restored.source)
                        reply = ["source": .string(restored.source), "id": .string(restored.id),
                                 "operation": .string(restored.operation.rawValue), "seq": .int(restored.seq)]
                    }
                    let state = engine.shared.stampedState(of: touched, from: engine.store)
                    return (.success(ChangeAnswer(text: answer, unwritten: state?.state.unwrittenRecordCount, reply: reply)), touched, state)
                } catch {
                    return (.failure(error), nil, nil)
                }
            }
            continuation.resume(returning: outcome.0)
            if let touched = outcome.1 { input.yield(.localChanged(source: touched, state: outcome.2)) }
        }
    }

    /// The core's `.eraseAccount` after a logout (syncd(8) GUARANTEES 9): the old engine closes, the account's
    /// cache folder and state go, a new engine opens; the core answers the request when this reports back.
    func eraseAccount(_ id: RequestID) {
        let run = self.run
        let configuration = self.configuration
        let logger = self.logger
        states.replaceAll(with: Dictionary(uniqueKeysWithValues: configuration.sources.map { ($0.name, SourceState(name: $0.name)) }))
        let shared = worker.shared
        Task(executorPreference: DaemonExecutor.shared) { [worker, input] in
            do {
                // The sources' change numbers go on after the logout (docs/control-api.md, "Changes").
                let sequences = await DaemonLoop.changeSequences(of: configuration, worker: worker)
                try await worker.replaceEngines(
                    teardown: { try AccountErasure.erase(configuration: configuration, run: run) },
                    make: { try DaemonLoop.makeEngine(run: run, configuration: configuration, shared: shared) })
                await worker.withEngine { engine in
                    do {
                        try engine?.store.continueChangeSequences(sequences)
                    } catch {
                        logger.warning("Failed to carry the change numbers over the logout, starting them again: \(failureReason(error))")
                    }
                }
                logger.notice("Logged out: erased the cache and state of account \(configuration.daemon.account)")
                input.yield(.accountErased(id, .success(()), states: await DaemonLoop.storedStates(of: configuration, worker: worker)))
            } catch {
                logger.error("Failed to log out: \(failureReason(error))")
                input.yield(.accountErased(id, .failure(.storageFailure(reason: "Failed to erase the account's data: \(failureReason(error))")),
                                           states: await DaemonLoop.storedStates(of: configuration, worker: worker)))
            }
        }
    }
}

extension DaemonLoop {
    /// Every source's change number in the current store (0 where it cannot be read).
    static func changeSequences(of configuration: Configuration, worker: RefreshWorker) async -> [String: Int64] {
        let names = configuration.sources.map(\.name)
        return await worker.withEngine { engine in
            guard let engine else { return [:] }
            var sequences: [String: Int64] = [:]
            for name in names { sequences[name] = (try? engine.store.changeSequence(source: name))?.seq ?? 0 }
            return sequences
        }
    }

    /// Every source's state as the current store holds it, read on the local lane after the engines were
    /// replaced: a `put` that ran on the old engine before the logout was read earlier, so its older stamp
    /// cannot bring the erased records and changes back into the status (docs/syncctl.1.md, "logout").
    static func storedStates(of configuration: Configuration, worker: RefreshWorker) async -> [String: StampedState] {
        let names = configuration.sources.map(\.name)
        return await worker.withEngine { engine in
            guard let engine else { return [:] }
            var states: [String: StampedState] = [:]
            for name in names { states[name] = engine.shared.stampedState(of: name, from: engine.store) }
            return states
        }
    }
}

extension DaemonLoop {
    /// Starts watching links when `WatchLinks=yes` (rtnetlink, local and quick, so it happens before
    /// READY=1 and before the startup refresh). Without a monitor, or if netlink is refused, the daemon
    /// assumes it is online and reports the links as "unknown": only a real request decides (syncd(8) GUARANTEES 5).
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
            if !monitor.state.isOnline {
                logger.notice("Offline (\(linkState)) at start; serving cached data until the network returns")
                feed(.links(online: false, significant: false))
            }
        } catch {
            logger.warning("Failed to watch network links, assuming online: \(failureReason(error))")
            linkState = "unknown"
        }
    }
}
