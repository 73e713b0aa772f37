internal import CCurl
internal import CShim
import Synchronization
import SyncCore

/// The `User-Agent` syncd sends.
public let syncdUserAgent = "syncd/\(syncdVersion)"

/// An HTTP client over one libcurl easy handle (connections are reused across requests).
///
/// The handle, and with it a reference on the loaded libcurl (`CurlLibrary`), is taken at the first HTTP
/// transfer and kept until `close()` or the end of the client: an owner that goes idle calls `close()`, so an
/// idle daemon has libcurl unloaded (docs/architecture.md, "libcurl on demand").
///
/// Blocking: `perform` runs the transfer on the calling thread, so callers run it
/// off the cooperative pool. One request at a time per client.
public final class HTTPClient {
    private let library: CurlLibrary
    /// The loaded library and this client's easy handle, from the first HTTP transfer until `close()`.
    private var connection: (api: OpaquePointer, handle: UnsafeMutableRawPointer)?
    /// Set from any thread to abort the transfer in progress at its next progress callback. Its owner may
    /// give each piece of work a flag of its own (the daemon does, per refresh ticket).
    public var cancellation = CancellationFlag()

    /// Creates a client; libcurl is loaded at its first HTTP transfer.
    public convenience init() { self.init(library: .shared) }

    /// A client of `library` (tests give a copy of libcurl of their own).
    init(library: CurlLibrary) { self.library = library }

    deinit { close() }

    /// Runs `body` while libcurl is not loaded in the process, and keeps any transfer from loading it until
    /// `body` returns; nil without running `body` while a transfer or URL parse has it loaded. The daemon
    /// releases mapped library pages this way, never while the dynamic linker could be mapping one.
    public static func whileLibraryUnloaded<T>(_ body: () -> T) -> T? {
        CurlLibrary.shared.whileUnloaded(body)
    }

    /// Keeps libcurl loaded after its last user until `unloadLibraryIfIdle` (the daemon's choice: refreshes in
    /// quick succession load it once; docs/architecture.md, "libcurl on demand").
    public static func keepLibraryLoadedBetweenUses() {
        CurlLibrary.shared.setLingering(true)
    }

    /// libcurl's count of releases while it is loaded (for `unloadLibraryIfIdle`); nil when it is not loaded.
    public static func loadedLibraryReleases() -> UInt64? {
        switch CurlLibrary.shared.use() {
        case .unloaded: nil
        case .inUse(let releases), .idle(let releases): releases
        }
    }

    /// Unloads libcurl when no one holds it and nothing used it since its count of releases was `releases`.
    /// Returns nil when it is not loaded any more (unloaded now, or before), else the count to look at next.
    public static func unloadLibraryIfIdle(since releases: UInt64) -> UInt64? {
        switch CurlLibrary.shared.unloadIfIdle(since: releases) {
        case .unloaded, .idle: nil
        case .inUse(let releases): releases
        }
    }

    /// Whether the client holds a libcurl handle (and a reference on the library).
    public var isOpen: Bool { connection != nil }

    /// Closes the handle and its connections and releases the library (unloaded when no one else uses it).
    /// The next transfer opens a new handle.
    public func close() {
        guard let connection else { return }
        self.connection = nil
        cshim_curl_easy_cleanup(connection.api, connection.handle)
        library.release()
    }

    /// The handle, opened (and the library loaded) on first use.
    private func open() throws(HTTPError) -> (api: OpaquePointer, handle: UnsafeMutableRawPointer) {
        if let connection { return connection }
        let api = try library.acquire()
        guard let handle = cshim_curl_easy_init(api) else {
            library.release()
            throw .transport(code: Int32(CURLE_FAILED_INIT.rawValue), message: "Failed to initialise libcurl: curl_easy_init failed")
        }
        connection = (api, handle)
        return (api, handle)
    }

