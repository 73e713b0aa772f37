internal import Glibc
import Synchronization
import SyncCore

/// The daemon's side of `io.syncd.Manager`: what it does with a call the control server has
/// already framed, type-checked and permission-checked.
public protocol ControlHandler: Sendable {
    /// Handles one call. Send zero or more `reply.progress(_:)` (only delivered when the caller
    /// asked for `more`), then exactly one `reply.finish(_:)` or `reply.fail(_:)`. Runs in a
    /// child task of `ControlServer.run()`; it is cancelled when the client disconnects or the
    /// server stops. Calls from different connections run concurrently. If the handler
    /// returns without a final reply, the server answers `MethodNotImplemented`.
    func handle(_ request: ManagerRequest, context: ControlCallContext, reply: ReplySink) async
}

/// Facts about one call besides its parameters.
public struct ControlCallContext: Sendable {
    /// Who called.
    public let peer: PeerCredentials
    /// What the caller may do (the call itself was allowed at this level).
    public let level: AccessLevel
    /// Whether the caller sees a server's own words and URLs (root, the daemon's user, the control group;
    /// docs/control-api.md, "Secrets"): readers and anyone else get the public form.
    public var privileged: Bool { level.seesServerText }
    /// The caller accepts several replies (`progress` is delivered).
    public let more: Bool
    /// The caller wants no reply at all (replies are discarded).
    public let oneway: Bool
}

/// What `org.varlink.service.GetInfo` reports.
public struct ControlServiceInfo: Sendable, Equatable {
    public var vendor: String
    public var product: String
    public var version: String
    public var url: String

    /// Creates the info.
    public init(vendor: String = "syncd", product: String = "syncd", version: String, url: String = "man:syncd(8)") {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
    }
}

/// Bounds that keep one client from hurting the others or the daemon (syncd(8) SECURITY).
public struct ControlServerLimits: Sendable, Equatable {
    /// Largest call accepted (a message with no NUL by then is refused and the client dropped).
    public var maxMessageSize: Int
    /// Output queued for a client that does not read; past this the client is dropped
    /// (a single reply larger than this is still sent to a client with nothing queued).
    public var maxPendingOutput: Int
    /// How many connections each kind of peer may hold and how long they may stay without a call;
    /// a connection past these is answered `TooManyConnections` and closed at once.
    public var connections: ControlConnectionPolicy

    /// The largest call syncd accepts, 1 MiB: `syncctl put` refuses a larger record before it sends it.
    public static let defaultMaxMessageSize = 1 << 20

    /// Creates limits: 1 MiB calls, 4 MiB queued output, and `ControlConnectionPolicy`'s defaults.
    public init(maxMessageSize: Int = ControlServerLimits.defaultMaxMessageSize, maxPendingOutput: Int = 4 << 20, connections: ControlConnectionPolicy = ControlConnectionPolicy()) {
        self.maxMessageSize = maxMessageSize
        self.maxPendingOutput = maxPendingOutput
        self.connections = connections
    }
}

/// The Varlink server on the control socket.
///
/// `listen(...)` binds the socket (so failures surface before the daemon reports ready and
/// early clients wait in the backlog); `run()` serves until its task is cancelled, then
/// closes every connection and removes the socket. All socket I/O happens on one dedicated
/// thread with non-blocking sockets and `poll(2)`, never on Swift's cooperative pool;
/// handler calls run as child tasks of `run()`.
public final class ControlServer: Sendable {
    /// The socket path.
    public let path: String
    let handler: any ControlHandler
    let policy: AccessPolicy
    let info: ControlServiceInfo
    let limits: ControlServerLimits
    let logger: Logger?
    let listenerFD: Int32
    /// Identity of the socket file we created, so we only unlink our own.
    let socketIdentity: (device: UInt64, inode: UInt64)
    /// Read and write ends of the pipe that wakes the I/O thread.
    let wakeFDs: (read: Int32, write: Int32)
    let shared: Mutex<SharedState>
    /// The origin of `now()`.
    let origin = ContinuousClock.now

    /// State shared between the I/O thread and the tasks.
    struct SharedState: ~Copyable {
        var started = false
        var stopRequested = false
        var threadExited = false
        var exitWaiter: CheckedContinuation<Void, Never>?
    }

