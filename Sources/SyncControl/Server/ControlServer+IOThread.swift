internal import Glibc
import SyncCore
import SyncSystem

extension ControlServer {
    /// Starts the thread that does all socket I/O (detached; it reports its exit through
    /// `shared.threadExited`).
    func startIOThread(calls: AsyncStream<PendingCall>.Continuation) {
        let loop = ControlIOLoop(server: self, calls: calls)
        do throws(SystemError) {
            // Named for `ps -L` and /proc/PID/task/TID/comm: it runs at the daemon's priority, the refresh
            // lanes below it (syncd(8), DESCRIPTION).
            try SystemThread.detached(name: "control") { [handed = HandedOver(loop: loop)] in handed.loop.run() }
        } catch {
            // No thread, no server: let run() return.
            logger?.error("Failed to start control socket thread: \(SystemError("create thread", code: error.code).reason)")
            loop.shutDown()
        }
    }
}

/// The I/O thread's loop: `poll(2)` over the listener, the wake-up pipe and every
/// connection. Only this thread touches the connection list and performs socket I/O.
/// The I/O loop handed to its thread, which alone uses it from then on.
private struct HandedOver: @unchecked Sendable {
    let loop: ControlIOLoop
}

final class ControlIOLoop {
    let server: ControlServer
    let calls: AsyncStream<PendingCall>.Continuation
    var connections: [ControlConnection] = []
    /// Connections counted per peer (`ControlConnectionPolicy`).
    var tally: ControlConnectionTally
    private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)

    init(server: ControlServer, calls: AsyncStream<PendingCall>.Continuation) {
        self.server = server
        self.calls = calls
        self.tally = ControlConnectionTally(policy: server.limits.connections)
    }

    func run() {
        while !server.shared.withLock({ $0.stopRequested }) {
            // Before the poll set is built: expired connections are closed and reaped here.
            let timeout = closeExpired()
            var fds = [pollfd(fd: server.wakeFDs.read, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: server.listenerFD, events: Int16(POLLIN), revents: 0)]
            let polled = connections
            for connection in polled {
                fds.append(pollfd(fd: connection.fd, events: interest(of: connection), revents: 0))
            }
            let ready = retryingEINTR { poll(&fds, nfds_t(fds.count), timeout) }
            if ready < 0 {
                server.logger?.error("Failed to poll control sockets: \(SystemError("poll", code: errno).reason), stopping control server")
                break
            }
            if fds[0].revents != 0 { drainWakePipe() }
            if fds[1].revents != 0 { acceptConnections() }
            for (index, connection) in polled.enumerated() where fds[index + 2].revents != 0 {
                service(connection, events: fds[index + 2].revents)
            }
            for connection in connections { process(connection) }
            reap()
        }
        shutDown()
    }

    /// What to wait for: input only while no call is in flight (so a pipelining client
    /// cannot make us buffer without bound), output while some is queued. Hang-ups are
    /// always reported by poll.
    private func interest(of connection: ControlConnection) -> Int16 {
        connection.withState { state in
            var events: Int32 = 0
            if !state.inputClosed, !state.closeAfterFlush, state.callInFlight == nil { events |= Int32(POLLIN) }
            if state.pendingOutputCount > 0 { events |= Int32(POLLOUT) }
            return Int16(events)
        }
    }

    private func drainWakePipe() {
        var bytes = [UInt8](repeating: 0, count: 256)
        while read(server.wakeFDs.read, &bytes, bytes.count) > 0 {}
    }

    private func acceptConnections() {
        while true {
            let fd = retryingEINTR { accept(server.listenerFD, nil, nil) }
            if fd < 0 {
                switch errno {
                case ECONNABORTED: continue
                case EAGAIN, EWOULDBLOCK: return
                default:
                    // EMFILE and friends: leave the client in the backlog, try on the next event.
                    server.logger?.warning("Failed to accept control connection: \(SystemError("accept", code: errno).reason), ignoring")
                    return
                }
            }
            guard setNonBlockingCloseOnExec(fd) else {
                server.logger?.warning("Failed to set up control connection: \(SystemError("fcntl", code: errno).reason), closing it")
                close(fd)
                continue
            }
            let peer: PeerCredentials
            do throws(SystemError) {
                peer = try PeerCredentials.of(socket: fd)
            } catch {
                server.logger?.warning("\(error.description), closing connection")
                close(fd)
                continue
            }
            let level = server.policy.level(of: peer)
            if case .refused(let refusal, let log) = tally.admit(uid: peer.uid, privileged: level >= .control) {
                refuseAtOnce(fd, refusal)
                if log {
                    server.logger?.warning("Refused control connection of \(peer): \(refusal.reason) "
                                           + "(logged once for uid \(peer.uid) until one of its connections is accepted again)")
                }
                continue
            }
            connections.append(ControlConnection(fd: fd, peer: peer, level: level, limits: server.limits, now: server.now()))
        }
    }

    /// Performs the I/O poll reported for one connection.
    private func service(_ connection: ControlConnection, events: Int16) {
        let events = Int32(events)
        if events & Int32(POLLNVAL | POLLERR) != 0 {
            drop(connection, reason: nil)
            return
        }
        if events & Int32(POLLOUT) != 0 { flush(connection) }
        if events & Int32(POLLIN) != 0 { receive(connection) }
        if events & Int32(POLLHUP) != 0 {
            // Both directions are shut: the client is gone, nothing can be answered.
            drop(connection, reason: nil)
        }
    }

    private func receive(_ connection: ControlConnection) {
        let count = readBuffer.withUnsafeMutableBytes { raw in
            retryingEINTR { recv(connection.fd, raw.baseAddress, raw.count, 0) }
        }
        if count > 0 {
            connection.withState { $0.framer.append(readBuffer[0..<count]) }
        } else if count == 0 {
            connection.withState { $0.inputClosed = true }
        } else if errno != EAGAIN && errno != EWOULDBLOCK {
            drop(connection, reason: nil)
        }
    }

    /// Writes queued output until the socket would block.
    private func flush(_ connection: ControlConnection) {
        connection.withState { state in
            while state.pendingOutputCount > 0, !state.closed {
                let offset = state.outputOffset
                let written = state.output.withUnsafeBytes { raw in
                    retryingEINTR { send(connection.fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
                }
                if written > 0 {
                    state.outputOffset += written
                    state.lastProgress = server.now()
                } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    return
                } else {
                    ControlConnection.markClosed(&state)
                }
            }
        }
    }

    /// Takes complete calls from the connection's input while none is in flight, then
    /// writes what can be written right away.
    private func process(_ connection: ControlConnection) {
        while true {
            let next: Result<[UInt8]?, VarlinkFramer.MessageTooLarge> = connection.withState { state in
                guard !state.closed, !state.closeAfterFlush, state.callInFlight == nil else { return .success(nil) }
                do throws(VarlinkFramer.MessageTooLarge) {
                    let message = try state.framer.nextMessage()
                    if message != nil {
                        state.lastProgress = server.now()
                        state.hasCalled = true
                    }
                    return .success(message)
                } catch { return .failure(error) }
            }
            switch next {
            case .success(let message?):
                handle(message, on: connection)
            case .success(nil):
                flush(connection)
                return
            case .failure(let error):
                refuse(connection, ManagerError.invalidParameter(
                    parameter: "message", reason: "larger than \(error.limit) bytes without a NUL terminator"))
            }
        }
    }

    /// Closes and forgets connections that are finished.
    private func reap() {
        connections.removeAll { connection in
            let finished = connection.withState { state -> Bool in
                if state.closed { return true }
                let idle = state.pendingOutputCount == 0
                if state.closeAfterFlush, idle {
                    ControlConnection.markClosed(&state)
                    return true
                }
                if state.inputClosed, idle, state.callInFlight == nil, state.framer.bufferedByteCount == 0 {
                    ControlConnection.markClosed(&state)
                    return true
                }
                return false
            }
            guard finished else { return false }
            let reason = connection.withState({ $0.dropReason })
            if tally.ended(uid: connection.peer.uid, dropped: reason != nil), let reason {
                server.logger?.warning("Dropped control connection of \(connection.peer): \(reason) "
                                       + "(further drops of this user's connections are not logged until one ends normally)")
            }
            close(connection.fd)
            tally.release(uid: connection.peer.uid, privileged: connection.privileged)
            return true
        }
    }

    /// Closes the connections whose deadline (`ControlConnectionPolicy.deadline`) has passed; returns
    /// the `poll(2)` timeout until the next deadline in milliseconds, -1 when there is none.
    private func closeExpired() -> Int32 {
        let now = server.now()
        var next: MonotonicInstant?
        for connection in connections {
            let deadline = connection.withState { state -> (at: MonotonicInstant, timeout: ControlConnectionPolicy.Timeout)? in
                guard !state.closed else { return nil }
                return server.limits.connections.deadline(of: state.activity)
            }
            guard let deadline else { continue }
            if deadline.at <= now {
                // Debug only: a local user can cause these at will, and each is the client's own doing.
                server.logger?.debug("Closed control connection of \(connection.peer): \(deadline.timeout.reason)")
                drop(connection, reason: nil)
            } else if next.map({ deadline.at < $0 }) ?? true {
                next = deadline.at
            }
        }
        // Closed connections are reaped before the next poll.
        reap()
        guard let next else { return -1 }
        let milliseconds = (next.nanoseconds - now.nanoseconds + 999_999) / 1_000_000
        return Int32(clamping: milliseconds)
    }

    /// Answers a connection the policy refuses with `TooManyConnections` and closes it. The reply is a
    /// few hundred bytes on a fresh socket, so it fits its buffer; a client that sent its call already
    /// reads it as the answer (syncctl does), instead of finding the connection closed without a word.
    private func refuseAtOnce(_ fd: Int32, _ refusal: ControlConnectionPolicy.Refusal) {
        let bytes = VarlinkReply(error: ManagerError.tooManyConnections(reason: refusal.reason)).wireBytes
        _ = bytes.withUnsafeBytes { raw in
            retryingEINTR { send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        close(fd)
    }

    /// Marks a connection closed; `reap` closes its socket.
    func drop(_ connection: ControlConnection, reason: String?) {
        connection.withState { state in
            if state.dropReason == nil { state.dropReason = reason }
            ControlConnection.markClosed(&state)
        }
    }

    /// Sends an error for a protocol violation, then closes the connection once it is written.
    func refuse(_ connection: ControlConnection, _ error: some VarlinkErrorConvertible) {
        connection.withState { state in
            _ = connection.enqueue(VarlinkReply(error: error).wireBytes, in: &state, at: server.now())
            state.closeAfterFlush = true
            if state.dropReason == nil {
                state.dropReason = "protocol error, answered \(error.varlinkName) \(JSONValue.object(error.varlinkParameters).serialized())"
            }
        }
    }

    /// Closes everything and reports the exit (the thread's last act).
    func shutDown() {
        for connection in connections {
            connection.withState { ControlConnection.markClosed(&$0) }
            close(connection.fd)
            tally.release(uid: connection.peer.uid, privileged: connection.privileged)
        }
        connections.removeAll()
        close(server.listenerFD)
        // The wake-up pipe stays open until the server itself goes (deinit): a task may still call wake(),
        // and a closed fd number could by then belong to another file.
        server.removeSocketFile()
        calls.finish()
        let waiter = server.shared.withLock { state in
            state.threadExited = true
            defer { state.exitWaiter = nil }
            return state.exitWaiter
        }
        waiter?.resume()
    }
}
