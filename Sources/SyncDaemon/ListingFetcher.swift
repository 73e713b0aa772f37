import SyncCore
import SyncRemote
import SyncStore

/// Fetches a complete listing of one source — every page — validating it while it streams and staging
/// it in the store. The listing counts only when every page arrived and parsed (syncd(8) GUARANTEES 2).
final class ListingFetcher {
    private var totalBytes: Int64 = 0
    let source: SourceConfiguration
    let client: HTTPClient
    let store: StateStore
    let environment: [String: String]

    let token: String?

    init(source: SourceConfiguration, client: HTTPClient, store: StateStore, environment: [String: String], token: String?,
         progress: ((RefreshProgressCount) -> Void)? = nil) {
        self.token = token
        self.source = source
        self.client = client
        self.store = store
        self.environment = environment
        self.progress = progress
    }
    /// Called as data arrives (on the worker thread).
    var progress: ((RefreshProgressCount) -> Void)? = nil
    /// Upper bound on pages per listing: a server whose `next` links never end is refused, not followed forever.
    static let maxPages = 10_000

    /// What the server said.
    enum Result {
        /// A complete, valid listing is staged in `writer` (not yet committed).
        case listing(ListingWriter, etag: String?, lastModified: String?)
        /// 304 on the (only) page: the stored listing is current.
        case notModified
    }

    func fetch(previous: SourceState) throws(RefreshFailure) -> Result {
        // Validators are only meaningful for the URL they came from. A paginated listing is fetched
        // whole, unconditionally: a 304 for a page says nothing about the others, and not even about
        // the page's own Link header (RFC 9110 §15.4.5 does not make a 304 carry it), so a page that
        // stayed the same while a new page appeared after it would hide that page.
        let conditional = previous.url == source.url && source.pagination == .none
        var url = source.url
        var visited: Set<String> = []
        var writer: ListingWriter?
        var firstHead: HTTPResponseHead?
        for page in 1...ListingFetcher.maxPages {
            guard visited.insert(url).inserted else {
                writer?.rollback()
                throw RefreshFailure(.permanent, "page \(page) links back to \(url), which was already fetched; the listing never ends")
            }
            // MaxBytes bounds the whole listing, all pages together (syncd(8) GUARANTEES 2).
            let remaining = source.maxBytes - totalBytes
            guard remaining > 0 else {
                writer?.rollback()
                throw RefreshFailure(.permanent, "the listing is larger than MaxBytes=\(source.maxBytes) bytes "
                                     + "after \(page - 1) pages (MaxBytes counts all pages together)")
            }
            var request = HTTPRequest(url: url)
            request.timeout = source.timeout
            request.maxBytes = remaining
            request.bearerToken = token
            request.headers = source.headers.map { (name: $0.name, value: $0.value) }
            request.headers.append((name: "Accept", value: "application/json"))
            if page == 1 && conditional {
                if let etag = previous.etag { request.headers.append((name: "If-None-Match", value: etag)) }
                if let lastModified = previous.lastModified { request.headers.append((name: "If-Modified-Since", value: lastModified)) }
            }
            let pageResult = try fetchPage(request, page: page, writer: &writer)
            switch pageResult {
            case .notModified:
                writer?.rollback()
                return .notModified
            case .page(let head):
                if page == 1 { firstHead = head }
                guard source.pagination == .link, let next = LinkHeader.nextTarget(in: head.headerValues("link")) else {
                    guard let writer else { throw RefreshFailure(.permanent, "no listing received") }
                    // A paginated listing has no validator of its own: page 1's stands for page 1 only.
                    guard source.pagination == .none else { return .listing(writer, etag: nil, lastModified: nil) }
                    return .listing(writer, etag: firstHead?.header("etag"), lastModified: firstHead?.header("last-modified"))
                }
                guard let resolved = resolveURL(next, against: head.effectiveURL.isEmpty ? url : head.effectiveURL) else {
                    writer?.rollback()
                    throw RefreshFailure(.permanent, "page \(page) has an invalid next link <\(next)>")
                }
                url = resolved
            }
        }
        writer?.rollback()
        throw RefreshFailure(.permanent, "listing has more than \(ListingFetcher.maxPages) pages")
    }

    private enum PageResult {
        case page(HTTPResponseHead)
        case notModified
    }

