import SyncCore
import SyncRemote
import SyncStore

/// Fetches a complete listing of one source — every page — validating it while it streams and staging
/// it in the store. The listing counts only when every page arrived and parsed (syncd(8) GUARANTEES 2).
final class ListingFetcher {
    private var totalBytes: Int64 = 0
    let source: SourceConfiguration
    let client: any HTTPTransport
    /// The engine's clocks: the listing's deadline is on the boot clock.
    let clocks: EngineClock
    let store: StateStore
    let environment: [String: String]

    let token: String?

    init(source: SourceConfiguration, client: any HTTPTransport, clocks: EngineClock, store: StateStore,
         environment: [String: String], token: String?, progress: ((RefreshProgressCount) -> Void)? = nil) {
        self.clocks = clocks
        self.token = token
        self.source = source
        self.client = client
        self.store = store
        self.environment = environment
        self.progress = progress
    }
    /// Called as data arrives (on the worker thread).
    var progress: ((RefreshProgressCount) -> Void)? = nil
    /// The most bytes of a page's members besides its records (`PageSkeleton`) that are kept to read its
    /// paging members (a next page, a total, `has_more`) and to find more data it does not follow.
    static let skeletonLimit = 4 << 20
    /// Things worth a warning that did not fail the listing (a validator too large to keep); the engine
    /// logs each once per source and shows it in the status.
    var notices: [SourceNotice] = []
    /// `Pagination=page` and `offset`: where the listing stands (set by `fetch`).
    var numberedPages: NumberedPages?
    /// When this refresh saves the listing (RFC 3339): the new cache file's `savedAt`.
    var savedAt: String?
    /// When the whole refresh must end (ListingTimeoutSec= after it began, its push included); nil: that long
    /// after the listing begins.
    var deadline: Duration?
    /// The engine's wording and kind for a cache file that could not be written while the listing streamed
    /// into it (`SyncEngine.cacheFileFailure`: a local failure, retried until it clears, with advice on a
    /// full disk); nil for another store error, which `storeFailure` classifies.
    var cacheFileFailure: ((StoreError) -> RefreshFailure?)?
    /// How many pages the last `fetch` received.
    private(set) var pagesFetched = 0
    /// What `fetch` asks for: the whole listing, or the changes since a checkpoint (syncd.conf(5), "Incremental
    /// pull"); set before `fetch`.
    var asking: Asking = .listing
    /// `Delta=watermark`: the highest `DeltaField=` value of the records received, from the stored checkpoint on
    /// for a delta (set before `fetch`).
    var watermark: DeltaWatermark?
    /// `Delta=watermark`, a full listing: the highest stamp of its first page, its checkpoint. A record changed or
    /// removed on the server after the first page was served gets a higher stamp than any the first page holds, so
    /// the next delta brings it, wherever the listing had read it (docs/architecture.md, "Incremental pull").
    var firstPageWatermark: DeltaWatermark?
    /// The members besides the records of the last page received (`PageSkeleton`): `Delta=token` reads the next
    /// checkpoint there.
    private(set) var lastDocument: JSONValue?
    /// The URL paging starts from and cursors and page numbers are set on: `URL=`, a delta request's, or the one a
    /// listing resumed by watermark continues at.
    var baseURL: String { if case .delta(let url, _) = asking { url } else { resumedBase ?? source.url } }
    /// A listing that can resume stages its pages; one that resumes replays the staged ones first (set before
    /// `fetch`; ListingFetcher+Resume).
    var resumePlan: ResumePlan?
    /// A resumed listing: the hashes of the IDs replayed (a record received again is skipped).
    var replayedIDs: Set<UInt64>?
    /// A listing resumed by watermark: the delta request it continues with, which its pages are numbered from.
    private(set) var resumedBase: String?
    var resumedByWatermark = false
    /// A resumed listing: the records it replayed, and those received again and skipped.
    var resumedAtRecord: Int?
    /// The server refused where the resumed listing continues, and its staged pages went (`refusedResume`).
    var resumeRefused = false
    var skippedAfterResume = 0

    /// What a fetch asks the server for.
    enum Asking: Equatable {
        /// The whole listing, from `URL=`.
        case listing
        /// What changed since `checkpoint`, from `url` (`DeltaPlan.requestURL`).
        case delta(url: String, checkpoint: String)
    }

    /// What the server said.
    enum Result {
        /// A complete, valid listing is staged in `writer` (not yet committed).
        case listing(ListingWriter, etag: String?, lastModified: String?)
        /// 304 on the (only) page: the stored listing is current.
        case notModified
        /// The changes since the checkpoint, every page received and validated (not yet applied).
        case delta(DeltaCollector)
        /// The server refused the checkpoint as too old (a `DeltaExpired=` status): a full listing follows.
        case expired(status: Int)
    }

