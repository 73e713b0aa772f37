import Synchronization

/// What the engines of one daemon share (docs/architecture.md, "Concurrency"): the local-change engine
/// and each refresh lane have their own SQLite connection and libcurl handle, but remember the same things
/// about the outbox, take the same per-source locks around writing a cache file, and learn when one of them
/// replaced a damaged state database.
public final class EngineShared: Sendable {
    /// What the engines learn while pushing and pulling, kept in memory only.
    struct Memory {
        /// Creates whose answer was lost and that the latest listing showed not to be on the server: the
        /// next push may POST them again (once; a second lost answer needs a second check).
        var checkedCreates: Set<Int64> = []
        /// Changes that met a 404 for a record the listing had, by outbox sequence, with the URL that
        /// answered; the next listing decides (`settleNotFound`).
        var notFoundAnswers: [Int64: String] = [:]
        /// The warnings of each source's latest listing that did not fail it.
        var notices: [String: [String]] = [:]
    }

    let memory = Mutex(Memory())
    /// Bumped each time an engine replaced the damaged database: the others reopen the new file.
    let storeGeneration = Atomic<Int>(0)
    private let locks = Mutex<[String: SourceLock]>([:])

    /// Creates the state for one daemon (or one `syncd --once`).
    public init() {}

    /// Runs `body` holding the lock of `source`: a refresh holds it from committing a listing to publishing
    /// it, a local change from queueing to publishing; never while pages are fetched. Reentrant.
    func withSourceLock<T>(_ source: String, _ body: () throws -> T) rethrows -> T {
        let lock = locks.withLock { locks in
            if let lock = locks[source] { return lock }
            let lock = SourceLock()
            locks[source] = lock
            return lock
        }
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
