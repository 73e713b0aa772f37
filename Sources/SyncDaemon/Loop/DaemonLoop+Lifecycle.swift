import Dispatch
internal import Glibc
import Synchronization
import SyncControl
import SyncCore
import SyncStore
import SyncEngine

extension DaemonLoop {
    /// Opens the Varlink socket before READY=1, so clients that connect early wait in the backlog.
    /// Without it the daemon still syncs; the failure is logged.
    func startControlServer() {
        let directories = Directories(configuration.daemon, userMode: run.userMode, environment: run.environment)
        let paths = directories.paths(of: configuration.daemon.account)
        do {
            try Directories.create(directories.runtime, mode: 0o755, kind: .runtime, parents: directories.parentMode)
            let handler = DaemonControlHandler(input: input, databasePath: paths.database, cacheFolder: paths.cacheFolder(group: nil))
            let server = try ControlServer.listen(
                path: paths.controlSocket, handler: handler,
                policy: AccessPolicy(controlGroup: configuration.daemon.controlGroup, readGroup: configuration.daemon.readGroup),
                info: ControlServiceInfo(version: syncdVersion), logger: logger)
            controlServer = server
            controlTask = Task(executorPreference: DaemonExecutor.shared) { await server.run() }
        } catch {
            logger.error("Failed to open the control socket, continuing without syncctl access: \(failureReason(error))")
        }
    }

    /// SIGTERM, SIGINT and SIGHUP arrive as events (see EventThreads.swift for why not DispatchSource).
    func installSignals() {
        do {
            try SignalWatcher.start { [input] number in input.yield(.signal(number)) }
        } catch {
            logger.error("Failed to watch for signals, stop syncd with SIGKILL: \(failureReason(error))")
        }
    }

    /// After the core's `.exit`: every request still queued is refused, watchers end, the control server
    /// and the link monitor stop, retry states are saved. Each step that waits on something outside the loop
    /// (a handler, the worker stuck in a transfer) is bounded by the core's `stopDeadline`, so the process ends
    /// within `DaemonStateMachine.stopBudget` of SIGTERM.
    func shutdown(_ events: AsyncStream<DaemonEvent>) async {
        let deadline = origin + (core.stopDeadline ?? monotonicNow() + DaemonStateMachine.stopBudget).offset
        // From now on a control request is answered at once (its yield is refused), and those already
        // queued are answered here: no handler waits on the loop any more.
        input.finish()
        for await event in events {
            if case .request(let request) = event { request.refuse() }
        }
        for (_, request) in pending {
            request.progress?.finish()
            request.continuation.resume(returning: .failed(.stopping))
        }
        pending.removeAll()
        for watcher in watchers.values { watcher.finish() }
        watchers.removeAll()
        timer.cancel()
        let linkMonitor = self.linkMonitor
        let controlTask = self.controlTask
        controlTask?.cancel()
        if await !finishes(before: deadline, { await linkMonitor?.stop(); await controlTask?.value }) {
            logger.warning("Control clients or the link monitor did not finish in time; stopping anyway")
        }
        // Save where each source's retry cycle stands, so a restart continues it (syncd(8) GUARANTEES 7).
        let retryStates = core.scheduler.exportRetryStates(at: monotonicNow())
        let names = core.scheduler.sourceNames
        let worker = self.worker
        let saved = await finishes(before: deadline) {
            await worker.withEngine { engine in
                // A rewrite scheduled for a burst of local changes is done now rather than left to the next start.
                for name in engine?.shared.scheduledRewrites ?? [] { engine?.writeScheduledCacheFile(name) }
                for name in names {
                    let text = retryStates[name]?.jsonText
                    try? engine?.store.saveRetryState(source: name, text)
                }
            }
        }
        if !saved { logger.warning("The refresh in progress did not end in time; the retry state was not saved") }
        logger.notice("Stopped")
    }

    /// Runs `work` and waits for it until `deadline`; true when it finished in time. Work that does not
    /// finish is left behind (the process is about to exit).
    func finishes(before deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> Void) async -> Bool {
        let decided = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let first: @Sendable (Bool) -> Void = { finished in
                if decided.withLock({ done in defer { done = true }; return !done }) { continuation.resume(returning: finished) }
            }
            // The deadline on a timer thread, not Task.sleep: sleeping would start libdispatch's manager thread
            // and its "Failed to set thread priority" line (EventThreads.swift).
            let timer = try? WakeupTimer { first(false) }
            timer?.schedule(after: deadline - ContinuousClock.now)
            Task(executorPreference: DaemonExecutor.shared) {
                await work()
                first(true)
                timer?.cancel()
            }
            if timer == nil {
                Task(executorPreference: DaemonExecutor.shared) {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    first(false)
                }
            }
        }
    }
}
