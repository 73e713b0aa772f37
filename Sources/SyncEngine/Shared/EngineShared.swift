internal import Glibc
import Synchronization
import SyncCore
import SyncStore

/// What the engines of one daemon share (docs/architecture.md, "Concurrency"): the local-change engine
/// and each refresh lane have their own SQLite connection and libcurl handle, but remember the same things
/// about the outbox, take the same per-source locks around writing a cache file, and learn when one of them
/// replaced a damaged state database.
public final class EngineShared: Sendable {
    /// What the engines learn while pushing and pulling, kept in memory only.
    public struct Memory {
        /// Creates whose answer was lost and that the latest listing showed not to be on the server: the
        /// next push may POST them again (once; a second lost answer needs a second check).
        public var checkedCreates: Set<Int64> = []
        /// Lost creates the listing did not show before `LostCreateWaitSec=` had passed: logged once.
        public var waitingCreates: Set<Int64> = []
        /// Changes that met a 404 for a record the listing had, by outbox sequence, with the URL that
        /// answered; the next listing decides (`settleNotFound`).
        public var notFoundAnswers: [Int64: String] = [:]
        /// The warnings of each source's latest listing that did not fail it.
        public var notices: [String: [SourceNotice]] = [:]
        /// With `ClientIDField=`: per source looked at in this run, the warning about records of its listing
        /// that share one client ID, none when none do (`SyncEngine.checkClientIDs`).
        public var sharedClientIDs: [String: [SourceNotice]] = [:]
        /// The version each record's latest push produced, as the server answered it (`SyncEngine+OwnWrites`).
        public var producedVersions: [OwnWriteKey: String] = [:]
        /// Each source's bearer token as last read (`BearerTokenCredential=`): what `SyncEngine.redaction(for:)`
        /// hides in every message about the source, also one made by another engine.
        public var tokens: [String: String] = [:]
        /// Sources whose next refresh fetches the whole listing although `Delta=` would ask for changes only
        /// (`syncctl refresh --full`); taken by that refresh (`SyncEngine.deltaPull`).
        public var fullListingsAsked: Set<String> = []

        /// Nothing remembered yet.
        public init() {}
    }

    public let memory = Mutex(Memory())

    /// Makes the next refresh of each of `sources` a full listing (`syncctl refresh --full`).
    public func askFullListing(of sources: [String]) {
        memory.withLock { $0.fullListingsAsked.formUnion(sources) }
    }
    /// When a local change's cache file rewrite happens (`CacheFileCoalescing`): `.daemon` once a scheduler
    /// is set, every rewrite at once before.
    private let writes = Mutex(ScheduledWrites())
    /// Refreshes running on the daemon's lanes (`RefreshWorker`); 0 for `syncd --once`.
    public let runningRefreshes = Mutex(0)
    /// Numbers the engines' reads of a source's stored state (`stampedState`).
    private let stateReads = Mutex(0)
    /// Bumped each time an engine replaced the damaged database (held while it does): the others reopen
    /// the new file.
    public let storeGeneration = Mutex(0)
    private let locks = Mutex<[String: SourceLock]>([:])

    /// Told the state of a source after a refresh's push changed its outbox (a change sent, parked or dropped by
    /// `ConflictPolicy=`), while the listing may still take long: the daemon's counts follow the outbox at once.
    private let outboxObserver: (@Sendable (String, StampedState) -> Void)?

    /// Told the state of a source whose cache file a running daemon found changed or damaged outside syncd,
    /// set aside and whose listing it forgot (`SyncEngine.recoverCacheFile`): the daemon fetches it again.
    private let cacheFileObserver: (@Sendable (String, StampedState?) -> Void)?

    /// Told each local change of a source that was parked, discarded or set in conflict, as it happens.
    private let outcomeObserver: (@Sendable (String, OutboxOutcome) -> Void)?

    /// Told the state of a source whose refresh published a listing and goes on with another request (the
    /// listing again after a resumed one, the delta that catches a paged listing up): apps read the new file now,
    /// so the daemon's counts and watchers follow it before the refresh ends.
    private let publishObserver: (@Sendable (String, StampedState) -> Void)?

    /// Creates the state for one daemon (or one `syncd --once`); `outboxObserver` learns outbox changes of
    /// refreshes, `cacheFileObserver` the cache files set aside while running, `outcomeObserver` the local
    /// changes that did not go out, `publishObserver` the listings published by a refresh that goes on.
    public init(outboxObserver: (@Sendable (String, StampedState) -> Void)?,
         cacheFileObserver: (@Sendable (String, StampedState?) -> Void)? = nil,
         outcomeObserver: (@Sendable (String, OutboxOutcome) -> Void)? = nil,
         publishObserver: (@Sendable (String, StampedState) -> Void)? = nil) {
        self.outboxObserver = outboxObserver
        self.cacheFileObserver = cacheFileObserver
        self.outcomeObserver = outcomeObserver
        self.publishObserver = publishObserver
    }

