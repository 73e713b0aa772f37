// The daemon's timer and signal handling on two small threads of its own.
//
// Why not DispatchSource: on Linux any dispatch source starts libdispatch's manager thread, which asks
// for the highest quality of service (nice -4, swift-corelibs-libdispatch `_dispatch_worker_thread`);
// an unprivileged daemon may not raise its priority, so every start logged "Failed to set thread
// priority for worker thread: … errno=13" (EACCES). A poll(2) timeout and a signal pipe need no such thread.

internal import Glibc
import Synchronization
import SyncSystem
import SyncEngine

/// A one-shot timer on the monotonic clock whose handler runs on the timer's own thread: the thread sleeps
/// in poll(2) until the deadline or until a new schedule wakes it through a pipe.
final class WakeupTimer: Sendable {
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The deadline (nil: none) and whether the timer was cancelled.
    private let state = Mutex<(deadline: ContinuousClock.Instant?, cancelled: Bool)>((nil, false))
    private let handler: @Sendable () -> Void

    /// Creates the timer and starts its thread; `handler` runs on that thread at each expiry.
    init(handler: @escaping @Sendable () -> Void) throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SystemError("create the wakeup timer's pipe", code: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        self.handler = handler
        try SystemThread.detached(name: "timer") { [self] in run() }
    }

    /// Fires once after `delay` (at once for zero or less), or never for nil; replaces the previous schedule.
    func schedule(after delay: Duration?) {
        let deadline = delay.map { ContinuousClock.now + $0 }
        state.withLock { $0.deadline = deadline }
        wake()
    }

    /// Stops the thread; the handler does not run again.
    func cancel() {
        state.withLock { $0.cancelled = true }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already holds a wakeup
    }

    private func run() {
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let (deadline, cancelled) = state.withLock { ($0.deadline, $0.cancelled) }
            if cancelled { return }
            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                if remaining <= .zero {
                    let due = state.withLock { state -> Bool in
                        guard state.deadline == deadline else { return false }  // rescheduled meanwhile
                        state.deadline = nil
                        return true
                    }
                    if due { handler() }
                    continue
                }
                let (seconds, attoseconds) = remaining.components
                // Rounded up to the next millisecond, so the wakeup is never early.
                timeout = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            let ready = poll(&descriptor, 1, timeout)
            if ready > 0 { _ = read(wakeRead, &drain, drain.count) }
        }
    }
}

/// The write end of the signal pipe; set once before the handler is installed, then only read (by the
/// handler, which may only make async-signal-safe calls: write(2)).
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1
/// The read end, for the thread `start` begins; -1 until `install` made the pipe.
nonisolated(unsafe) private var signalPipeRead: Int32 = -1

/// Receives SIGTERM, SIGINT and SIGHUP: a sigaction(2) handler writes the number to a pipe (the self-pipe
/// trick), a thread of its own reads it and calls the handler.
public enum SignalWatcher {
    /// The signals the daemon handles.
    static let signals = [SIGTERM, SIGINT, SIGHUP]

    /// Makes the pipe and installs the handler, so that from now on SIGTERM, SIGINT and SIGHUP wait in the
    /// pipe for `start`'s thread instead of ending the process with their default action. The daemon calls it
    /// first thing in main, before it reads its configuration and opens the store (a stop requested meanwhile
    /// is then the usual clean one); `start` calls it when nobody did. Call it before other threads exist.
    public static func install() throws(SystemError) {
        guard signalPipeRead < 0 else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SystemError("create the signal pipe", code: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Never block the handler on a full pipe: a lost duplicate of a pending signal changes nothing.
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        signalPipeWrite = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(signalPipeWrite, &byte, 1)
        }
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        for number in signals {
            guard sigaction(number, &action, nil) == 0 else { throw SystemError("handle signal \(number)", code: errno) }
        }
        // Only now is it installed: a failure above leaves the next call (`start`'s) to try again and report it.
        signalPipeRead = fds[0]
    }

    /// Installs the handler (unless `install` did) and starts the thread that calls `handler` with each signal
    /// received, those that arrived since `install` first.
    static func start(handler: @escaping @Sendable (Int32) -> Void) throws(SystemError) {
        try install()
        let readEnd = signalPipeRead
        try SystemThread.detached(name: "signals") {
            // Threads started by libdispatch block every signal; this one takes them, so one thread always can.
            var set = sigset_t()
            sigemptyset(&set)
            for number in signals { sigaddset(&set, number) }
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            var byte: UInt8 = 0
            while true {
                guard retryingEINTR({ read(readEnd, &byte, 1) }) == 1 else { return }
                handler(Int32(byte))
            }
        }
    }
}