    func fetch(previous: SourceState) throws(RefreshFailure) -> Result {
        // Validators are only meaningful for the URL they came from. A paginated listing is fetched
        // whole, unconditionally: a 304 for a page says nothing about the others, and not even about
        // the page's own Link header (RFC 9110 §15.4.5 does not make a 304 carry it), so a page that
        // stayed the same while a new page appeared after it would hide that page.
        let conditional = asking == .listing && previous.url == source.url && source.pagination == .none
        let policy = source.originPolicy
        // The refresh's deadline (time since boot), which its push used part of (`RefreshDeadline`), else the listing's own.
        let deadline = self.deadline ?? clocks.sinceBoot() + source.listingTimeout
        var visited: Set<String> = []
        var writer: ListingWriter?
        var firstHead: HTTPResponseHead?
        var received = 0
        var firstPage = 1
        var url = baseURL
        if asking == .listing, let plan = resumePlan, let point = plan.point {
            // The staged pages go into the writer first; the server is asked for the rest only.
            url = try replay(point, plan: plan, into: &writer)
            if plan.staging.method == .watermark { resumedBase = url }
            firstPage = point.pages + 1
            totalBytes = point.bytes
            // A total counts the records of the requests this listing follows: a watermark's delta has its own.
            received = plan.staging.method == .nextPage ? point.keep : 0
        }
        var paging = source
        paging.url = baseURL
        numberedPages = NumberedPages(source: paging)
        let collector = asking == .listing ? nil : DeltaCollector(source: source, watermark: watermark)
        for page in stride(from: firstPage, through: source.maxPages, by: 1) {
            guard visited.insert(url).inserted else {
                writer?.rollback()
                throw RefreshFailure(.permanent, "page \(page) links back to \(url), which was already fetched; the listing never ends",
                                     publicMessage: "page \(page) links back to a page already fetched; the listing never ends")
            }
            if case .refused(let reason) = policy.decide(url) {
                writer?.rollback()
                // The URL is the server's (a next-page link): callers outside ControlGroup= are not shown it.
                throw RefreshFailure(.permanent, "page \(page): refusing to request \(reason)",
                                     publicMessage: "page \(page): \(HTTPError.refusedOrigin(reason).publicDescription)")
            }
            // MaxBytes bounds the whole listing, all pages together (syncd(8) GUARANTEES 2).
            let remaining = source.maxBytes - totalBytes
            guard remaining > 0 else {
                writer?.rollback()
                throw RefreshFailure(.permanent, "the listing is larger than MaxBytes=\(source.maxBytes) bytes "
                                     + "after \(page - 1) pages (MaxBytes counts all pages together)")
            }
            // ListingTimeoutSec bounds all pages together; TimeoutSec each request.
            let left = deadline - clocks.sinceBoot()
            guard left > .zero else {
                writer?.rollback()
                throw RefreshFailure(.transient, "the listing took longer than ListingTimeoutSec=\(source.listingTimeout) "
                                     + "after \(page - 1) pages; raise it if the server is just slow")
            }
            var request = HTTPRequest(url: url)
            request.timeout = min(source.timeout, left)
            request.maxBytes = remaining
            request.bearerToken = token
            request.origins = policy
            request.headers = source.headers.map { (name: $0.name, value: $0.value) }
            request.headers.append((name: "Accept", value: "application/json"))
            if page == 1 && conditional {
                if let etag = previous.etag { request.headers.append((name: "If-None-Match", value: etag)) }
                if let lastModified = previous.lastModified { request.headers.append((name: "If-Modified-Since", value: lastModified)) }
            }
            let pageResult: PageResult
            do {
                pageResult = try fetchPage(request, page: page, writer: &writer, collector: collector)
            } catch where error.kind == .transient && request.timeout < source.timeout && deadline - clocks.sinceBoot() < .milliseconds(100) {
                // The page's timeout was cut short by the listing's deadline: say which limit struck.
                throw RefreshFailure(.transient, "the listing took longer than ListingTimeoutSec=\(source.listingTimeout) "
                                     + "after \(page - 1) pages; raise it if the server is just slow")
            } catch where page == firstPage && resumedAtRecord != nil && rejectsPosition(error) {
                // The server refused where the staged listing continues (a cursor it forgot): retrying there cannot help.
                throw refusedResume(error)
            }
            switch pageResult {
            case .expired(let status):
                return .expired(status: status)
            case .notModified(let head):
                writer?.rollback()
                // The stored listing's first page is unchanged, but its headers may say the collection has
                // grown past it (a Link or Next-Page header, a Content-Range with more).
                try requireComplete(head: head, document: nil, page: 1, received: previous.recordCount)
                return .notModified
            case .page(let head, let document, let records):
                pagesFetched = page
                received += records
                if page == 1 {
                    firstHead = head
                    firstPageWatermark = watermark
                }
                let pageURL = head.effectiveURL.isEmpty ? url : head.effectiveURL
                let next: String?
                do {
                    next = try nextPage(head: head, document: document, pageURL: pageURL, page: page, records: records)
                    // The last page: whatever Pagination= says, more data it names fails the listing (never a
                    // green "synced" for part of a collection).
                    if next == nil { try requireComplete(head: head, document: document, page: page, received: received) }
                    if let next { try stage(page: page, next: next, bytes: totalBytes) }
                } catch {
                    writer?.rollback()
                    throw error
                }
                guard let next else {
                    lastDocument = document
                    if collector == nil { finishStaging() }
                    if let collector {
                        watermark = collector.watermark
                        return .delta(collector)
                    }
                    guard let writer else { throw RefreshFailure(.permanent, "no listing received") }
                    // A paginated listing has no validator of its own: page 1's stands for page 1 only.
                    guard source.pagination == .none else { return .listing(writer, etag: nil, lastModified: nil) }
                    return .listing(writer, etag: firstHead?.header("etag"), lastModified: firstHead?.header("last-modified"))
                }
                url = next
            }
        }
        writer?.rollback()
        throw RefreshFailure(.permanent, "the listing has more than MaxPages=\(source.maxPages) pages; raise MaxPages= if that is right")
    }

