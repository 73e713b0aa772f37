// A refresh lane's own thread, at a lower CPU priority than the rest of the daemon.
//
// Why a thread of its own and not a serial dispatch queue: Linux keeps the nice value per thread, and a
// dispatch queue's work runs on libdispatch's shared pool, whose threads also run the daemon loop (which
// answers control calls). A pool thread lowered for one refresh could not be raised again afterwards
// (that needs CAP_SYS_NICE, which the daemon does not have), so the loop would end up on lowered threads.

internal import Glibc
import Dispatch
import Synchronization
import SyncSystem
import SyncEngine

/// One refresh lane: a thread of its own, started when the lane is first used, that runs the work handed
/// to it in order, `niceIncrement` nice levels below the daemon (docs/architecture.md, "Status at scale").
/// While refreshes keep every core busy, the daemon loop and the control socket's thread (and `syncctl`
/// itself) still get a core at once, so control calls do not queue behind refresh work.
final class RefreshLane: Sendable {
    /// How far below the daemon's own priority a lane runs: nice +10 gets a lane about a tenth of the CPU
    /// time of a thread at the daemon's priority that wants the same core, and all of it when nothing else
    /// runs (the kernel's weights: 1024 at nice 0, 110 at nice 10).
    static let niceIncrement: Int32 = 10

    /// The thread's name (`/proc/PID/task/TID/comm`, `ps -L`); at most 15 bytes are kept.
    let name: String
    private let queue = LaneQueue()

    init(name: String) {
        self.name = name
    }

    deinit {
        queue.finish()
    }

    /// Runs `work` on the lane's thread after the work handed over before it. Should the thread fail to
    /// start (pthread_create: EAGAIN), the work runs on a serial dispatch queue at the daemon's priority
    /// instead, and the next call tries to start the thread again.
    func async(_ work: @escaping @Sendable () -> Void) {
        switch queue.push(work) {
        case .queued:
            return
        case .startThread:
            let queue = self.queue
            do {
                try SystemThread.detached(name: name) {
                    lowerPriority(by: RefreshLane.niceIncrement)
                    queue.run()
                }
            } catch {
                queue.unstarted(fallback: DispatchQueue(label: "syncd.\(name)"))
            }
        }
    }
}

/// Sets the calling thread's CPU priority `increment` nice levels below the daemon's (at most to 19): below
/// the main thread's, which is what the daemon was started with (`Nice=` in the unit), since libdispatch's
/// pool threads set their own to nice 0 when they may. `PRIO_PROCESS` names one thread on Linux, whose nice
/// value is per thread (setpriority(2), BUGS): 0 the calling one, the process ID the main one. Lowering is
/// always allowed; should it fail anyway, the thread keeps its priority.
func lowerPriority(by increment: Int32) {
    errno = 0
    let daemon = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
    guard errno == 0 else { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, daemon + increment))
}

/// The work waiting for a lane's thread; shared by the lane and its thread, which outlives the lane until
/// the work handed over before the lane went away is done.
private final class LaneQueue: Sendable {
    /// What `push` asks of its caller.
    enum Next { case queued, startThread }

    private struct State {
        var work: [@Sendable () -> Void] = []
        var started = false
    }

    private let state = Mutex(State())
    /// Signalled once per piece of work and once by `finish`.
    private let ready = DispatchSemaphore(value: 0)

    /// Queues `work`; the first call (and the first after a thread failed to start) is told to start the thread.
    func push(_ work: @escaping @Sendable () -> Void) -> Next {
        let next = state.withLock { state -> Next in
            state.work.append(work)
            defer { state.started = true }
            return state.started ? .queued : .startThread
        }
        ready.signal()
        return next
    }

    /// The thread could not start: the work queued so far runs on `fallback`, and the next push tries again.
    func unstarted(fallback: DispatchQueue) {
        let pending = state.withLock { state -> [@Sendable () -> Void] in
            state.started = false
            defer { state.work = [] }
            return state.work
        }
        for work in pending {
            ready.wait()  // one signal per piece of work taken
            fallback.async(execute: work)
        }
    }

    /// The lane went away: the thread ends once the work queued before is done.
    func finish() {
        ready.signal()
    }

    /// The thread's loop: each piece of work in order until `finish`.
    func run() {
        while true {
            ready.wait()
            let work = state.withLock { state -> (@Sendable () -> Void)? in
                state.work.isEmpty ? nil : state.work.removeFirst()
            }
            // Each signal stands for one piece of work or for `finish`, which comes after all of it: only
            // `finish`'s finds nothing queued.
            guard let work else { return }
            work()
        }
    }
}
