import Glibc
import Synchronization
internal import SyncSystem

/// libcurl loaded ahead of the first transfer, on a thread of its own, while the caller does its other
/// start-up work (`syncd --once`: the lock, the store, the cache folder). Mapping and relocating libcurl and
/// the ~30 libraries it brings and `curl_global_init` take several milliseconds that would otherwise all come
/// before the first request (docs/benchmarks.md, "Speed of the first sync and of the 304"); on a second core they overlap.
///
/// The first transfer finds the library loaded, or waits for the load in progress (`CurlLibrary` holds its
/// lock while loading). A load that fails here is only dropped: the first transfer loads again and reports
/// the failure as it would without a preload. `finish()` (also run at deinit) waits for the thread and gives
/// its reference back; the library stays loaded while a client still holds one.
public final class CurlPreload: Sendable {
    /// What the thread and `finish` share: whether the thread took a reference on the library.
    private final class Load: Sendable {
        let holds = Atomic<Bool>(false)
        let library: CurlLibrary
        init(library: CurlLibrary) { self.library = library }
        func run() {
            if (try? library.acquire()) != nil { holds.store(true, ordering: .releasing) }
        }
    }

    private let load: Load
    /// The loading thread; nil when it could not be started (nothing to undo).
    private let thread: SystemThread?

    /// Starts loading `libcurl.so.4` on a new thread.
    public convenience init() { self.init(library: .shared) }

    /// Starts loading `library` on a new thread (tests give a copy of libcurl of their own).
    init(library: CurlLibrary) {
        let load = Load(library: library)
        self.load = load
        // No thread: the first transfer loads the library itself, as without a preload.
        thread = try? SystemThread.joinable { load.run() }
    }

    deinit { finish() }

    /// Waits for the load to end and gives the preload's reference on the library back. Idempotent.
    /// `unloading: false` hands the reference to the process instead: it is never given back, not even at
    /// deinit, so the library stays loaded until the process exits. `syncd --once` saves `curl_global_cleanup`
    /// and unmapping ~30 libraries it would never use again (docs/benchmarks.md, "Speed of the first sync and of the 304").
    ///
    /// The wait is `pthread_join`, which sleeps: a transfer that finds the load in progress would instead wait
    /// on `CurlLibrary`'s lock, where the kernel spins while the loading thread runs (a priority-inheriting
    /// futex), taking the core a loaded machine may need for the load itself.
    public func finish(unloading: Bool = true) {
        join()
        if load.holds.exchange(false, ordering: .acquiring), unloading { load.library.release() }
    }

    /// Waits for the load to end, keeping its reference. Idempotent.
    func join() {
        thread?.join()
    }

    /// Whether the thread took a reference that `finish` has neither given back nor handed to the process (tests).
    var holdsReference: Bool { load.holds.load(ordering: .acquiring) }
}