    private enum PageResult {
        /// A page of `records` records; `document` is the page without its records (`PageSkeleton`), nil when
        /// that was larger than `skeletonLimit` or is not an object.
        case page(HTTPResponseHead, document: JSONValue?, records: Int)
        case notModified(HTTPResponseHead)
        /// A `DeltaExpired=` status answered a delta request.
        case expired(Int)
    }

    /// Fetches one page and streams its records into `writer` (begun at the first successful page).
    /// A delta's records go to `collector` instead (`asking` is `.delta`).
    private func fetchPage(_ request: HTTPRequest, page: Int, writer: inout ListingWriter?, collector: DeltaCollector?) throws(RefreshFailure) -> PageResult {
        var counted = RefreshProgressCount(pages: Int64(page), bytes: totalBytes, records: 0)
        defer { totalBytes = counted.bytes }
        let options = RecordScannerOptions(recordsPath: source.recordsPath, idField: source.idField, versionField: source.versionField,
                                           maxRecordBytes: Int(clamping: source.maxRecordBytes))
        var scanner = RecordScanner(options: options)
        var errorBody: [UInt8] = []
        var status = 0
        var stagedWriter = writer
        let where_ = page > 1 ? "page \(page): " : ""
        // The page without its records: where the next page is, the total, has_more, and more data not followed.
        // A page that is the records array has no other members: nothing to keep.
        var skeleton = source.recordsPath.isEmpty ? nil : PageSkeleton(recordsPath: source.recordsPath, limit: ListingFetcher.skeletonLimit)
        // Records go to the writer on a second thread; the writer is this thread's again after `drain`.
        var pipeline: RecordPipeline?
        var recordsBefore = 0
            do {
            defer { pipeline?.drain() }
            let head = try client.perform(request, onHead: { head in
                status = head.status
                if head.isSuccess && stagedWriter == nil && collector == nil {
                    // Page 1's validator stands for an unpaginated listing only (see `fetch`).
                    let etag = page == 1 && source.pagination == .none ? head.header("etag") : nil
                    stagedWriter = try store.beginListing(source: source.name, header: CacheHeader(savedAt: savedAt, etag: etag))
                }
            }, onBody: { chunk in
                guard HTTPAnswer.carriesContent(status), collector != nil || stagedWriter != nil else {
                    // Keep the start of an error body for the message; the rest is discarded.
                    if errorBody.count < 512 { errorBody += chunk.prefix(512 - errorBody.count) }
                    return
                }
                skeleton?.feed(chunk)
                let total: Int
                if let collector {
                    // A delta's records are collected, not written: nothing is applied before its last page.
                    try scanner.feed(chunk) { record in try collector.add(record) }
                    total = collector.received
                } else if let target = stagedWriter {
                    let records: RecordPipeline
                    if let pipeline {
                        records = pipeline
                    } else {
                        recordsBefore = target.count
                        records = RecordPipeline(writer: target)
                        pipeline = records
                    }
                    if let staging = resumePlan?.staging {
                        // A listing that can resume keeps each record's bytes for its page's staging, and one that
                        // resumed leaves out what it replayed already.
                        try scanner.feed(chunk) { record in
                            if skipsAfterResume(record) { return }
                            if watermark != nil {
                                _ = try DeltaStamp.take(record, of: "listing", source: source, readingTombstones: false, into: &watermark)
                            }
                            staging.take(record, field: source.delta.field)
                            try records.add(record)
                        }
                    } else if watermark != nil {
                        try scanner.feed(chunk) { record in
                            _ = try DeltaStamp.take(record, of: "listing", source: source, readingTombstones: false, into: &watermark)
                            try records.add(record)
                        }
                    } else {
                        try scanner.feed(chunk) { record in try records.add(record) }
                    }
                    total = recordsBefore + records.count
                } else {
                    return
                }
                counted.bytes += Int64(chunk.count)
                counted.records = Int64(total)
                counted.pages = Int64(page)
                progress?(counted)
            })
            writer = stagedWriter
            if collector != nil && source.delta.expiredStatuses.contains(head.status) { return .expired(head.status) }
            switch HTTPAnswer(status: head.status, answering: .listingPage) {
            case .notModified: return .notModified(head)
            case .success: break
            default:
                throw failure(forStatus: head.status, head: head, body: errorBody, prefix: where_)
            }
            let records = try scanner.finish()
            try pipeline?.finish()
            for name in head.oversizedHeaders where name == "etag" || name == "last-modified" {
                notices.append(SourceNotice(ownWords: "the server's \(name == "etag" ? "ETag" : "Last-Modified") is longer than "
                               + "\(HTTPResponseHead.maxHeaderValueBytes) bytes; it is not stored, so refreshes are not conditional"))
            }
            if skeleton?.overflowed == true, readsPagingMembers || source.delta.mode == .token {
                throw RefreshFailure(.permanent, "\(where_)the page's members besides its records are larger than \(ListingFetcher.skeletonLimit >> 20) MiB; "
                                     + "with Pagination=\(source.pagination.rawValue) they are read to find the next page")
            }
            return .page(head, document: skeleton?.document, records: records)
        } catch {
            // Whatever failed, the page's staged records go: the previous listing stays as it was.
            writer = stagedWriter
            writer?.rollback()
            throw pageFailure(error, prefix: where_)
        }
    }