    /// Performs `request`, following redirects one hop at a time: each target is checked against
    /// `request.origins` before anything is sent there, and the token goes only where the policy says.
    /// `onHead` is called once when the final response's body starts (or at its end if there is none);
    /// `onBody` then receives the decoded body in chunks. An error thrown by either aborts the transfer
    /// and is rethrown as `HTTPError.rejected`. Redirect responses never reach the callbacks.
    ///
    /// Methods over redirects follow RFC 9110 §15.4: 301, 302, 307 and 308 keep the method and the body
    /// (sent again from its start); a 303 turns a GET into a GET and is returned as it is for any other
    /// method, whose change the server did not take.
    public func perform(
        _ request: HTTPRequest,
        onHead: (HTTPResponseHead) throws -> Void = { _ in },
        onBody: (UnsafeRawBufferPointer) throws -> Void
    ) throws(HTTPError) -> HTTPResponseHead {
        let policy = request.origins ?? OriginPolicy(configuredURL: request.url)
        var hop = request
        var redirects: [String] = []
        while true {
            let sendToken: Bool
            switch policy.decide(hop.url) {
            case .refused(let reason): throw .refusedOrigin(reason)
            case .allowed(let allowed): sendToken = allowed
            }
            if !sendToken { hop.bearerToken = nil }
            var head = try performOne(hop, onHead: onHead, onBody: onBody)
            head.redirects = redirects
            guard let redirect = HTTPAnswer.redirect(status: head.status, method: request.method),
                  let location = head.header("location"), !location.isEmpty else { return head }
            guard redirects.count < request.maxRedirects else {
                throw .transport(code: Int32(CURLE_TOO_MANY_REDIRECTS.rawValue),
                                 message: "Maximum (\(request.maxRedirects)) redirects followed, the last from \(hop.url) to \(location)")
            }
            guard let target = resolveURL(location, against: hop.url) else {
                throw .invalidURL("\(location) (the Location of HTTP \(head.status) from \(hop.url))")
            }
            if redirect == .notTaken { return head }
            redirects.append(target)
            hop.url = target
            hop.bearerToken = request.bearerToken
        }
    }

    /// One request to one URL, no redirects followed.
    private func performOne(
        _ request: HTTPRequest,
        onHead: (HTTPResponseHead) throws -> Void,
        onBody: (UnsafeRawBufferPointer) throws -> Void
    ) throws(HTTPError) -> HTTPResponseHead {
        // One reference for the whole request, so that the URL parses in it do not load libcurl again.
        try library.using { _ throws(HTTPError) in try performLoaded(request, onHead: onHead, onBody: onBody) }
    }

    private func performLoaded(
        _ request: HTTPRequest,
        onHead: (HTTPResponseHead) throws -> Void,
        onBody: (UnsafeRawBufferPointer) throws -> Void
    ) throws(HTTPError) -> HTTPResponseHead {
        let target = try URLParts(request.url, library: library)
        if target.scheme == "file" {
            return try LocalFileReader.read(request, onHead: onHead, onBody: onBody, cancellation: cancellation)
        }
        if request.bearerToken != nil && target.scheme == "http" && !target.isLoopback {
            throw .insecureToken(host: target.host)
        }
        let (api, handle) = try open()
        cshim_curl_easy_reset(api, handle)
        return try withoutActuallyEscaping(onHead) { (onHead) throws(HTTPError) -> HTTPResponseHead in
            try withoutActuallyEscaping(onBody) { (onBody) throws(HTTPError) -> HTTPResponseHead in
                let context = TransferContext(api: api, handle: handle, maxBytes: request.maxBytes, cancellation: cancellation, onHead: onHead, onBody: onBody)
                context.decodesGzip = request.method != "HEAD" && GzipDecoder.isAvailable(api: api)
                return try run(request, target: target, context: context)
            }
        }
    }

