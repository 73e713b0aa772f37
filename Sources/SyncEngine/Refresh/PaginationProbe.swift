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
        var status = 0
        // The start of the page, to say where the records are when they are not where RecordsPath= says.
        var start: [UInt8] = []
        let head: HTTPResponseHead
        let records: Int
        do {
            head = try client.perform(request, onHead: { status = $0.status }, onBody: { chunk in
                guard HTTPAnswer.carriesContent(status) else { return }
                if start.count < ListingFetcher.skeletonLimit { start += chunk.prefix(ListingFetcher.skeletonLimit - start.count) }
                skeleton.feed(chunk)
                try scanner.feed(chunk) { _ in }
            })
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
            return 0
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
            return 0
        }
        say("to fetch every page: \(first.advice)")
        return 0
    }
}