    /// Fetches one page and streams its records into `writer` (begun at the first successful page).
    private func fetchPage(_ request: HTTPRequest, page: Int, writer: inout ListingWriter?) throws(RefreshFailure) -> PageResult {
        var counted = RefreshProgressCount(pages: Int64(page), bytes: totalBytes, records: 0)
        defer { totalBytes = counted.bytes }
        let options = RecordScannerOptions(recordsPath: source.recordsPath, idField: source.idField, versionField: source.versionField)
        var scanner = RecordScanner(options: options)
        var errorBody: [UInt8] = []
        var status = 0
        var stagedWriter = writer
        let where_ = page > 1 ? "page \(page): " : ""
            do {
            let head = try client.perform(request, onHead: { head in
                status = head.status
                if head.isSuccess && stagedWriter == nil {
                    stagedWriter = try store.beginListing(source: source.name)
                }
            }, onBody: { chunk in
                guard (status == 0 || (200..<300).contains(status)), let target = stagedWriter else {
                    // Keep the start of an error body for the message; the rest is discarded.
                    if errorBody.count < 512 { errorBody += chunk.prefix(512 - errorBody.count) }
                    return
                }
                try scanner.feed(chunk) { record in
                    try target.add(id: record.id.key, idIsInteger: record.id.kind == .integer, version: record.version, body: record.bytes)
                }
                counted.bytes += Int64(chunk.count)
                counted.records = Int64(target.count)
                counted.pages = Int64(page)
                progress?(counted)
            })
            writer = stagedWriter
            if head.status == 304 {
                return .notModified
            }
            guard head.isSuccess else {
                throw failure(forStatus: head.status, head: head, body: errorBody, prefix: where_)
            }
            _ = try scanner.finish()
            return .page(head)
        } catch let error as HTTPError {
            writer = stagedWriter
            writer?.rollback()
            throw classify(error, prefix: where_)
        } catch let error as RefreshFailure {
            writer = stagedWriter
            writer?.rollback()
            throw error
        } catch let error as JSONScanError {
            writer = stagedWriter
            writer?.rollback()
            throw RefreshFailure(.permanent, "\(where_)response rejected: \(error)")
        } catch {
            writer = stagedWriter
            writer?.rollback()
            throw RefreshFailure(.permanent, "\(where_)\(error)")
        }
    }

    private func classify(_ error: HTTPError, prefix: String) -> RefreshFailure {
        switch error {
        case .rejected(let inner as JSONScanError):
            return RefreshFailure(.permanent, "\(prefix)response rejected: \(inner)")
        case .rejected(let inner as StoreError):
            return storeFailure(inner, prefix: prefix)
        case .rejected(let inner as RefreshFailure):
            return inner
        case .rejected(let inner):
            return RefreshFailure(.permanent, "\(prefix)response rejected: \(inner)")
        case .tooLarge where source.pagination == .link:
            return RefreshFailure(.permanent, "\(prefix)the listing is larger than MaxBytes=\(source.maxBytes) bytes "
                                  + "(MaxBytes counts all pages together)")
        case .tooLarge:
            return RefreshFailure(.permanent, "\(prefix)\(error)")
        case .cancelled:
            return RefreshFailure(.cancelled, "cancelled")
        case .insecureToken, .invalidURL:
            return RefreshFailure(.permanent, "\(prefix)\(error)")
        case .transport:
            return RefreshFailure(.transient, "\(prefix)\(error)")
        }
    }

    private func failure(forStatus status: Int, head: HTTPResponseHead, body: [UInt8], prefix: String) -> RefreshFailure {
        let snippet = ErrorSnippet.text(body)
        let detail = snippet.isEmpty ? "" : ": \(snippet)"
        let retryAfter = head.header("retry-after")
        switch status {
        case 401, 403:
            return RefreshFailure(.permanent, "\(prefix)HTTP \(status) from \(head.effectiveURL): check the credentials (BearerTokenCredential=)\(detail)", status: status)
        case 404:
            return RefreshFailure(.permanent, "\(prefix)HTTP 404 from \(head.effectiveURL): check URL=\(detail)", status: status)
        case 408, 429, 500...599:
            return RefreshFailure(.transient, "\(prefix)HTTP \(status) from \(head.effectiveURL)\(detail)", status: status, retryAfter: retryAfter)
        default:
            return RefreshFailure(.permanent, "\(prefix)HTTP \(status) from \(head.effectiveURL)\(detail)", status: status, retryAfter: retryAfter)
        }
    }
}

/// A failure from the store, classified: a full or read-only disk may clear, a refused listing will not.
func storeFailure(_ error: StoreError, prefix: String = "") -> RefreshFailure {
    switch error {
    case .duplicateID, .emptyListingRefused:
        return RefreshFailure(.permanent, "\(prefix)response rejected: \(error)")
    case .sqlite, .corrupt:
        return RefreshFailure(.transient, "\(prefix)\(error)")
    }
}

/// The printable start of an error body, on one line, for messages.
enum ErrorSnippet {
    static func text(_ body: [UInt8], limit: Int = 120) -> String {
        var text = String(decoding: body.prefix(limit * 2), as: UTF8.self)
        text = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter { $0 != "\u{FFFD}" })
        while text.contains("  ") { text = text.replacingOccurrences("  ", " ") }
        text = text.trimmed()
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

/// How far a refresh got: pages started, body bytes received, records staged.
public struct RefreshProgressCount: Sendable, Equatable {
    public var pages: Int64
    public var bytes: Int64
    public var records: Int64
}
