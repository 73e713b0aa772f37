internal import Glibc
internal import SyncSystem
import Synchronization

/// Flushes a cache file to disk while it is still being written, on a thread of its own: `CacheFileOutput`
/// asks for a flush every `CacheFileOutput.flushStep` bytes, and the thread flushes what is written by then.
/// The flush at the end of a listing then only has the last step's bytes left, instead of the whole file:
/// on the machines measured, a flush costs in proportion to the bytes written since the last one, and starting
/// writeback alone (`sync_file_range`) left most of that cost to the end (docs/benchmarks.md, "Flushing the
/// cache file while it arrives").
///
/// Asks coalesce: while a flush runs, any number of steps asked for make one more flush after it. The last
/// order is `finish` (the final flush, the point of durability, reported through a `DiskFlush`) or `stop`
/// (a discarded file: no flush; it waits for a flush in progress). A step that fails is not retried; its errno
/// becomes the outcome of the final flush, since the kernel reports a writeback error to one `fsync` of an
/// open file only, and the thread's descriptor is a duplicate sharing that open file with the writer's.
/// Flushes go through the output's `FileSyncer` (`fsync(2)`).
///
/// `@unchecked Sendable`: it owns a `sem_t`, which is used only through `sem_post`/`sem_wait` (thread-safe);
/// everything else it shares is behind the `Mutex` or atomic.
final class StepFlusher: @unchecked Sendable {
    /// What the thread is asked to do next.
    private enum Order {
        case none, step, finish, stop
    }

    /// The errno of the first failed flush, 0 once the final one succeeded (or after `stop`), -1 before.
    let outcome = DiskFlush.Outcome()
    private let fd: Int32
    private let syncer: FileSyncer
    private let order = Mutex(Order.none)
    private let wake = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    /// Set once, by `start`, before any order is given.
    private var thread: SystemThread?

    private init(fd: Int32, syncer: FileSyncer) {
        self.fd = fd
        self.syncer = syncer
        sem_init(wake, 0, 0)
    }

    /// The owner joins the thread (`stop`, or the `DiskFlush` of `finish`): this may run on the thread itself,
    /// when its body lets go of the last reference.
    deinit {
        sem_destroy(wake)
        wake.deallocate()
    }

    /// A running flusher on a duplicate of `fd`, or nil when no descriptor or thread could be had (the file
    /// is then flushed at the end only, as before).
    static func start(_ fd: Int32, syncer: FileSyncer) -> StepFlusher? {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        let flusher = StepFlusher(fd: copy, syncer: syncer)
        do {
            flusher.thread = try SystemThread.joinable(name: "syncd-flush") { flusher.run() }
        } catch {
            close(copy)
            return nil
        }
        return flusher
    }

    /// Asks for a flush of what is written so far; returns at once.
    func step() {
        if order.withLock({ current in
            guard current == .none else { return false }
            current = .step
            return true
        }) {
            sem_post(wake)
        }
    }

    /// Asks for the final flush and returns what waits for it. No order may follow.
    func finish(path: String) -> DiskFlush {
        give(.finish)
        return DiskFlush(path: path, outcome: outcome, thread: thread)
    }

    /// Ends the thread without a final flush and waits for it (a flush in progress completes); returns the
    /// errno of a step that failed, or 0.
    func stop() -> Int32 {
        give(.stop)
        thread?.join()
        return outcome.code.load(ordering: .acquiring)
    }

    private func give(_ last: Order) {
        order.withLock { $0 = last }
        sem_post(wake)
    }

    private func run() {
        var failure: Int32 = 0
        while true {
            while sem_wait(wake) != 0 {}
            let next = order.withLock { current in
                defer { if current == .step { current = .none } }
                return current
            }
            switch next {
            case .none:
                continue
            case .step:
                guard failure == 0 else { continue }
                if retryingEINTR({ syncer.sync(fd) }) != 0 { failure = errno != 0 ? errno : EIO }
            case .finish where failure == 0:
                outcome.flush(fd, with: syncer)
                return
            case .finish, .stop:
                close(fd)
                outcome.code.store(failure, ordering: .releasing)
                return
            }
        }
    }
}
