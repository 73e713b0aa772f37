// The platform half of link monitoring: a NETLINK_ROUTE socket read on its own
// thread (rtnetlink(7), netlink(7)). Decisions live in SyncCore's
// NetlinkParser and LinkStateTracker; this file only moves bytes.
internal import CShim
internal import Glibc
public import SyncCore
import Synchronization
import SyncEngine

/// Watches links, addresses and routes over rtnetlink and reports the
/// aggregate ``LinkState`` and its significant changes.
///
/// Use:
/// ```swift
/// let monitor = LinkMonitor(allowedInterfaces: config.interfaces, logger: logger) { state, change in
///     // Runs on the monitor's own thread: hand over and return quickly.
///     continuation.yield((state, change))
/// }
/// try await monitor.start()   // the initial state has been reported when this returns
/// …
/// await monitor.stop()
/// ```
///
/// The monitor owns one thread (a detached pthread, off Swift's cooperative
/// pool) that blocks in `poll(2)` on the netlink socket and a stop pipe. It
/// dumps links, then addresses, then routes (one dump at a time), then applies
/// notifications as they come. When the kernel drops notifications
/// (`ENOBUFS`, or a datagram larger than the 64 KiB buffer) it forgets
/// everything and dumps again, reporting only the net change.
///
/// Thread safety: the mutable state (phase, stop pipe, waiters, last state)
/// is behind one `Mutex`; the tracker and the socket belong to the thread.
public final class LinkMonitor: Sendable {
    /// Called on the monitor thread with the new state and the change that
    /// caused the call. The first call, before ``start()`` returns, carries the
    /// initial state (and `.stateChanged(from: .none, to:)` unless it is `.none`);
    /// later calls come only with a change.
    public typealias Handler = @Sendable (LinkState, LinkChange?) -> Void

    private let allowedInterfaces: Set<String>
    private let networkNamespacePath: String?
    private let logger: Logger
    private let handler: Handler
    private let receiveQueueSize: Int32
    private let control = Mutex(Control())

    /// recv(2) buffer size: the kernel never sends a larger rtnetlink datagram
    /// (it caps dump skbs at 32 KiB on 4 KiB pages; netlink(7) suggests 8 KiB+).
    static let bufferSize = 64 * 1024
    /// How long to wait for the next part of a dump reply before starting over.
    static let dumpTimeoutMilliseconds: Int32 = 5_000
    /// Dumps flagged NLM_F_DUMP_INTR are repeated this often before being accepted.
    static let maximumDumpAttempts = 5
    /// An accepted inconsistent dump is redone after this long (notifications still apply meanwhile).
    static let inconsistentRedumpMilliseconds: Int32 = 1_000

    private struct Control {
        var phase = Phase.idle
        var stopReadFD: Int32 = -1
        var stopWriteFD: Int32 = -1
        var state = LinkState.none
        var startWaiter: CheckedContinuation<Void, any Error>?
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var lostEventCount = 0
    }

    /// The monitor's lifecycle; moves forward only.
    private enum Phase {
        /// Created, not started.
        case idle
        /// The thread runs.
        case running
        /// The thread has ended (stopped, or failed and logged why).
        case finished
    }

    /// Creates a monitor; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - allowedInterfaces: `[Network] Interfaces=`; empty counts every non-loopback interface.
    ///   - networkNamespacePath: if set (e.g. `/var/run/netns/NAME`), the monitor
    ///     thread enters that network namespace with `setns(2)` before opening its
    ///     socket, so it watches that namespace; only that thread changes namespace.
    ///     Needs `CAP_SYS_ADMIN`; meant for tests. `nil` watches the caller's namespace.
    ///   - logger: where failures and lost events are logged.
    ///   - onChange: see ``Handler``.
    public convenience init(allowedInterfaces: Set<String> = [], networkNamespacePath: String? = nil,
                            logger: Logger, onChange: @escaping Handler) {
        self.init(allowedInterfaces: allowedInterfaces, networkNamespacePath: networkNamespacePath,
                  receiveQueueSize: 1 << 20, logger: logger, onChange: onChange)
    }

    /// As the public initializer, with the socket's `SO_RCVBUF` (tests shrink it to provoke `ENOBUFS`).
    init(allowedInterfaces: Set<String>, networkNamespacePath: String?, receiveQueueSize: Int32,
         logger: Logger, onChange: @escaping Handler) {
        self.allowedInterfaces = allowedInterfaces
        self.networkNamespacePath = networkNamespacePath
        self.receiveQueueSize = receiveQueueSize
        self.logger = logger
        self.handler = onChange
    }

