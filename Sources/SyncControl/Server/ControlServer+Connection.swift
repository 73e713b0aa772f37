import Synchronization
import SyncCore

/// One client connection. The I/O thread owns the socket; handler tasks only queue output
/// through `ReplySink`, under the connection's lock.
///
/// Every access to the state goes through `withState`, which resumes the tasks released by a
/// close only after the lock is dropped. Resuming under the lock would deadlock: a task being
/// cancelled holds the runtime's lock on its own status while its cancellation handler (in
/// `waitUntilClosed`) takes this one, and resuming that task needs its status lock.
final class ControlConnection: Sendable {
    /// The connected socket (closed by the I/O thread).
    let fd: Int32
    /// Who connected.
    let peer: PeerCredentials
    /// What `peer` may do (decided once, at accept).
    let level: AccessLevel
    /// Whether `peer` shares the connections reserved for root, the daemon's user and the control group.
    var privileged: Bool { level >= .control }
    let maxPendingOutput: Int
    private let state: Mutex<State>

    /// Everything that changes.
    struct State: ~Copyable {
        /// Bytes received and not yet taken as calls (I/O thread only).
        var framer: VarlinkFramer
        /// Bytes waiting to be written; `outputOffset` of them are already sent.
        var output: [UInt8] = []
        var outputOffset = 0
        /// The call being handled; later calls wait in the framer (Varlink replies are in order).
        var callInFlight: UInt64?
        var nextCallID: UInt64 = 1
        /// The client sent end-of-file; close once the work in hand is done.
        var inputClosed = false
        /// Close once the queued output is written (after a protocol error).
        var closeAfterFlush = false
        /// The connection is finished; nothing more is sent.
        var closed = false
        /// Why it was dropped, for the log.
        var dropReason: String?
        /// When the connection last made progress (connected, a call arrived or was answered, output was
        /// written): what its timeouts count from (`ControlConnectionPolicy.deadline`).
        var lastProgress: MonotonicInstant
        /// A call arrived on it.
        var hasCalled = false
        /// Tasks waiting for the connection to close, by waiter ID.
        var closeWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 1
        /// Waiters released by `markClosed`, resumed by `withState` once the lock is dropped.
        var released: [CheckedContinuation<Void, Never>] = []

        var pendingOutputCount: Int { output.count - outputOffset }
        /// What the connection is doing, for `ControlConnectionPolicy.deadline(of:)`.
        var activity: ControlConnectionPolicy.Activity {
            ControlConnectionPolicy.Activity(lastProgress: lastProgress, hasCalled: hasCalled, callInFlight: callInFlight != nil,
                                             outputPending: pendingOutputCount > 0, inputPending: framer.bufferedByteCount > 0)
        }
    }

    init(fd: Int32, peer: PeerCredentials, level: AccessLevel, limits: ControlServerLimits, now: MonotonicInstant) {
        self.fd = fd
        self.peer = peer
        self.level = level
        self.maxPendingOutput = limits.maxPendingOutput
        self.state = Mutex(State(framer: VarlinkFramer(maxMessageSize: limits.maxMessageSize), lastProgress: now))
    }

    /// Runs `body` with the state locked, then resumes whatever waiters it released.
    func withState<Result>(_ body: (inout State) -> sending Result) -> sending Result {
        let (result, released) = state.withLock { state in
            let result = body(&state)
            defer { state.released = [] }
            return (result, state.released)
        }
        for waiter in released { waiter.resume() }
        return result
    }

    /// Queues a message; false (and nothing queued) if the connection is closed.
    func enqueue(_ bytes: [UInt8], at now: MonotonicInstant) -> Bool {
        withState { enqueue(bytes, in: &$0, at: now) }
    }

