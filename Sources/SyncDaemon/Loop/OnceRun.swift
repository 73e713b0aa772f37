internal import Glibc
import SyncCore
import SyncRemote
import SyncStore
import SyncEngine

/// `syncd --once`: refresh every source once, then exit 0 only if all succeeded.
public struct OnceRun {
    let configuration: Configuration
    let directories: Directories
    let userMode: Bool
    let logger: Logger
    let environment: [String: String]

    /// Creates the run.
    public init(configuration: Configuration, directories: Directories, userMode: Bool, logger: Logger, environment: [String: String]) {
        self.configuration = configuration
        self.directories = directories
        self.userMode = userMode
        self.logger = logger
        self.environment = environment
    }

    /// Runs it; returns the process exit status. Prints one line per failed source to `report`. With `exit`,
    /// the run ends by calling it with that status while the store, the engine and the lock are still held:
    /// the process ends without closing the store and freeing what the listing left (about 2 ms after a first
    /// sync of 100k records; docs/benchmarks.md, "First sync against the transfer floor: the last pass").
    /// Nothing is lost: the store's commits are in its write-ahead log (closing does not checkpoint), and the
    /// kernel releases the lock and the files.
    public func run(report: (String) -> Void, exit: ((Int32) -> Never)? = nil) -> Int32 {
        let account = configuration.daemon.account
        // The group lookup first: it may load NSS modules, and `dlopen` calls wait for each other.
        let group = Directories.usableGroup(named: configuration.daemon.cacheFileGroup)
        // libcurl is mapped on a second thread while the lock, the store and the cache folder are opened
        // here: they overlap instead of adding up before the first request (docs/architecture.md, "libcurl on demand").
        let preload = configuration.sources.isEmpty ? nil : CurlPreload()
        // The process exits after this run: libcurl stays loaded until then (an early return included).
        defer { preload?.finish(unloading: false) }
        let lock: InstanceLock
        let store: StateStore
        do {
            // A running daemon owns this state: refreshing next to it would write the same store and cache.
            lock = try InstanceLock.acquire(stateDirectory: directories.state, userMode: userMode)
            // A store this run creates is built aside and put in place at the end, flushed once (docs/architecture.md,
            // "A store built aside"), for one source that cannot resume its listing: a run that is killed loses
            // what it built, and so would lose the sources it had finished, or a listing's staged pages, which
            // the next run must find in the file it opens.
            let aside = configuration.sources.count == 1 && ListingResume.method(for: configuration.sources[0]) == nil
            store = try AccountStorage.openStore(directories: directories, account: account, logger: logger, now: currentTimestamp(),
                                                 buildingAside: aside)
        } catch {
            report("syncd: \(error)")
            return 1
        }
        let engine: SyncEngine
        do {
            let snapshots = try AccountStorage.snapshots(directories: directories, account: account, groupID: group)
            engine = try SyncEngine(store: store, snapshots: snapshots, logger: logger, environment: environment)
            engine.runsOnce = true
        } catch {
            report("syncd: \(error)")
            finishCreation(of: store, report: report)
            return 1
        }
        engine.restoreSnapshots(configuration.sources)
        if configuration.sources.isEmpty {
            logger.notice("No sources configured; add *.source files to sources.d/")
        }
        // The first transfer needs libcurl: wait for the preload asleep, not spinning on the library's lock.
        preload?.finish(unloading: false)
        var failed = 0
        for source in configuration.sources {
            // `restoreSnapshots` has just checked each cache file: the refresh goes straight to its request (and
            // fetches the listing whole should it find the file changed since, see `SyncEngine.refresh`).
            if case .failed(let failure) = engine.refresh(source, cacheFileChecked: true) {
                failed += 1
                // What the file apps read holds, not the store (docs/architecture.md, "The cache file").
                let kept = (try? engine.store.state(of: source.name, countingLocalView: true).cacheFileSummary) ?? "0 cached records"
                report("\(source.name): \(failure.message)" + (failure.describesCacheFile ? "" : " (kept \(kept))"))
            }
        }
        // The engine's store: a damaged one it replaced is in place already (and finishing it does nothing).
        if !finishCreation(of: engine.store, report: report) { failed += 1 }
        let status: Int32 = failed == 0 ? 0 : 1
        if let exit { withExtendedLifetime((lock, engine)) { exit(status) } }
        withExtendedLifetime(lock) {}
        return status
    }

    /// What `syncd --once` says when putting the store it built aside in place failed with `error`: what went
    /// wrong, what to do, and whether the database file at `database`, in `folder`, is in place (`kept`: only the
    /// folder's flush failed).
    static func creationFailure(_ error: StoreError, database: String, folder: String, kept: Bool) -> String {
        let advice = switch error {
        case .sqlite(let failure) where failure.isFull: "the file system of the state folder \(folder) is full: free some space in \(folder)"
        case .sqlite(let failure) where failure.isReadOnly:
            "the state folder \(folder) cannot be written (a read-only file system?): make it writable"
        default: "check the file system of the state folder \(folder) (the kernel log says why)"
        }
        let outcome = kept ? "\(database) is in place, but a power cut may still take it away"
            : "\(database) was not kept: the next run starts with an empty one and fetches every listing again"
        return "syncd: \(error); \(advice), then run syncd --once again (\(outcome))"
    }

    /// Puts `store` in place if this run built it aside; reports a failure with what to do. Returns false when
    /// it failed.
    @discardableResult
    private func finishCreation(of store: StateStore, report: (String) -> Void) -> Bool {
        do {
            try store.finishCreation()
            return true
        } catch {
            let paths = directories.paths(of: configuration.daemon.account)
            report(OnceRun.creationFailure(error, database: paths.database, folder: paths.stateFolder,
                                           kept: access(paths.database, F_OK) == 0))
            return false
        }
    }
}