    private func run(_ request: HTTPRequest, target: URLParts, context: TransferContext) throws(HTTPError) -> HTTPResponseHead {
        let api = context.api, handle = context.handle
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { cshim_curl_slist_free_all(api, headerList) }
        for (name, value) in request.headers {
            headerList = cshim_curl_slist_append(api, headerList, "\(name): \(value)")
        }
        // curl adds "Expect: 100-continue" to large uploads; servers like json-server do not answer it.
        headerList = cshim_curl_slist_append(api, headerList, "Expect:")
        // gzip is asked for and decoded here (GzipDecoder), so that a body cut before its trailer is refused.
        if context.decodesGzip { headerList = cshim_curl_slist_append(api, headerList, "Accept-Encoding: gzip") }
        var bodyReader = BodyReader(bytes: request.body ?? [])

        let code: CURLcode = withExtendedLifetime(context) {
            let opaque = Unmanaged.passUnretained(context).toOpaque()
            configure(request, target: target, headerList: headerList, context: opaque)
            return withUnsafeMutablePointer(to: &bodyReader) { reader in
                if request.body != nil {
                    _ = cshim_curl_setopt_readfn(api, handle, readCallback)
                    _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_READDATA, reader)
                    // libcurl rewinds the body when it must send it again (a reused connection found closed).
                    // Never for POST, which is not idempotent (RFC 9110 §9.2.2): a POST that may have reached
                    // the server fails instead, and its caller decides whether to send it again.
                    if request.method != "POST" {
                        _ = cshim_curl_setopt_seekfn(api, handle, seekCallback)
                        _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_SEEKDATA, reader)
                    }
                    _ = cshim_curl_setopt_off(api, handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body!.count))
                }
                return cshim_curl_easy_perform(api, handle)
            }
        }

        context.readStatus()
        let head = context.head
        if let error = context.consumerError { throw .rejected(error) }
        if context.overflow { throw .tooLarge(limit: request.maxBytes) }
        if let failure = context.decodingFailure { throw .transport(code: Int32(CURLE_BAD_CONTENT_ENCODING.rawValue), message: failure) }
        switch code {
        case CURLE_OK:
            if !context.headDelivered && !context.isRedirect {
                do { try context.onHead(head) } catch { throw .rejected(error) }
            }
            if let gunzip = context.gunzip, !gunzip.isComplete, !context.isRedirect {
                throw .transport(code: Int32(CURLE_PARTIAL_FILE.rawValue),
                                 message: "truncated body: the gzip-compressed response ended before its CRC-32 and length "
                                    + "trailer (\(context.received) bytes decoded)")
            }
            return head
        case CURLE_ABORTED_BY_CALLBACK:
            throw .cancelled
        case CURLE_FILESIZE_EXCEEDED:
            throw .tooLarge(limit: request.maxBytes)
        default:
            throw .transport(code: Int32(code.rawValue), message: describe(code, request: request, context: context))
        }
    }

    private func configure(_ request: HTTPRequest, target: URLParts, headerList: UnsafeMutablePointer<curl_slist>?, context: UnsafeMutableRawPointer) {
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        let api = transfer.api, handle = transfer.handle
        let timeoutMS = max(1, Int(request.timeout.components.seconds * 1000 + request.timeout.components.attoseconds / 1_000_000_000_000_000))
        _ = cshim_curl_setopt_str(api, handle, CURLOPT_URL, request.url)
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_NOSIGNAL, 1)
        _ = cshim_curl_setopt_str(api, handle, CURLOPT_USERAGENT, syncdUserAgent)
        _ = cshim_curl_setopt_slist(api, handle, CURLOPT_HTTPHEADER, headerList)
        // Without zlib from libcurl (GzipDecoder), libcurl decodes every encoding it knows, as it always did.
        if !transfer.decodesGzip { _ = cshim_curl_setopt_str(api, handle, CURLOPT_ACCEPT_ENCODING, "") }
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMS)
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_TIMEOUT_MS, timeoutMS)
        // A stall of the whole timeout aborts even before the total bound is reached.
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_LOW_SPEED_TIME, max(1, timeoutMS / 1000))
        // A HEAD answer has no body: its Content-Length announces the size of a GET and must not fail the
        // request (a reachability probe of a large listing is an answer, not an error).
        if request.method != "HEAD" {
            _ = cshim_curl_setopt_off(api, handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxBytes))
        }
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_SSL_VERIFYHOST, 2)
        // Redirects are followed by `perform`, one checked hop at a time (OriginPolicy), never by libcurl.
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_FOLLOWLOCATION, 0)
        // file: URLs are read by LocalFileReader, which refuses FIFOs and devices.
        _ = cshim_curl_setopt_str(api, handle, CURLOPT_PROTOCOLS_STR, "http,https")
        if let token = request.bearerToken {
            // `perform` removed the token unless OriginPolicy allows this URL to have it.
            _ = cshim_curl_setopt_long(api, handle, CURLOPT_HTTPAUTH, cshim_curlauth_bearer())
            _ = cshim_curl_setopt_str(api, handle, CURLOPT_XOAUTH2_BEARER, token)
        }
        switch request.method {
        case "GET": break
        case "HEAD": _ = cshim_curl_setopt_long(api, handle, CURLOPT_NOBODY, 1)
        case "PUT", "POST":
            _ = cshim_curl_setopt_long(api, handle, CURLOPT_UPLOAD, 1)
            _ = cshim_curl_setopt_str(api, handle, CURLOPT_CUSTOMREQUEST, request.method)
        default: _ = cshim_curl_setopt_str(api, handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        _ = cshim_curl_setopt_writefn(api, handle, writeCallback)
        _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_WRITEDATA, context)
        _ = cshim_curl_setopt_headerfn(api, handle, headerCallback)
        _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_HEADERDATA, context)
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_NOPROGRESS, 0)
        // 64 KiB reads from the socket instead of libcurl's 16 KiB: a quarter of the recvfrom and poll calls on
        // a large listing (100k first sync: about 3 ms and 4 ms of CPU less, docs/benchmarks.md, "Third pass").
        // The write callback still gets at most 16 KiB at a time (CURL_MAX_WRITE_SIZE). Set for every transfer:
        // `curl_easy_reset` above forgets it.
        _ = cshim_curl_setopt_long(api, handle, CURLOPT_BUFFERSIZE, 65536)
        _ = cshim_curl_setopt_xferinfofn(api, handle, progressCallback)
        _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_XFERINFODATA, context)
        _ = cshim_curl_setopt_ptr(api, handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
    }

    private func describe(_ code: CURLcode, request: HTTPRequest, context: TransferContext) -> String {
        let reason = context.detail ?? String(cString: cshim_curl_easy_strerror(context.api, code))
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            let doing = request.method == "GET" || request.method == "HEAD" ? "fetching" : "sending \(request.method) to"
            return "timed out after \(request.timeout) (TimeoutSec=) \(doing) \(request.url)"
        case CURLE_OUT_OF_MEMORY where !context.headDelivered:
            // libcurl refuses a header line over CURL_MAX_HTTP_HEADER (100 KiB) with this code, and its
            // message then says "Out of memory" (curl 7.88).
            return "the response from \(request.url) has a header larger than libcurl accepts (100 KiB for one header line): "
                + "the server, or a proxy in front of it, sends an oversized header; have it fixed there"
        case CURLE_PARTIAL_FILE:
            return "connection closed before the whole body arrived (\(context.received) bytes received)"
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return "cannot reach \(request.url): \(reason)"
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR:
            return "TLS verification failed for \(request.url): \(reason); the server's certificate must be trusted by the system store"
        default:
            return "\(reason) (curl code \(code.rawValue))"
        }
    }
}