    /// Queues a message with the lock held. A client whose unread output would pass the
    /// bound is dropped: it is not reading, and must not make the daemon hold unbounded
    /// memory for it.
    ///
    /// Output queued on an empty queue starts the unread-replies clock at `now`: a `Watch` that
    /// waited an hour for its next event has not left that event unread for an hour.
    func enqueue(_ bytes: [UInt8], in state: inout State, at now: MonotonicInstant) -> Bool {
        guard !state.closed, !state.closeAfterFlush else { return false }
        if state.pendingOutputCount > 0, state.pendingOutputCount + bytes.count > maxPendingOutput {
            state.dropReason = "client does not read its replies (more than \(maxPendingOutput) bytes queued)"
            ControlConnection.markClosed(&state)
            return false
        }
        if state.pendingOutputCount == 0, !bytes.isEmpty { state.lastProgress = now }
        if state.outputOffset == state.output.count {
            state.output.removeAll(keepingCapacity: state.output.capacity <= 1 << 20)
            state.outputOffset = 0
        }
        // Nothing queued: a large message's buffer becomes the output buffer (a reply of megabytes is not copied).
        if state.output.isEmpty && bytes.count >= 64 << 10 {
            state.output = bytes
        } else {
            state.output.append(contentsOf: bytes)
        }
        return true
    }

    /// Marks the connection closed and releases everyone waiting for that (`withState` resumes them).
    static func markClosed(_ state: inout State) {
        guard !state.closed else { return }
        state.closed = true
        state.callInFlight = nil
        state.released += state.closeWaiters.values
        state.closeWaiters.removeAll()
    }

    /// Whether the connection is still open.
    var isOpen: Bool { withState { !$0.closed } }

    /// Returns when the connection closes or the calling task is cancelled.
    func waitUntilClosed() async {
        let waiterID = withState { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let resumeNow = withState { state in
                    if state.closed || Task.isCancelled { return true }
                    state.closeWaiters[waiterID] = waiter
                    return false
                }
                if resumeNow { waiter.resume() }
            }
        } onCancel: {
            let waiter = withState { $0.closeWaiters.removeValue(forKey: waiterID) }
            waiter?.resume()
        }
    }
}

/// How a handler answers one call. Usable from any task; every method returns false once
/// the client is gone or the call is already finished, which is the handler's cue to stop.
public struct ReplySink: Sendable {
    let connection: ControlConnection
    let callID: UInt64
    let server: ControlServer
    /// The caller asked for `more`: progress replies are delivered.
    public let more: Bool
    /// The caller asked for no reply: everything is discarded.
    public let oneway: Bool

    /// Sends a reply with `continues: true`. Without `more` nothing is sent (the caller only
    /// wants the outcome) and the result says whether the client is still there.
    @discardableResult
    public func progress(_ parameters: JSONObject) -> Bool {
        guard more, !oneway else { return isActive }
        return send(VarlinkReply(parameters: parameters, continues: true), final: false)
    }

    /// Sends the final reply.
    @discardableResult
    public func finish(_ parameters: JSONObject = [:]) -> Bool {
        send(VarlinkReply(parameters: parameters), final: true)
    }

    /// Sends the final reply with its parameters already serialised as a compact JSON object (`GetStatus`,
    /// assembled from each source's cached part); the client receives what `finish(_:)` sends for the object.
    @discardableResult
    public func finish(serializedParameters: consuming [UInt8]) -> Bool {
        send(oneway ? [] : VarlinkReply.wireBytes(serializedParameters: serializedParameters), final: true)
    }

    /// Sends an error as the final reply.
    @discardableResult
    public func fail(_ error: some VarlinkErrorConvertible) -> Bool {
        send(VarlinkReply(error: error), final: true)
    }

    /// Whether the client is connected and this call is not finished.
    public var isActive: Bool {
        connection.withState { !$0.closed && $0.callInFlight == callID }
    }

    /// Returns when the client disconnects (or the calling task is cancelled): for handlers
    /// that wait on something else, such as `Watch` between events.
    public func waitUntilDisconnected() async {
        await connection.waitUntilClosed()
    }

    private func send(_ reply: VarlinkReply, final: Bool) -> Bool {
        send(oneway ? [] : reply.wireBytes, final: final)
    }

    private func send(_ bytes: [UInt8], final: Bool) -> Bool {
        // Checking the call and queueing under one lock keeps replies in call order.
        let sent = connection.withState { state -> Bool in
            guard !state.closed, state.callInFlight == callID else { return false }
            if final {
                state.callInFlight = nil
                state.lastProgress = server.now()
            }
            return oneway || connection.enqueue(bytes, in: &state, at: server.now())
        }
        server.wake()
        return sent
    }
}
