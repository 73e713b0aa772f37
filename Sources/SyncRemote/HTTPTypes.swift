internal import CCurl
import SyncCore

/// One HTTP request as syncd makes it.
public struct HTTPRequest: Sendable {
    /// Absolute URL (http, https or file).
    public var url: String
    /// Method: GET, HEAD, POST, PUT or DELETE.
    public var method: String = "GET"
    /// Extra request headers, in order.
    public var headers: [(name: String, value: String)] = []
    /// A bearer token, sent only over https or to loopback, and never to another host after a redirect.
    public var bearerToken: String?
    /// Bound on the whole request, connect included; also the longest tolerated stall.
    public var timeout: Duration = .seconds(30)
    /// Largest accepted body, decoded; a larger one aborts the transfer.
    public var maxBytes: Int64 = 256 << 20
    /// Request body for POST and PUT.
    public var body: [UInt8]?
    /// Where this request, and each redirect it meets, may go and which of them get the token;
    /// nil: the policy of `url` itself (the token only to its origin, no other origin, no other file).
    public var origins: OriginPolicy?
    /// How many redirects are followed (each one checked against `origins`).
    public var maxRedirects = 5

    /// Creates a request for `url`.
    public init(url: String) { self.url = url }
}

/// Status line and headers of a response (the last one, after redirects).
public struct HTTPResponseHead: Sendable {
    /// An answer with nothing in it yet (a transport fills it in).
    public init() {}

    /// HTTP status; 0 for `file://` URLs.
    public var status: Int = 0
    /// Header fields in order, names lowercased.
    public var headers: [(name: String, value: String)] = []
    /// The URL that answered, after redirects.
    public var effectiveURL: String = ""

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let key = name.lowercased()
        return headers.first { $0.name == key }?.value
    }

    /// Every value of the header `name` (case-insensitive), in order.
    public func headerValues(_ name: String) -> [String] {
        let key = name.lowercased()
        return headers.filter { $0.name == key }.map(\.value)
    }

    /// The longest header value kept (longer ones are cut, marked by `truncatedHeaders`): a server cannot make
    /// syncd store or send back more than this (nginx refuses request headers over 8 KiB by default).
    public static let maxHeaderValueBytes = 8 << 10
    /// Names of headers whose value was longer than `maxHeaderValueBytes` and is not kept.
    public var oversizedHeaders: [String] = []
    /// The redirects followed to get here, in order (`Location` targets, resolved).
    public var redirects: [String] = []

    /// True for 2xx, and for `file://` responses.
    public var isSuccess: Bool { HTTPAnswer.carriesContent(status) }
}

/// Why a request failed before a complete response arrived.
public enum HTTPError: Error, Sendable, CustomStringConvertible {
    /// libcurl failed (DNS, connect, TLS, timeout, truncated body, …).
    case transport(code: Int32, message: String)
    /// The body exceeded `maxBytes`.
    case tooLarge(limit: Int64)
    /// The caller cancelled the transfer.
    case cancelled
    /// A bearer token would have been sent insecurely; nothing was sent.
    case insecureToken(host: String)
    /// The URL could not be parsed.
    case invalidURL(String)
    /// The body consumer rejected the data (e.g. invalid JSON); the transfer was aborted.
    case rejected(any Error)
    /// The URL, or a redirect's target, is outside what the source allows (`OriginPolicy`); nothing was sent there.
    case refusedOrigin(String)
    /// A `file:` URL names something other than a regular file (a FIFO, a device, a directory).
    case notRegularFile(String)

    /// True when the request cannot have reached the server: no name, no connection (libcurl's
    /// COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST, COULDNT_CONNECT), or refused before sending.
    /// A timeout, a reset or a TLS failure may come after the server got the request: false.
    public var requestNeverSent: Bool {
        switch self {
        case .transport(let code, _): return code == 5 || code == 6 || code == 7
        case .insecureToken, .invalidURL, .refusedOrigin, .notRegularFile: return true
        case .tooLarge, .cancelled, .rejected: return false
        }
    }

    /// True when a retry might succeed (network trouble, timeouts).
    public var isTransient: Bool {
        switch self {
        case .transport: return true
        case .tooLarge, .cancelled, .insecureToken, .invalidURL, .rejected, .refusedOrigin, .notRegularFile: return false
        }
    }

    public var description: String {
        switch self {
        case .transport(_, let message): return message
        case .tooLarge(let limit): return "response larger than MaxBytes=\(limit) bytes"
        case .cancelled: return "cancelled"
        case .insecureToken(let host):
            return "refusing to send the bearer token over plain http to \(host); use https"
        case .invalidURL(let url): return "invalid URL \(url)"
        case .rejected(let error): return "\(error)"
        case .refusedOrigin(let reason): return "refusing to request \(reason)"
        case .notRegularFile(let path): return "\(path) is not a regular file; URL= must name a JSON file"
        }
    }

    /// `description` without the URLs a server gave (a redirect's target, its `Location`), for callers outside
    /// ControlGroup= (docs/control-api.md, "Secrets"): a server may put anything, even the token, in them.
    public var publicDescription: String {
        switch self {
        case .transport(let code, _) where code == Int32(CURLE_TOO_MANY_REDIRECTS.rawValue):
            return "too many redirects followed (privileged callers see where they led)"
        case .invalidURL:
            return "invalid URL (a redirect's Location or a URL= that cannot be parsed; privileged callers see it)"
        case .refusedOrigin:
            return "refusing to request a URL outside what the source allows (URL= and AllowedOrigins=): a redirect's "
                + "target or a link the server gave, which privileged callers see"
        default:
            return description
        }
    }
}
