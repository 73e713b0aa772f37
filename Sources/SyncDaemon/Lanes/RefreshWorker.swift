import Dispatch
import Synchronization
import SyncRemote
import SyncCore
import SyncStore
import SyncEngine

/// Runs the daemon's engines off Swift's cooperative pool (libcurl and SQLite block), on a serial dispatch
/// queue and threads of their own (docs/architecture.md, "Concurrency"):
///
/// - the local lane runs local changes (put, delete, resolve, outbox retry and drop) and retry-state saves
///   with an engine of its own, so they never wait for a refresh;
/// - up to `DaemonStateMachine.maxLanes` refresh lanes run refreshes of different sources at once (the core
///   decides how many and never runs one source twice), each on a thread of its own at a lower CPU
///   priority (`RefreshLane`), so control calls never wait for a core behind refreshes. A refresh lane opens an engine for a refresh and
///   closes it afterwards, so an idle daemon holds only the local engine, which closes its libcurl handle
///   after each piece of work: an idle daemon has libcurl unloaded (docs/architecture.md, "libcurl on demand").
///
/// Every engine has its own SQLite connection and libcurl handle and shares `EngineShared` with the others.
/// `@unchecked Sendable`: the local engine is touched only on `localQueue`; a refresh lane's engine lives
/// for one refresh, which holds `gate` shared, and `replaceEngines` holds it exclusively, so a logout
/// replaces the engines while none is in use.
final class RefreshWorker: @unchecked Sendable {
    private let localQueue = DispatchQueue(label: "syncd.local")
    private var localEngine: SyncEngine?
    private let lanes: [RefreshLane]
    /// Refresh lanes in use, by index.
    private let busy = Mutex<Set<Int>>([])
    private let gate = ReadWriteLock()
    /// Opens an engine for a refresh (same account, same `EngineShared`).
    private let make: @Sendable () throws -> SyncEngine
    /// What every engine of this worker shares (the engines it opens pass it on).
    let shared: EngineShared

    /// Called on a lane after a piece of work during which its engine replaced a damaged state database
    /// (every source's stored state went with it).
    private let onStoreReplaced: @Sendable () -> Void

    init(engine: SyncEngine, make: @escaping @Sendable () throws -> SyncEngine,
         onStoreReplaced: @escaping @Sendable () -> Void = {}) {
        localEngine = engine
        lanes = (0..<DaemonStateMachine.maxLanes).map { RefreshLane(name: "refresh-lane-\($0)") }
        self.make = make
        shared = engine.shared
        self.onStoreReplaced = onStoreReplaced
    }

    /// Runs `work` and reports whether the engine's store was replaced meanwhile.
    @discardableResult
    private func noticingReplacement<T>(_ engine: SyncEngine, _ work: () -> T) -> T {
        engine.followReplacedStore()
        let before = ObjectIdentifier(engine.store)
        let value = work()
        if ObjectIdentifier(engine.store) != before { onStoreReplaced() }
        return value
    }

    /// A free refresh lane, marked busy (lane 0 when, against the core's promise, none is free: it waits there).
    private func acquireLane() -> Int {
        busy.withLock { busy in
            let index = (0..<lanes.count).first { !busy.contains($0) } ?? 0
            busy.insert(index)
            return index
        }
    }

    /// Refreshes `source` on a free lane and reports the result (and the source's stored state afterwards) there.
    func refresh(_ source: SourceConfiguration, cancellation: CancellationFlag, progress: @escaping @Sendable (RefreshProgressCount) -> Void,
                 completion: @escaping @Sendable (RefreshResult, StampedState?) -> Void) {
        let index = acquireLane()
        lanes[index].async { [self] in
            let (result, state) = gate.reading { () -> (RefreshResult, StampedState?) in
                // Opened for this refresh and closed after it (its SQLite connection and libcurl handle): an idle
                // lane costs nothing.
                let engine: SyncEngine
                do {
                    let generation = shared.storeGeneration.withLock { $0 }
                    engine = try make()
                    // Opening found the file unusable and replaced it: every source's stored state went with it.
                    if shared.storeGeneration.withLock({ $0 }) != generation { onStoreReplaced() }
                } catch {
                    return (.failed(RefreshFailure(.transient, "Failed to open the account's storage: \(failureReason(error))")), nil)
                }
                // At most ten progress reports a second reach the loop.
                var last = ContinuousClock.now - .seconds(1)
                shared.runningRefreshes.withLock { $0 += 1 }
                defer { shared.runningRefreshes.withLock { $0 -= 1 } }
                let result: RefreshResult = noticingReplacement(engine) {
                    engine.refresh(source, cancellation: cancellation) { count in
                        let now = ContinuousClock.now
                        if now - last >= .milliseconds(100) {
                            last = now
                            progress(count)
                        }
                    }
                }
                var state = shared.stampedState(of: source.name, from: engine.store)
                state?.state.notices = engine.notices[source.name] ?? []
                return (result, state)
            }
            _ = busy.withLock { $0.remove(index) }
            completion(result, state)
        }
    }

    /// Runs `body` with the local engine on the local lane and returns its value. When `body` found the
    /// database damaged, it is replaced before the next piece of work (refreshes do that themselves).
    func withEngine<T: Sendable>(_ body: @escaping @Sendable (SyncEngine?) -> T) async -> T {
        await withCheckedContinuation { continuation in
            localQueue.async { [self] in
                guard let engine = localEngine else { return continuation.resume(returning: body(nil)) }
                let value = noticingReplacement(engine) {
                    let value = body(engine)
                    engine.recoverDamagedStore()
                    return value
                }
                // The local engine stays open while the daemon idles; its libcurl handle does not.
                engine.closeConnections()
                continuation.resume(returning: value)
            }
        }
    }

    /// Runs `body` with the local engine on the local lane once `delay` has passed (a coalesced cache file
    /// rewrite, `EngineShared.setWriteScheduler`); nothing when no engine is open then.
    func later(_ delay: Duration, _ body: @escaping @Sendable (SyncEngine) -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(clamping: seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        localQueue.asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [self] in
            guard let engine = localEngine else { return }
            noticingReplacement(engine) {
                body(engine)
                engine.recoverDamagedStore()
            }
            engine.closeConnections()
        }
    }

    /// Replaces every engine on the local lane: it waits until no refresh lane uses its engine (the core
    /// cancelled them), closes them all (SQLite connections and libcurl handles released), runs `teardown`
    /// (e.g. erasing the account's files), then opens the new local engine; refresh lanes open theirs when
    /// next used. Local work queued earlier runs first on the old engine.
    func replaceEngines(teardown: @escaping @Sendable () throws -> Void, make: @escaping @Sendable () throws -> SyncEngine) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            localQueue.async { [self] in
                do {
                    try gate.writing {
                        localEngine = nil
                        // What the engines remembered about the old account's outbox goes with it.
                        shared.memory.withLock { $0 = EngineShared.Memory() }
                        try teardown()
                        localEngine = try make()
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
