import Dispatch
import SyncEngine

/// Runs the daemon's Swift tasks on one serial dispatch queue instead of the global concurrent executor.
///
/// Why: on Linux, the first job that runs on libdispatch's non-overcommit ("cooperative") root queues
/// starts its workqueue monitor, a 1-second timer that then wakes the process for the rest of its life
/// (`_dispatch_workq_init_once`, swift-corelibs-libdispatch `src/event/workqueue.c`). An idle daemon
/// must not wake up every second. The daemon's tasks only coordinate (every blocking call runs on its
/// own thread or serial queue), so one serial queue is all they need. Every `Task` in the daemon is
/// created with `executorPreference: DaemonExecutor.shared`; the entry point runs inside
/// `withTaskExecutorPreference`, which child tasks inherit (SE-0417).
///
/// `@unchecked Sendable`: its only state is the queue, which is thread-safe.
public final class DaemonExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor for all of the daemon's tasks.
    public static let shared = DaemonExecutor()
    private let queue = DispatchQueue(label: "syncd.tasks")

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
