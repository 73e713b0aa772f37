internal import Glibc

/// What went wrong talking to a Varlink service.
public enum VarlinkClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be reached (`connect(2)` or `socket(2)` failed); errno attached.
    case connect(path: String, code: Int32)
    /// Reading or writing failed; errno attached.
    case io(operation: String, code: Int32)
    /// The service closed the connection before the reply was complete.
    case disconnected
    /// The service sent something that is not a Varlink reply.
    case protocolViolation(String)
    /// The service answered with a Varlink error.
    case remote(name: String, parameters: JSONObject)
    /// The service did not answer (or accept the connection) within the timeout, in seconds.
    case timedOut(path: String, seconds: Double)

    public var description: String {
        switch self {
        case .connect(let path, let code): return "cannot connect to \(path): \(VarlinkClientError.text(of: code))"
        case .io(let operation, let code): return "failed to \(operation): \(VarlinkClientError.text(of: code))"
        case .disconnected: return "syncd closed the connection"
        case .protocolViolation(let detail): return "unexpected reply from syncd: \(detail)"
        case .remote(let name, let parameters):
            return parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).serialized())"
        case .timedOut(let path, let seconds):
            return "\(path) did not answer within \(VarlinkClientError.format(seconds: seconds))"
        }
    }

    /// `25s`, `2.5s`.
    public static func format(seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int64(seconds))s" : "\(seconds)s"
    }

    /// The `strerror(3)` text of an errno value.
    public static func text(of code: Int32) -> String { String(cString: strerror(code)) }
}

/// A blocking Varlink client over a Unix stream socket, for `syncctl` and tests.
///
/// One call at a time: send a call, then read its replies until one has `continues == false`.
/// Owns its socket and closes it on `deinit`; not for use from several threads at once.
public final class VarlinkClient {
    private let fd: Int32
    private var framer: VarlinkFramer
    /// The socket path connected to.
    public let path: String
    /// Seconds to wait for the connection and for each reply; nil waits for ever.
    public let timeout: Double?

    /// Connects to the Unix socket at `path`. Replies up to `maxReplySize` bytes are accepted
    /// (a `List` page can exceed the 1 MiB the server accepts for calls). With a `timeout`, connecting,
    /// sending and waiting for each reply give up after that many seconds (`.timedOut`).
    public init(path: String, maxReplySize: Int = 64 << 20, timeout: Double? = nil) throws(VarlinkClientError) {
        self.path = path
        self.timeout = timeout
        framer = VarlinkFramer(maxMessageSize: maxReplySize)
        guard let address = UnixSocketAddress(path: path) else { throw .connect(path: path, code: ENAMETOOLONG) }
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { throw .connect(path: path, code: errno) }
        if let timeout {
            // unix(7): a blocking connect(2) to a socket whose backlog is full waits up to SO_SNDTIMEO.
            var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            _ = setsockopt(socketFD, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        guard address.connect(socketFD) == 0 else {
            let code = errno
            close(socketFD)
            if let timeout, code == EAGAIN || code == EINPROGRESS { throw .timedOut(path: path, seconds: timeout) }
            throw .connect(path: path, code: code)
        }
        fd = socketFD
    }

    deinit { close(fd) }

    /// Sends one call. If the service already closed the connection, an answer it left before closing
    /// (`io.syncd.Manager.TooManyConnections`, sent to a connection it refuses) is still read by the next
    /// `readReply`, so only a connection closed without a word fails later as `.disconnected`.
    public func send(_ call: VarlinkCall) throws(VarlinkClientError) {
        do {
            try sendRaw(call.wireBytes)
        } catch .disconnected {
            refusedBeforeSending = true
        }
    }

    /// The service closed the connection before our call went out; `readReply` returns what it left.
    private var refusedBeforeSending = false

    /// Sends raw bytes (tests use this to send malformed messages).
    public func sendRaw(_ bytes: [UInt8]) throws(VarlinkClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                retryingEINTR { Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
            }
            guard written > 0 else {
                if errno == EPIPE || errno == ECONNRESET { throw .disconnected }
                if let timeout, errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut(path: path, seconds: timeout) }
                throw .io(operation: "send to \(path)", code: errno)
            }
            offset += written
        }
    }

    /// Reads the next reply (blocking). Error replies are returned, not thrown.
    public func readReply() throws(VarlinkClientError) -> VarlinkReply {
        try readReplyKeepingText().reply
    }

    /// Reads the next reply, with the text of its `parameters` exactly as received.
    private func readReplyKeepingText() throws(VarlinkClientError) -> (reply: VarlinkReply, parameters: ArraySlice<UInt8>?) {
        try parseReply(readMessage())
    }

    private func parseReply(_ message: [UInt8]) throws(VarlinkClientError) -> (reply: VarlinkReply, parameters: ArraySlice<UInt8>?) {
        let parsed: (value: JSONValue, member: Range<Int>?)
        do {
            parsed = try JSONValue.parsing(message, locatingMember: "parameters",
                                           limits: JSONParseLimits(maxDepth: 64, maxBytes: framer.maxMessageSize))
        } catch {
            throw .protocolViolation("\(error)")
        }
        guard let reply = VarlinkReply(message: parsed.value) else { throw .protocolViolation("not a Varlink reply") }
        return (reply, parsed.member.map { message[$0] })
    }