    /// Lets `schedule` run coalesced cache file rewrites: `run(source, delay)` must call
    /// `SyncEngine.writeScheduledCacheFile(source)` on an engine after `delay`. Until then (and in `syncd --once`)
    /// every rewrite happens at once.
    public func setWriteScheduler(_ coalescing: CacheFileCoalescing, run: @escaping @Sendable (String, Duration) -> Void) {
        writes.withLock { $0.coalescing = coalescing; $0.run = run }
    }

    /// What to do about a local change of `source` whose cache file has `fileBytes` bytes; a scheduled rewrite
    /// is handed to the scheduler here. Called under the source's lock.
    public func decideRewrite(of source: String, fileBytes: Int64?) -> CacheFileCoalescing.Decision {
        let (decision, run) = writes.withLock { writes -> (CacheFileCoalescing.Decision, (@Sendable (String, Duration) -> Void)?) in
            guard let run = writes.run else { return (.now, nil) }
            let decision = writes.coalescing.decide(fileBytes: fileBytes, scheduled: writes.scheduled.contains(source))
            if case .schedule = decision { writes.scheduled.insert(source) }
            return (decision, run)
        }
        if case .schedule(let delay) = decision { run?(source, delay) }
        return decision
    }

    /// Takes `source`'s scheduled rewrite off the schedule as it starts (under the source's lock): a change
    /// made after this schedules a new one. False when none was scheduled.
    public func takeScheduledRewrite(of source: String) -> Bool {
        writes.withLock { $0.scheduled.remove(source) != nil }
    }

    /// The sources with a rewrite scheduled.
    public var scheduledRewrites: Set<String> { writes.withLock { $0.scheduled } }

    /// Tells the observer, if any, what became of a local change of `source` (`OutboxOutcome`).
    public func reportOutcome(_ outcome: OutboxOutcome, of source: String) {
        outcomeObserver?(source, outcome)
    }

    /// Creates the state for one `syncd --once` (no observer).
    public convenience init() { self.init(outboxObserver: nil) }

    /// Reports the state of `source` to the observer, if any: after a push changed the outbox, or a refresh
    /// found the cache file lost and forgot the listing. The daemon updates its counts; nothing is triggered.
    public func reportState(of source: String, from store: StateStore) {
        guard let outboxObserver, let state = stampedState(of: source, from: store) else { return }
        outboxObserver(source, state)
    }

    /// Reports the state of `source` to the observer, if any, after its refresh published a listing and before
    /// it asks the server again in the same refresh.
    public func reportPublished(of source: String, from store: StateStore) {
        guard let publishObserver, let state = stampedState(of: source, from: store) else { return }
        publishObserver(source, state)
    }

    /// Tells the observer, if any, that the cache file of `source` was set aside and its listing forgotten.
    public func reportLostCacheFile(of source: String, from store: StateStore) {
        cacheFileObserver?(source, stampedState(of: source, from: store))
    }

    /// Reads the stored state of `source` under its lock and numbers the read: engines report states in
    /// parallel, and the loop keeps the one read last whatever order the reports arrive in.
    public func stampedState(of source: String, from store: StateStore) -> StampedState? {
        withSourceLock(source) { () -> StampedState? in
            guard let state = try? store.state(of: source, countingLocalView: true) else { return nil }
            return StampedState(state: state, stamp: stateReads.withLock { reads in
                reads += 1
                return reads
            })
        }
    }

    /// Runs `body` holding the lock of `source`: a refresh holds it from committing a listing to publishing it;
    /// a local change (put, delete, resolve, drop) from reading what it decides on to publishing. Never while
    /// pages are fetched or changes are pushed (a change being sent is never merged with a newer one,
    /// `StateStore.enqueue`). Reentrant.
    public func withSourceLock<T, E: Error>(_ source: String, _ body: () throws(E) -> T) throws(E) -> T {
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

/// The coalescing rule, the scheduler that runs a later rewrite, and the sources with one scheduled.
public struct ScheduledWrites {
    public var coalescing = CacheFileCoalescing.never
    public var run: (@Sendable (String, Duration) -> Void)?
    public var scheduled: Set<String> = []
}

/// A pthread read-write lock that prefers writers, so a logout's engine replacement (the writer) is not
/// held off by refreshes that keep starting (the readers).
/// `@unchecked Sendable`: the lock itself is the synchronisation.
public final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    public init() {
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` holding the lock shared.
    public func reading<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` holding the lock exclusively.
    public func writing<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

/// A source's stored state as an engine read it; a larger `stamp` was read later.
public struct StampedState: Sendable {
    public var state: SourceState
    public let stamp: Int
}

/// A recursive pthread mutex: the publish path is entered again from inside the queueing path.
/// `@unchecked Sendable`: the mutex itself is the synchronisation.
public final class SourceLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
}
