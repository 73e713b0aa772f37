import Synchronization
import SyncRemote
@testable import SyncEngine

/// One answer of the scripted transport.
struct ScriptedAnswer {
    /// What happens to the request besides (or instead of) an answer.
    enum Fault {
        /// No connection: the request never left (libcurl's COULDNT_CONNECT).
        case notSent
        /// The server took the request and did what it asked, then the connection broke before the answer.
        case lostAfterApplying
        /// The connection broke after sending, before the server did anything.
        case lostBeforeApplying
    }

    var status = 200
    var headers: [(String, String)] = []
    var body: [UInt8] = []
    /// How long the server takes to answer, on the test's clock; longer than the request's timeout times it out.
    var delay: Duration = .zero
    /// The redirects followed before this answer (the last one is where it came from).
    var redirects: [String] = []
    var fault: Fault?

    /// A JSON answer.
    static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> ScriptedAnswer {
        ScriptedAnswer(status: status, headers: [("content-type", "application/json")] + headers, body: Array(text.utf8))
    }

    /// An answer with no body.
    static func status(_ status: Int, headers: [(String, String)] = []) -> ScriptedAnswer {
        ScriptedAnswer(status: status, headers: headers)
    }

    /// A fault with no answer.
    static func fault(_ fault: Fault) -> ScriptedAnswer { ScriptedAnswer(status: 0, fault: fault) }
}

/// The engine's network in tests: each request is answered by the first one-shot answer queued for its method
/// and URL, else by `server`. Time passes only as answers say (`delay`), on the test's `ManualClock`; the body
/// arrives in small chunks, as from a socket. Every request is recorded.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    var cancellation = CancellationFlag()
    let clock: ManualClock
    /// Answers whatever no one-shot answer covers.
    var server: (HTTPRequest) -> ScriptedAnswer
    /// The requests in the order they were performed (after the origin check).
    private(set) var requests: [HTTPRequest] = []
    private var oneShots: [String: [ScriptedAnswer]] = [:]
    /// How many times the engine closed its connections.
    private(set) var closes = 0
    /// Bytes per body chunk.
    var chunkSize = 5

    init(clock: ManualClock, server: @escaping (HTTPRequest) -> ScriptedAnswer = { _ in .status(404) }) {
        self.clock = clock
        self.server = server
    }

    /// Queues `answers` for the next requests of `method` to `url`, in order, before `server` answers again.
    func then(_ method: String, _ url: String, _ answers: ScriptedAnswer...) {
        oneShots["\(method) \(url)", default: []] += answers
    }

    /// The recorded requests as "METHOD URL".
    var log: [String] { requests.map { "\($0.method) \($0.url)" } }

    func perform(_ request: HTTPRequest, onHead: (HTTPResponseHead) throws -> Void,
                 onBody: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPError) -> HTTPResponseHead {
        if cancellation.isCancelled { throw .cancelled }
        if let policy = request.origins, case .refused(let reason) = policy.decide(request.url) { throw .refusedOrigin(reason) }
        requests.append(request)
        let key = "\(request.method) \(request.url)"
        var answer: ScriptedAnswer
        if var queued = oneShots[key], !queued.isEmpty {
            answer = queued.removeFirst()
            oneShots[key] = queued
        } else {
            answer = server(request)
        }
        switch answer.fault {
        case .notSent?:
            throw .transport(code: 7, message: "Failed to connect to api.test port 80: Connection refused")
        case .lostAfterApplying?:
            _ = server(request)
            throw .transport(code: 52, message: "Empty reply from server")
        case .lostBeforeApplying?:
            throw .transport(code: 56, message: "Recv failure: Connection reset by peer")
        case nil:
            break
        }
        if answer.delay > request.timeout {
            clock.advance(by: request.timeout)
            let milliseconds = request.timeout.components.seconds * 1000 + request.timeout.components.attoseconds / 1_000_000_000_000_000
            throw .transport(code: 28, message: "Operation timed out after \(milliseconds) milliseconds with 0 bytes received")
        }
        clock.advance(by: answer.delay)
        if Int64(answer.body.count) > request.maxBytes { throw .tooLarge(limit: request.maxBytes) }
        var head = HTTPResponseHead()
        head.status = answer.status
        head.headers = answer.headers.map { (name: $0.0.lowercased(), value: $0.1) }
        head.redirects = answer.redirects
        head.effectiveURL = answer.redirects.last ?? request.url
        do {
            try onHead(head)
            var offset = 0
            while offset < answer.body.count {
                let end = min(offset + chunkSize, answer.body.count)
                try answer.body[offset..<end].withUnsafeBytes { try onBody($0) }
                offset = end
            }
        } catch {
            throw .rejected(error)
        }
        return head
    }

    func close() { closes += 1 }
}