    /// The next raw message without its NUL (blocking).
    public func readMessage() throws(VarlinkClientError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            do {
                if let message = try framer.nextMessage() { return message }
            } catch {
                throw .protocolViolation("reply larger than \(error.limit) bytes")
            }
            try waitForInput()
            let count = chunk.withUnsafeMutableBytes { raw in retryingEINTR { recv(fd, raw.baseAddress, raw.count, 0) } }
            if count == 0 { throw .disconnected }
            guard count > 0 else {
                if errno == ECONNRESET || refusedBeforeSending { throw .disconnected }
                throw .io(operation: "receive from \(path)", code: errno)
            }
            framer.append(chunk[0..<count])
        }
    }

    /// Waits until the socket has something to read, at most `timeout` seconds (poll(2), restarted with the
    /// remaining time after a signal).
    private func waitForInput() throws(VarlinkClientError) {
        guard let timeout else { return }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
        let ready = retryingEINTR {
            let remaining = deadline - clock.now
            let milliseconds = max(0, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, Int32(clamping: milliseconds))
        }
        if ready > 0 { return }
        if ready == 0 { throw .timedOut(path: path, seconds: timeout) }
        throw .io(operation: "wait for \(path)", code: errno)
    }

    /// Calls a method expecting exactly one reply; an error reply is thrown as `.remote`.
    public func call(_ call: VarlinkCall) throws(VarlinkClientError) -> JSONObject {
        try callKeepingText(call).parameters
    }

    /// Like `call`, also returning the text of the reply's parameters exactly as received (nil if the reply
    /// had none), so that a large reply can be printed without serialising it again.
    public func callKeepingText(_ call: VarlinkCall) throws(VarlinkClientError) -> (parameters: JSONObject, text: ArraySlice<UInt8>?) {
        var call = call
        call.more = false
        try send(call)
        let (reply, text) = try readReplyKeepingText()
        if let error = reply.error { throw .remote(name: error, parameters: reply.parameters) }
        guard !reply.continues else { throw .protocolViolation("continues without more") }
        return (reply.parameters, text)
    }

    /// Calls a method and returns its reply's `parameters` object as the service wrote it, checked for JSON syntax
    /// and the reply's frame (`VarlinkReplyFrame`) but not parsed into a tree: for replies of megabytes that are
    /// printed as they are (`syncctl status --json`). An error reply is thrown as `.remote`.
    /// `oneLine` says whether the text has no line break (JSON strings hold none raw, so only whitespace can).
    public func callReturningParametersText(_ call: VarlinkCall) throws(VarlinkClientError) -> (text: ArraySlice<UInt8>, oneLine: Bool) {
        try parametersText(of: callReturningMessage(call))
    }

    /// Calls a method and returns its reply message as received (without its NUL), not checked at all: for a reader
    /// that checks what it reads, falling back to `parametersText(of:)` for anything else.
    public func callReturningMessage(_ call: VarlinkCall) throws(VarlinkClientError) -> [UInt8] {
        var call = call
        call.more = false
        try send(call)
        return try readMessage()
    }

    /// The `parameters` text of a reply message, checked as `callReturningParametersText` checks it.
    public func parametersText(of message: [UInt8]) throws(VarlinkClientError) -> (text: ArraySlice<UInt8>, oneLine: Bool) {
        let frame: VarlinkReplyFrame
        do { frame = try VarlinkReplyFrame(message: message) } catch { throw .protocolViolation(error.description) }
        if frame.hasError {
            let reply = try parseReply(message).reply
            if let error = reply.error { throw .remote(name: error, parameters: reply.parameters) }
        }
        guard !frame.continues else { throw .protocolViolation("continues without more") }
        guard let range = frame.parameters, message[range.lowerBound] == UInt8(ascii: "{") else {
            throw .protocolViolation(frame.parameters == nil ? "the reply has no parameters" : "the reply's parameters are not an object")
        }
        return (message[range], !frame.multiline)
    }

    /// Calls a method with `more`, passing each reply's parameters to `body` until the last;
    /// an error reply is thrown as `.remote`. `body` may throw to stop early.
    public func callStreaming<E: Error>(_ call: VarlinkCall, _ body: (JSONObject, _ continues: Bool) throws(E) -> Void) throws(StreamingError<E>) {
        var call = call
        call.more = true
        do { try send(call) } catch { throw .client(error) }
        while true {
            let reply: VarlinkReply
            do { reply = try readReply() } catch { throw .client(error) }
            if let error = reply.error { throw .client(.remote(name: error, parameters: reply.parameters)) }
            do { try body(reply.parameters, reply.continues) } catch { throw .body(error) }
            if !reply.continues { return }
        }
    }

    /// Shuts down the sending side, so the service sees end of input.
    public func shutdownWriting() {
        shutdown(fd, Int32(SHUT_WR))
    }
}

/// An error of `callStreaming`: the client's, or the one the reply handler threw.
public enum StreamingError<BodyError: Error>: Error {
    case client(VarlinkClientError)
    case body(BodyError)
}