    /// Binds and listens on the Unix socket at `path`. A stale socket there (one nobody accepts
    /// connections on) is removed first; a live one is left alone and `EADDRINUSE` thrown;
    /// the socket gets mode 0666 because access is decided per call from peer credentials.
    /// The parent directory must exist.
    public static func listen(path: String, handler: some ControlHandler, policy: AccessPolicy, info: ControlServiceInfo,
                              limits: ControlServerLimits = ControlServerLimits(), logger: Logger? = nil) throws(SystemError) -> ControlServer {
        guard let address = UnixSocketAddress(path: path) else { throw SystemError("bind control socket \(path)", code: ENAMETOOLONG) }

        var existing = stat()
        if lstat(path, &existing) == 0, existing.st_mode & S_IFMT == S_IFSOCK {
            // Someone still serves it (another syncd): taking the path would leave that one unreachable.
            guard !acceptsConnections(address) else {
                throw SystemError("bind control socket \(path) (another process is still serving it)", code: EADDRINUSE)
            }
            // A socket left by a previous run (nothing else unlinks it after a crash).
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("create control socket") }
        var succeeded = false
        defer { if !succeeded { close(fd) } }
        guard address.bind(fd) == 0 else { throw SystemError("bind control socket \(path)") }
        guard chmod(path, 0o666) == 0 else {
            let error = SystemError("set mode of control socket \(path)")
            unlink(path)
            throw error
        }
        var created = stat()
        guard lstat(path, &created) == 0 else { throw SystemError("stat control socket \(path)") }
        guard Glibc.listen(fd, 128) == 0 else {
            let error = SystemError("listen on control socket \(path)")
            unlink(path)
            throw error
        }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0, setNonBlockingCloseOnExec(pipeFDs[0]), setNonBlockingCloseOnExec(pipeFDs[1]) else {
            let error = SystemError("create wake-up pipe for the control socket")
            unlink(path)
            throw error
        }
        succeeded = true
        return ControlServer(path: path, handler: handler, policy: policy, info: info, limits: limits, logger: logger, listenerFD: fd,
                             socketIdentity: (UInt64(created.st_dev), UInt64(created.st_ino)), wakeFDs: (pipeFDs[0], pipeFDs[1]))
    }

    private init(path: String, handler: any ControlHandler, policy: AccessPolicy, info: ControlServiceInfo, limits: ControlServerLimits,
                 logger: Logger?, listenerFD: Int32, socketIdentity: (UInt64, UInt64), wakeFDs: (Int32, Int32)) {
        self.path = path
        self.handler = handler
        self.policy = policy
        self.info = info
        self.limits = limits
        self.logger = logger
        self.listenerFD = listenerFD
        self.socketIdentity = socketIdentity
        self.wakeFDs = wakeFDs
        self.shared = Mutex(SharedState())
    }

    deinit {
        // Nobody can call wake() any more: the wake-up pipe goes with the server.
        close(wakeFDs.read)
        close(wakeFDs.write)
        // The I/O thread closes the listener itself when it ran.
        if !shared.withLock({ $0.started }) {
            close(listenerFD)
            removeSocketFile()
        }
    }

    /// Serves clients until the calling task is cancelled; then cancels running handlers,
    /// closes every connection and removes the socket file. Call once.
    public func run() async {
        let (calls, continuation) = AsyncStream.makeStream(of: PendingCall.self, bufferingPolicy: .unbounded)
        let alreadyStarted = shared.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        startIOThread(calls: continuation)
        await withDiscardingTaskGroup { group in
            for await call in calls {
                group.addTask { await self.serve(call) }
            }
            // Cancelled (or the I/O thread ended): stop handlers before the connections go.
            group.cancelAll()
        }
        requestStop()
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let exited = shared.withLock { state in
                if state.threadExited { return true }
                state.exitWaiter = waiter
                return false
            }
            if exited { waiter.resume() }
        }
    }

    /// Asks the I/O thread to close everything and exit.
    func requestStop() {
        shared.withLock { $0.stopRequested = true }
        wake()
    }

    /// The monotonic time connection timeouts are measured in.
    func now() -> MonotonicInstant {
        MonotonicInstant(offset: ContinuousClock.now - origin)
    }

    /// Wakes the I/O thread (a byte on the pipe; a full pipe already means "wake").
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeFDs.write, &byte, 1)
    }

    /// Removes the socket file if it is still the one this server created.
    func removeSocketFile() {
        var current = stat()
        if lstat(path, &current) == 0, UInt64(current.st_dev) == socketIdentity.device, UInt64(current.st_ino) == socketIdentity.inode {
            unlink(path)
        }
    }

    /// Runs one handler call; cancels it if the client goes away.
    private func serve(_ call: PendingCall) async {
        let sink = call.sink
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.handler.handle(call.request, context: call.context, reply: sink) }
            group.addTask { await call.connection.waitUntilClosed() }
            await group.next()
            group.cancelAll()
        }
        // A no-op if the handler sent its final reply; otherwise the client is not left waiting.
        sink.fail(VarlinkServiceError.methodNotImplemented(method: ManagerInterface.name + "." + call.request.methodName))
        wake()
    }
}

/// Whether something listens on the Unix socket at `address`: a connection is accepted, or the backlog is
/// full (`EAGAIN`). `ECONNREFUSED` (a socket file nobody listens on, left by a crash) and any other failure
/// count as "no": such a file is replaced, as before. The corresponding C call is `connect(2)`.
private func acceptsConnections(_ address: UnixSocketAddress) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return address.connect(fd) == 0 || errno == EAGAIN || errno == EINPROGRESS
}

/// Makes `fd` non-blocking and close-on-exec (`pipe2`/`accept4` need _GNU_SOURCE, which the
/// Glibc module does not define). The corresponding C call is `fcntl(2)`.
func setNonBlockingCloseOnExec(_ fd: Int32) -> Bool {
    let flags = fcntl(fd, F_GETFL)
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0
}

/// A decoded call waiting for the handler.
struct PendingCall: Sendable {
    let connection: ControlConnection
    let request: ManagerRequest
    let context: ControlCallContext
    let sink: ReplySink
}