/// A flag another thread sets to cancel a transfer.
public final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Creates a cleared flag.
    public init() {}
    /// Requests cancellation.
    public func cancel() { value.store(true, ordering: .relaxed) }
    /// Clears the flag before the next transfer.
    public func reset() { value.store(false, ordering: .relaxed) }
    /// True once cancellation was requested.
    public var isCancelled: Bool { value.load(ordering: .relaxed) }
}

/// State shared with libcurl's callbacks for one transfer.
final class TransferContext {
    let api: OpaquePointer
    let handle: UnsafeMutableRawPointer
    let maxBytes: Int64
    let cancellation: CancellationFlag
    let onHead: (HTTPResponseHead) throws -> Void
    let onBody: (UnsafeRawBufferPointer) throws -> Void
    var head = HTTPResponseHead()
    var headDelivered = false
    var received: Int64 = 0
    var overflow = false
    var consumerError: (any Error)?
    /// Whether syncd asked for gzip itself and decodes it (`GzipDecoder`), instead of libcurl.
    var decodesGzip = false
    /// The decoder of this response's gzip body, made at its first byte.
    var gunzip: GzipDecoder?
    /// Why the body could not be decoded (damaged gzip, an encoding syncd did not ask for).
    var decodingFailure: String?
    /// libcurl's detailed message for the last failure (CURLOPT_ERRORBUFFER, CURL_ERROR_SIZE bytes).
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)

    init(api: OpaquePointer, handle: UnsafeMutableRawPointer, maxBytes: Int64, cancellation: CancellationFlag, onHead: @escaping (HTTPResponseHead) throws -> Void, onBody: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.api = api
        self.handle = handle
        self.maxBytes = maxBytes
        self.cancellation = cancellation
        self.onHead = onHead
        self.onBody = onBody
        errorBuffer.initialize(repeating: 0, count: 256)
    }

    deinit { errorBuffer.deallocate() }

    /// The detailed message libcurl left, if any.
    var detail: String? {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? nil : text
    }

    /// Whether this response is a redirect that `HTTPClient.perform` will follow: its body is not the
    /// consumer's.
    var isRedirect: Bool {
        HTTPAnswer.redirect(status: head.status, method: "GET") != nil && head.header("location") != nil
    }

    /// Counts `chunk` of the (decoded) body against MaxBytes and hands it to the consumer; past MaxBytes, sets
    /// `overflow` instead.
    func deliver(_ chunk: UnsafeRawBufferPointer) throws {
        received += Int64(chunk.count)
        if received > maxBytes {
            overflow = true
            return
        }
        try onBody(chunk)
    }

    /// Hands the status and headers to the consumer before the first body byte.
    func deliverHead() throws {
        guard !headDelivered else { return }
        headDelivered = true
        readStatus()
        if isRedirect { return }
        try onHead(head)
    }

    /// Copies the status code and the URL that answered (after redirects) from libcurl into `head`.
    func readStatus() {
        var status = 0
        _ = cshim_curl_getinfo_long(api, handle, CURLINFO_RESPONSE_CODE, &status)
        head.status = status
        var effective: UnsafeMutablePointer<CChar>?
        if cshim_curl_getinfo_str(api, handle, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK, let effective {
            head.effectiveURL = String(cString: effective)
        }
    }
}