    /// How often notifications were lost and everything dumped again (tests, diagnostics).
    var lostEventCount: Int { control.withLock { $0.lostEventCount } }

    /// The last state reported (`.none` before the first report).
    public var state: LinkState { control.withLock { $0.state } }

    /// Starts the monitor thread. Returns once the socket is open and the
    /// initial state has been reported to the handler (or the monitor was
    /// stopped meanwhile); throws if the namespace, socket or thread could not
    /// be set up. Call at most once.
    public func start() async throws {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw SystemError("create the link monitor's stop pipe") }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let started: Bool = control.withLock { control in
                guard control.phase == .idle else { return false }
                control.phase = .running
                control.stopReadFD = pipeFDs[0]
                control.stopWriteFD = pipeFDs[1]
                control.startWaiter = waiter
                return true
            }
            guard started else {
                for fd in pipeFDs { close(fd) }
                waiter.resume(throwing: SystemError("start the link monitor: it was already started", code: EALREADY))
                return
            }
            do throws(SystemError) {
                try SystemThread.detached { self.runThread() }
            } catch {
                finish(error: SystemError("create the link monitor thread", code: error.code))
            }
        }
    }

    /// Stops the monitor and waits for its thread to end (milliseconds: the
    /// thread wakes from `poll(2)` on the stop pipe). Safe to call more than
    /// once, and before or without ``start()``. No handler call follows.
    public func stop() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let wait: Bool = control.withLock { control in
                guard control.phase == .running else { return false }
                control.stopWaiters.append(waiter)
                var byte: UInt8 = 1
                _ = retryingEINTR { write(control.stopWriteFD, &byte, 1) }
                return true
            }
            if !wait { waiter.resume() }
        }
    }

    // MARK: - The monitor thread

    /// Ends the thread's life: closes the stop pipe, wakes every waiter.
    private func finish(error: (any Error)?) {
        let (startWaiter, stopWaiters) = control.withLock { control in
            control.phase = .finished
            close(control.stopReadFD)
            close(control.stopWriteFD)
            control.stopReadFD = -1
            control.stopWriteFD = -1
            defer { control.startWaiter = nil; control.stopWaiters = [] }
            return (control.startWaiter, control.stopWaiters)
        }
        if let error { startWaiter?.resume(throwing: error) } else { startWaiter?.resume() }
        for waiter in stopWaiters { waiter.resume() }
    }

    /// Records and reports a state; the first report also releases ``start()``.
    private func report(_ state: LinkState, _ change: LinkChange?) {
        control.withLock { $0.state = state }
        handler(state, change)
        let waiter = control.withLock { control in
            defer { control.startWaiter = nil }
            return control.startWaiter
        }
        waiter?.resume()
    }

    private func runThread() {
        if let path = networkNamespacePath {
            if let error = Self.enterNetworkNamespace(path) {
                logger.error(error.description)
                return finish(error: error)
            }
        }
        let groups = cshim_rtmgrp_link() | cshim_rtmgrp_ipv4_ifaddr() | cshim_rtmgrp_ipv6_ifaddr()
            | cshim_rtmgrp_ipv4_route() | cshim_rtmgrp_ipv6_route()
        let fd = cshim_netlink_open(groups)
        guard fd >= 0 else {
            let error = SystemError("open netlink socket", code: -fd)
            logger.error(error.description)
            return finish(error: error)
        }
        let stopFD = control.withLock { $0.stopReadFD }
        let socket = NetlinkSocket(fd: fd, stopFD: stopFD, logger: logger)
        socket.setReceiveQueueSize(receiveQueueSize)
        var loop = LinkEventLoop(socket: socket, allowedInterfaces: allowedInterfaces, logger: logger,
                                 lostEvents: { [self] in control.withLock { $0.lostEventCount += 1 } },
                                 report: { [self] state, change in report(state, change) })
        let outcome = loop.run()
        socket.close()
        switch outcome {
        case .stopped:
            finish(error: nil)
        case .failed(let error):
            logger.error("\(error.description), link monitoring stopped")
            finish(error: error)
        }
    }

    /// Moves the calling thread into the network namespace at `path` (setns(2)).
    private static func enterNetworkNamespace(_ path: String) -> SystemError? {
        let nsFD = open(path, O_RDONLY | O_CLOEXEC)
        guard nsFD >= 0 else { return SystemError("open network namespace \(path)") }
        defer { close(nsFD) }
        let result = cshim_setns_net(nsFD)
        return result < 0 ? SystemError("enter network namespace \(path)", code: -result) : nil
    }
}