    /// What a page's failure means for the refresh: an HTTP transfer's error, the scanner's or the store's
    /// refusal, or a failure already worded.
    private func pageFailure(_ error: any Error, prefix: String) -> RefreshFailure {
        switch error {
        case let error as HTTPError: return failure(from: error, prefix: prefix)
        case let error as RefreshFailure: return error
        case let error as JSONScanError: return rejection(error, prefix: prefix)
        // The record pipeline's writer failed (reported at `finish`, or by `add` after the fact).
        case let error as StoreError: return fromStore(error, prefix: prefix)
        default: return RefreshFailure(.permanent, "\(prefix)\(error)")
        }
    }

    /// A listing the scanner refused; a record larger than MaxRecordBytes= says what to do.
    private func rejection(_ error: JSONScanError, prefix: String) -> RefreshFailure {
        guard case .recordTooLarge(let index, _) = error.kind else { return RefreshFailure(.permanent, "\(prefix)response rejected: \(error)") }
        return RefreshFailure(.permanent, "\(prefix)response rejected: record \(index) of the listing is larger than MaxRecordBytes=\(source.maxRecordBytes) "
            + "bytes (found at byte \(error.offset)); syncctl get and the List call could not return it, so the listing is not stored and "
            + "the previous copy stays: " + (source.maxRecordBytes < SourceConfiguration.maxServableRecordBytes
                ? "raise MaxRecordBytes= (up to 32M) or ask the server for smaller records"
                : "ask the server for smaller records (32 MiB is the most syncd serves)"))
    }