private func context(_ user: UnsafeMutableRawPointer?) -> TransferContext {
    Unmanaged<TransferContext>.fromOpaque(user!).takeUnretainedValue()
}

/// CURLOPT_WRITEFUNCTION: decodes a gzip body syncd asked for, counts against MaxBytes and hands the chunk on.
private let writeCallback: cshim_curl_data_cb = { pointer, size, count, user in
    let transfer = context(user)
    let length = size * count
    let chunk = UnsafeRawBufferPointer(start: pointer, count: length)
    do {
        try transfer.deliverHead()
        if transfer.isRedirect { return length }
        guard transfer.decodesGzip else {
            try transfer.deliver(chunk)
            return transfer.overflow ? cshim_curl_writefunc_error() : length
        }
        if transfer.gunzip == nil {
            let encoding = transfer.head.header("content-encoding")?.lowercased() ?? "identity"
            switch encoding {
            case "gzip", "x-gzip":
                guard let decoder = GzipDecoder(api: transfer.api) else {
                    transfer.decodingFailure = "Failed to decode the gzip-compressed body: zlib could not be initialised"
                    return cshim_curl_writefunc_error()
                }
                transfer.gunzip = decoder
            case "identity", "":
                try transfer.deliver(chunk)
                return transfer.overflow ? cshim_curl_writefunc_error() : length
            default:
                transfer.decodingFailure = "the server answered with Content-Encoding: \(encoding), which syncd did not ask for "
                    + "(it asks for gzip only); configure the server to send gzip or no encoding"
                return cshim_curl_writefunc_error()
            }
        }
        try transfer.gunzip?.feed(chunk) { decoded throws in
            try transfer.deliver(decoded)
            if transfer.overflow { throw BodyOverflow() }
        }
    } catch GzipDecoder.Failure.consumer(let error) {
        if !(error is BodyOverflow) { transfer.consumerError = error }
        return cshim_curl_writefunc_error()
    } catch GzipDecoder.Failure.damaged(let reason) {
        transfer.decodingFailure = "the gzip-compressed body is damaged (\(reason))"
        return cshim_curl_writefunc_error()
    } catch {
        transfer.consumerError = error
        return cshim_curl_writefunc_error()
    }
    return length
}

/// Stops decoding a gzip body past MaxBytes (`TransferContext.overflow` says why).
private struct BodyOverflow: Error {}

/// CURLOPT_HEADERFUNCTION: one header line per call; a status line starts a new response (redirects, 1xx).
private let headerCallback: cshim_curl_data_cb = { pointer, size, count, user in
    let transfer = context(user)
    let length = size * count
    guard let pointer else { return length }
    let line = String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        transfer.head.headers.removeAll()
        transfer.head.oversizedHeaders.removeAll()
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmed()
        // A value syncd might store or send back (ETag, Last-Modified, Location) is bounded here, once.
        if value.utf8.count > HTTPResponseHead.maxHeaderValueBytes {
            transfer.head.oversizedHeaders.append(String(name))
        } else if transfer.head.headers.count < 256 {
            transfer.head.headers.append((name: String(name), value: value))
        }
    }
    return length
}

/// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer with CURLE_ABORTED_BY_CALLBACK.
private let progressCallback: cshim_curl_xferinfo_cb = { user, _, _, _, _ in
    context(user).cancellation.isCancelled ? 1 : 0
}

/// CURLOPT_READFUNCTION: feeds the request body.
private let readCallback: cshim_curl_data_cb = { pointer, size, count, user in
    let reader = user!.assumingMemoryBound(to: BodyReader.self)
    return reader.pointee.read(into: pointer!, capacity: size * count)
}

/// CURLOPT_SEEKFUNCTION: rewinds the request body (CURL_SEEKFUNC_OK 0, CURL_SEEKFUNC_CANTSEEK 2).
private let seekCallback: cshim_curl_seek_cb = { user, offset, origin in
    let reader = user!.assumingMemoryBound(to: BodyReader.self)
    // SEEK_SET (0) is what libcurl asks for when it rewinds.
    guard origin == 0, offset >= 0, offset <= reader.pointee.bytes.count else { return 2 }
    reader.pointee.offset = Int(offset)
    return 0
}

/// The request body as libcurl reads it.
struct BodyReader {
    let bytes: [UInt8]
    var offset = 0
    init(bytes: [UInt8]) { self.bytes = bytes }
    mutating func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let n = min(capacity, bytes.count - offset)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
