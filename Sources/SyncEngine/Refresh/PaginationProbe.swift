import SyncCore
import SyncRemote

/// `syncd --probe SOURCE` (syncd(8)): fetches the first page of one configured source, as a refresh would,
/// and says what it saw — the status, the records on the page, every sign of more pages — and which
/// `Pagination=` settings fetch all of them. Nothing is stored.
public struct PaginationProbe {
    let source: SourceConfiguration
    let environment: [String: String]
    let transport: @Sendable () -> any HTTPTransport

    /// A probe of `source`; its token, if any, is read from `environment`'s `$CREDENTIALS_DIRECTORY`.
    /// Without a `transport` it talks HTTP through libcurl (`HTTPClient`).
    public init(source: SourceConfiguration, environment: [String: String],
                transport: @escaping @Sendable () -> any HTTPTransport = { HTTPClient() }) {
        self.source = source
        self.environment = environment
        self.transport = transport
    }

    /// Fetches the page; `print` gets each line of the report. Returns 0 when a listing page arrived and
    /// parsed, 1 when it did not (the reason printed).
    public func run(print: (String) -> Void) -> Int32 {
        func say(_ line: String) { print("\(source.name): \(Redaction.scrubbingURLs(in: line))") }
        say("GET \(source.url) (Pagination=\(source.pagination.rawValue)\(source.recordsPath.isEmpty ? "" : ", RecordsPath=\(source.recordsPathText)"))")
        let client = transport()
        defer { client.close() }
        var request = HTTPRequest(url: source.url)
        request.timeout = source.timeout
        request.maxBytes = source.maxBytes
        request.origins = source.originPolicy
        request.headers = source.headers.map { (name: $0.name, value: $0.value) }
        request.headers.append((name: "Accept", value: "application/json"))
        do {
            request.bearerToken = try source.bearerTokenCredential.map { name throws(RefreshFailure) in
                try Credentials.token(name, environment: environment)
            }
        } catch {
            say("cannot probe: \(error.message)")
            return 1
        }
        var scanner = RecordScanner(options: RecordScannerOptions(recordsPath: source.recordsPath, idField: source.idField,
                                                                  versionField: source.versionField))
        var skeleton = PageSkeleton(recordsPath: source.recordsPath, limit: ListingFetcher.skeletonLimit)
        // Delta=watermark: the change stamps of the page's records, to try the delta request with.
        var stamps: [JSONValue] = []
        let delta = source.delta
        // The start of the page, to say where the records are when they are not where RecordsPath= says.
        var start: [UInt8] = []
        let head: HTTPResponseHead
        let records: Int
        do {
            head = try perform(request, with: client) { chunk in
                if start.count < ListingFetcher.skeletonLimit { start += chunk.prefix(ListingFetcher.skeletonLimit - start.count) }
                skeleton.feed(chunk)
                try scanner.feed(chunk) { record in
                    if delta.mode == .watermark, let stamp = RecordMember.value(at: delta.field, in: record.bytes) { stamps.append(stamp) }
                }
            }
            guard head.isSuccess else {
                say("HTTP \(head.status): not a listing page; check URL= and the credentials, then probe again")
                return 1
            }
            records = try scanner.finish()
        } catch {
            say("cannot probe: \(error)")
            if let page = try? JSONValue(parsing: start), case let candidates = RecordsPathSuggestion.candidates(in: page),
               let path = candidates.first {
                let others = candidates.dropFirst()
                say("the page is an object whose records are at \(path)\(others.isEmpty ? "" : " (other arrays of objects: \(others.joined(separator: ", ")))"): "
                    + "set RecordsPath=\(path), then probe again")
            }
            return 1
        }
        say("HTTP \(head.status == 0 ? 200 : head.status), \(counted(records, "record")) on this page")
        // Every sign, whatever the source's mode: as if it followed none.
        var unpaged = source
        unpaged.pagination = .none
        let signals = PageSignals(linkHeaders: head.headerValues("link"), nextPageHeader: head.header("next-page"),
                                  contentRange: head.header("content-range"), document: skeleton.document)
            .unfollowed(by: unpaged, received: records)
        guard let first = signals.first else {
            say("no sign of more pages: the page looks like the whole collection; Pagination=none fits")
            return probeDelta(request, stamps: stamps, client: client, say: say)
        }
        for signal in signals { say("found \(signal.description)") }
        // The configured mode goes on to the next page when the page carries its own sign (page and offset go on
        // until a short page, whatever the page says); the other signs only matter on the last page.
        let followed = signals.contains { signal in
            switch (source.pagination, signal.kind) {
            case (.link, .linkHeader), (.header, .nextPageHeader), (.page, _), (.offset, _): return true
            case (.body, .nextMember(let pointer)): return pointer == source.nextPathText
            case (.cursor, .cursorMember(let pointer)): return pointer == source.cursorPathText
            default: return false
            }
        }
        if followed {
            say("Pagination=\(source.pagination.rawValue), as configured, follows \(signals.count == 1 ? "it" : "them"): the settings fit")
            return probeDelta(request, stamps: stamps, client: client, say: say)
        }
        say("to fetch every page: \(first.advice)")
        return probeDelta(request, stamps: stamps, client: client, say: say)
    }