    /// A transfer's error as the refresh's failure.
    private func failure(from error: HTTPError, prefix: String) -> RefreshFailure {
        switch error {
        case .rejected(let inner as JSONScanError):
            return rejection(inner, prefix: prefix)
        case .rejected(let inner as StoreError):
            return fromStore(inner, prefix: prefix)
        case .rejected(let inner as RefreshFailure):
            return inner
        case .rejected(let inner):
            return RefreshFailure(.permanent, "\(prefix)response rejected: \(inner)")
        case .tooLarge where source.pagination != .none:
            return RefreshFailure(.permanent, "\(prefix)the listing is larger than MaxBytes=\(source.maxBytes) bytes "
                                  + "(MaxBytes counts all pages together)")
        case .tooLarge:
            return RefreshFailure(.permanent, "\(prefix)\(error)")
        case .cancelled:
            return RefreshFailure(.cancelled, "cancelled")
        case .insecureToken, .invalidURL, .refusedOrigin, .notRegularFile:
            return RefreshFailure(.permanent, "\(prefix)\(error)", publicMessage: "\(prefix)\(error.publicDescription)")
        case .transport:
            return RefreshFailure(.transient, "\(prefix)\(error)", publicMessage: "\(prefix)\(error.publicDescription)")
        }
    }

    /// A store error while the listing streams in: a cache-file write failure is the engine's local failure
    /// (`cacheFileFailure`), any other one `storeFailure` classifies. Whichever thread hit it (the transfer's,
    /// or the record pipeline's, reported later), the same rule.
    private func fromStore(_ error: StoreError, prefix: String) -> RefreshFailure {
        cacheFileFailure?(error) ?? storeFailure(error, prefix: prefix)
    }

    /// An HTTP error status as a failure: the status line and what to check, then the start of the body,
    /// redacted, which callers outside ControlGroup= never see (`RefreshFailure.publicMessage`).
    private func failure(forStatus status: Int, head: HTTPResponseHead, body: [UInt8], prefix: String) -> RefreshFailure {
        let redaction = Redaction(source: source, token: token)
        let excerpt = ErrorSnippet.text(body, redaction: redaction)
        let from = redaction.redacting(head.effectiveURL)
        // A path the server gave (a redirect's target, a next-page link) is its own words: callers outside
        // ControlGroup= get only the origin. Query values are hidden from them anyway (Redaction).
        let sameResource = head.effectiveURL.prefix { $0 != "?" && $0 != "#" } == source.url.prefix { $0 != "?" && $0 != "#" }
        let publicFrom = sameResource ? nil
            : (URLOrigin(url: head.effectiveURL).map { "\($0)" } ?? "the server") + " (a URL the server redirected or linked to)"
        let retryAfter = head.header("retry-after")
        func failure(_ kind: RefreshFailure.Kind, retryAfter: String? = nil, _ summary: (String) -> String) -> RefreshFailure {
            RefreshFailure(kind, summary(from), excerpt: excerpt, publicSummary: publicFrom.map(summary), status: status, retryAfter: retryAfter)
        }
        switch HTTPAnswer(status: status, answering: .listingPage) {
        case .credentials:
            return failure(.permanent) { "\(prefix)HTTP \(status) from \($0): check the credentials (BearerTokenCredential=)" }
        case .notFound:
            return failure(.permanent) { "\(prefix)HTTP 404 from \($0): check URL=" }
        case .serverTrouble, .recordTrouble:
            return failure(.transient, retryAfter: retryAfter) { "\(prefix)HTTP \(status) from \($0)" }
        case .success, .notModified, .seeOther, .conflict, .refused:
            return failure(.permanent, retryAfter: retryAfter) { "\(prefix)HTTP \(status) from \($0)" }
        }
    }
}

/// A failure from the store, classified: a full or read-only disk may clear, a refused listing will not.
func storeFailure(_ error: StoreError, prefix: String = "") -> RefreshFailure {
    switch error {
    case .duplicateID, .emptyListingRefused:
        return RefreshFailure(.permanent, "\(prefix)response rejected: \(error)")
    case .sqlite, .corrupt, .cacheFileWrite, .cacheFileNotFlushed, .cacheFileMismatch:
        return RefreshFailure(.transient, "\(prefix)\(error)")
    }
}

/// The printable start of an error body, on one line, for messages: `redaction` applied before it is cut
/// (a secret cut in two is hidden too), control bytes kept for the output to escape (the log, syncctl).
enum ErrorSnippet {
    static func text(_ body: [UInt8], limit: Int = 120, redaction: Redaction) -> String {
        var text = String(decoding: body.prefix(limit * 2), as: UTF8.self)
        text = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter { $0 != "\u{FFFD}" })
        while text.contains("  ") { text = text.replacingEvery("  ", with: " ") }
        text = redaction.redacting(text.trimmed())
        guard text.count > limit else { return redaction.redactingCut(text) }
        return redaction.redactingCut(String(text.prefix(limit))) + "…"
    }
}


/// How far a refresh got: pages started, body bytes received, records staged.
public struct RefreshProgressCount: Sendable, Equatable {
    public var pages: Int64
    public var bytes: Int64
    public var records: Int64
}
