import Dispatch
import Synchronization
import SyncRemote
import SyncCore
import SyncStore

/// Runs refreshes one at a time on its own serial dispatch queue, off Swift's cooperative pool
/// (libcurl and SQLite block). Sources therefore refresh one after another; a slow one delays the
/// others by at most its `TimeoutSec` per page.
///
/// `@unchecked Sendable`: the engine (libcurl handle, SQLite connection) is touched only on `queue`.
/// Each refresh carries its own cancellation flag, made by the loop for its ticket.
final class RefreshWorker: @unchecked Sendable {
    private let queue = DispatchQueue(label: "syncd.refresh")
    private var engine: SyncEngine?

    /// Called on the worker queue after a piece of work during which the engine replaced a damaged
    /// state database (every source's stored state went with it).
    private let onStoreReplaced: @Sendable () -> Void

    init(engine: SyncEngine, onStoreReplaced: @escaping @Sendable () -> Void = {}) {
        self.engine = engine
        self.onStoreReplaced = onStoreReplaced
    }

    /// Runs `work` and reports whether the engine's store was replaced meanwhile.
    @discardableResult
    private func noticingReplacement<T>(_ engine: SyncEngine, _ work: () -> T) -> T {
        let before = ObjectIdentifier(engine.store)
        let value = work()
        if ObjectIdentifier(engine.store) != before { onStoreReplaced() }
        return value
    }

    /// Refreshes `source` and reports the result (and the source's stored state afterwards) on the worker thread.
    func refresh(_ source: SourceConfiguration, cancellation: CancellationFlag, progress: @escaping @Sendable (RefreshProgressCount) -> Void,
                 completion: @escaping @Sendable (RefreshResult, SourceState?) -> Void) {
        queue.async { [self] in
            guard let engine else {
                return completion(.failed(RefreshFailure(.cancelled, "no account storage")), nil)
            }
            // At most ten progress reports a second reach the loop.
            var last = ContinuousClock.now - .seconds(1)
            let result: RefreshResult = noticingReplacement(engine) {
                engine.refresh(source, cancellation: cancellation) { count in
                    let now = ContinuousClock.now
                    if now - last >= .milliseconds(100) {
                        last = now
                        progress(count)
                    }
                }
            }
            var state = try? engine.store.state(of: source.name, countingLocalView: true)
            state?.notices = engine.notices[source.name] ?? []
            completion(result, state)
        }
    }

    /// Runs `body` with the engine on the worker queue and returns its value. When `body` found the database
    /// damaged, it is replaced before the next piece of work (the engine's refreshes do that themselves).
    func withEngine<T: Sendable>(_ body: @escaping @Sendable (SyncEngine?) -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                let value = body(engine)
                if let engine { _ = noticingReplacement(engine) { engine.recoverDamagedStore() } }
                continuation.resume(returning: value)
            }
        }
    }

    /// Replaces the engine on the worker queue: the old one is closed first (its SQLite connection and
    /// libcurl handle released), then `teardown` runs (e.g. erasing the account's files), then `make`
    /// builds the new one. Work queued earlier runs first on the old engine.
    func replaceEngine(teardown: @escaping @Sendable () throws -> Void, make: @escaping @Sendable () throws -> SyncEngine) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { [self] in
                do {
                    engine = nil
                    try teardown()
                    let newEngine = try make()
                    engine = newEngine
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