    /// `Delta=watermark`: asks for the changes since the middle stamp of the page just read, which a server that
    /// filters as `DeltaQuery=` says answers with the page's records stamped above it, and no record below it
    /// (syncd.conf(5), "Incremental pull"). A parameter the server does not know may be taken for a filter on a
    /// field (an empty answer) or ignored (every record): both would leave the cache stale in silence. Returns 1
    /// when the answer shows one of them.
    private func probeDelta(_ template: HTTPRequest, stamps: [JSONValue], client: any HTTPTransport, say: (String) -> Void) -> Int32 {
        guard source.delta.mode == .watermark else { return 0 }
        let field = source.delta.fieldText
        // The page's distinct stamps, lowest first; the checkpoint is the middle one, so that records both above it
        // (which must come back) and below it (which must not) are known.
        var distinct: [JSONValue] = []
        for stamp in stamps where Self.text(of: stamp) != nil && !distinct.contains(where: { !Self.above($0, stamp) && !Self.above(stamp, $0) }) {
            distinct.append(stamp)
        }
        distinct.sort { Self.above($1, $0) }
        guard !distinct.isEmpty, case let lowest = distinct[(distinct.count - 1) / 2], let checkpoint = Self.text(of: lowest) else {
            say("delta: no record on this page has a stamp at DeltaField=\(field): point DeltaField= at the records' change stamp")
            return 1
        }
        let expected = stamps.filter { Self.above($0, lowest) }.count
        guard expected > 0 else {
            say("delta: DeltaQuery= was not tried: the records of this page share one stamp at DeltaField=\(field), so no record is "
                + "above any of them; probe again once records were changed, or try the delta URL by hand")
            return 0
        }
        var request = template
        request.url = DeltaPlan.requestURL(source, checkpoint: checkpoint)
        say("delta: GET \(request.url) (the middle stamp of this page as the checkpoint: \(expected) of the page's records \(expected == 1 ? "is" : "are") above it)")
        var scanner = RecordScanner(options: RecordScannerOptions(recordsPath: source.recordsPath, idField: source.idField))
        var received: [JSONValue?] = []
        do {
            let head = try perform(request, with: client) { chunk in
                try scanner.feed(chunk) { record in received.append(RecordMember.value(at: source.delta.field, in: record.bytes)) }
            }
            guard head.isSuccess else {
                say("delta: HTTP \(head.status): the server refused the delta request; check DeltaQuery=")
                return 1
            }
            _ = try scanner.finish()
        } catch {
            say("delta: cannot probe: \(error)")
            return 1
        }
        // Below the checkpoint: the filter was not applied. At it: a filter of "at or after" (updated__gte), harmless.
        let below = received.filter { stamp in stamp.map { Self.above(lowest, $0) } ?? false }.count
        let at = received.filter { stamp in stamp.map { !Self.above($0, lowest) && !Self.above(lowest, $0) } ?? false }.count
        if received.isEmpty {
            say("delta: no record came back although this page has records stamped above the checkpoint: the server may take a "
                + "parameter of DeltaQuery= it does not know for a filter; check DeltaQuery=")
            return 1
        }
        if below > 0 {
            say("delta: \(below) of \(counted(received.count, "record")) came back stamped below the checkpoint: the server "
                + "does not filter as DeltaQuery= asks; check DeltaQuery=")
            return 1
        }
        if at > 0 {
            say("delta: \(counted(received.count, "record")), \(at) of them stamped at the checkpoint and the others above it: DeltaQuery= "
                + "asks for changes at or after it, which brings those again each time (harmless)")
            return 0
        }
        say("delta: \(counted(received.count, "record")), all stamped above the checkpoint: DeltaQuery= filters as it should")
        return 0
    }

    /// Whether stamp `a` is above stamp `b` (`DeltaWatermark`'s order); false for stamps it cannot compare.
    static func above(_ a: JSONValue, _ b: JSONValue) -> Bool { DeltaWatermark.compare(a, b) == true }

    /// Performs `request`, handing `content` the body of an answer that carries one (an error's is dropped).
    private func perform(_ request: HTTPRequest, with client: any HTTPTransport,
                         content: (UnsafeRawBufferPointer) throws -> Void) throws -> HTTPResponseHead {
        var status = 0
        return try client.perform(request, onHead: { status = $0.status }, onBody: { chunk in
            guard HTTPAnswer.carriesContent(status) else { return }
            try content(chunk)
        })
    }

    /// A stamp's checkpoint text, nil for a value that cannot be one.
    static func text(of stamp: JSONValue) -> String? {
        var watermark = DeltaWatermark()
        guard (try? watermark.see(stamp)) != nil else { return nil }
        return watermark.checkpoint
    }
}
