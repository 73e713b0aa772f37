// Nothing cut short in silence (syncd.conf(5), "Pagination="): whatever the mode, a page that says the
// server has more than syncd received makes the refresh incomplete. This finds those signs in a page.

/// One sign in a page that the listing goes on beyond what syncd received: a header or a member naming a next
/// page, a `has_more`, a total larger than the records received, a `Content-Range` with more.
public struct MoreDataSignal: Sendable, Equatable {
    /// What the page said.
    public enum Kind: Sendable, Equatable {
        /// `Link: <…>; rel="next"` (RFC 8288).
        case linkHeader
        /// A `Next-Page` header (Kinto).
        case nextPageHeader
        /// A non-empty next page URL in the body, at this JSON pointer.
        case nextMember(String)
        /// A non-empty token for the next page in the body, at this JSON pointer.
        case cursorMember(String)
        /// `true` at this JSON pointer (`has_more`).
        case hasMore(String)
        /// A record count at this JSON pointer, larger than the records received.
        case total(String, count: Int64)
        /// `Content-Range: <unit> first-last/total` with records after `last`.
        case contentRange(first: Int64, last: Int64, total: Int64)
    }

    /// What the page said.
    public var kind: Kind

    /// Creates a signal.
    public init(_ kind: Kind) { self.kind = kind }

    /// The signal in words, after "the response has": `a Link: rel="next" header`, `a next page at /next`.
    /// Only syncd's words and numbers: nothing the server wrote is quoted.
    public var description: String {
        switch kind {
        case .linkHeader: return "a Link: rel=\"next\" header"
        case .nextPageHeader: return "a Next-Page header"
        case .nextMember(let pointer): return "a next page at \(pointer)"
        case .cursorMember(let pointer): return "a next page's cursor at \(pointer)"
        case .hasMore(let pointer): return "\(pointer) true"
        case .total(let pointer, let count): return "a total of \(count) at \(pointer)"
        case .contentRange(let first, let last, let total): return "a Content-Range of items \(first)-\(last) of \(total)"
        }
    }

    /// The settings that follow what the signal names.
    public var advice: String {
        switch kind {
        case .linkHeader: return "set Pagination=link"
        case .nextPageHeader: return "set Pagination=header"
        case .nextMember(let pointer): return "set Pagination=body and NextPath=\(pointer)"
        case .cursorMember(let pointer):
            return "set Pagination=cursor, CursorPath=\(pointer) and CursorParameter= to the query parameter the server reads it from"
        case .hasMore(let pointer):
            return "set Pagination= to the way the server pages ('syncd --probe' shows what it sends) and HasMorePath=\(pointer)"
        case .total(let pointer, _): return "set Pagination=page or Pagination=offset, with TotalPath=\(pointer)"
        case .contentRange: return "set Pagination=offset"
        }
    }

    /// Whether the signal is the listing's size, which a collection changing while it is paged also explains.
    public var isTotal: Bool {
        switch kind {
        case .total, .contentRange: return true
        default: return false
        }
    }

    /// Body members that servers commonly use for the next page: DRF and many others `next`, Datasette
    /// `next_url`, JSON:API `links.next`, Laravel `next_page_url`, OData `@odata.nextLink`.
    public static let nextPaths: [[String]] = [["next"], ["next_url"], ["links", "next"], ["next_page_url"], ["@odata.nextLink"]]
    /// Body members that commonly hold the next page's token.
    public static let cursorPaths: [[String]] = [["next_cursor"], ["nextCursor"], ["meta", "next_cursor"], ["next_page_token"], ["nextPageToken"]]
    /// Body members that commonly say whether more pages follow (Stripe, Slack and many others).
    public static let hasMorePaths: [[String]] = [["has_more"], ["hasMore"], ["meta", "has_more"]]
    /// Body members that commonly hold the collection's size (DRF `count`, many others `total`).
    public static let totalPaths: [[String]] = [["count"], ["total"], ["total_count"], ["totalCount"], ["meta", "total"], ["meta", "count"]]
}

/// What one page of a listing showed about paging: its headers and its members besides the records
/// (`PageSkeleton`).
public struct PageSignals: Sendable {
    /// The values of the page's `Link` headers.
    public var linkHeaders: [String] = []
    /// The page's `Next-Page` header, if any.
    public var nextPageHeader: String?
    /// The page's `Content-Range` header, if any.
    public var contentRange: String?
    /// The page without its records; nil for a page that is an array, or too large to keep.
    public var document: JSONValue?

    /// Creates what a page showed.
    public init(linkHeaders: [String] = [], nextPageHeader: String? = nil, contentRange: String? = nil, document: JSONValue? = nil) {
        self.linkHeaders = linkHeaders
        self.nextPageHeader = nextPageHeader
        self.contentRange = contentRange
        self.document = document
    }

    /// The signals of more data in the last page syncd read of a listing of `source`, which holds `received`
    /// records in all. What `source`'s own `Pagination=` follows is left out (on the last page it said "no
    /// more", possibly because `HasMorePath=` said so), and so are members when `HasMorePath=` is false.
    public func unfollowed(by source: SourceConfiguration, received: Int) -> [MoreDataSignal] {
        var found: [MoreDataSignal] = []
        if source.pagination != .link, LinkHeader.nextTarget(in: linkHeaders) != nil { found.append(MoreDataSignal(.linkHeader)) }
        if let nextPageHeader, !nextPageHeader.trimmed().isEmpty, !followsNextPageHeader(source) {
            found.append(MoreDataSignal(.nextPageHeader))
        }
        let lastByHasMore = !source.hasMorePath.isEmpty && document?.value(at: source.hasMorePath) == .bool(false)
        if let document, !lastByHasMore {
            let own: [String]? = source.pagination == .body ? source.nextPath : source.pagination == .cursor ? source.cursorPath : nil
            for path in MoreDataSignal.nextPaths where path != own && Self.isPresent(document.value(at: path)) {
                found.append(MoreDataSignal(.nextMember(Self.pointer(path))))
            }
            for path in MoreDataSignal.cursorPaths where path != own && Self.isPresent(document.value(at: path)) {
                found.append(MoreDataSignal(.cursorMember(Self.pointer(path))))
            }
            for path in Self.adding(source.hasMorePath, to: MoreDataSignal.hasMorePaths) where document.value(at: path) == .bool(true) {
                found.append(MoreDataSignal(.hasMore(Self.pointer(path))))
            }
        }
        if let document {
            for path in Self.adding(source.totalPath, to: MoreDataSignal.totalPaths) {
                if case .integer(let count)? = document.value(at: path), count > Int64(received) {
                    found.append(MoreDataSignal(.total(Self.pointer(path), count: count)))
                    break
                }
            }
        }
        if let range = contentRange.flatMap(Self.parseContentRange), range.last + 1 < range.total {
            found.append(MoreDataSignal(.contentRange(first: range.first, last: range.last, total: range.total)))
        }
        return found
    }

    /// Whether `source` follows the `Next-Page` header itself: `Pagination=header` reads the next page's URL
    /// from a named header (by its name here, so that this rule does not depend on how that mode is built).
    private func followsNextPageHeader(_ source: SourceConfiguration) -> Bool {
        source.pagination.rawValue == "header"
    }

    /// A member that names something: not missing, null, "", false.
    static func isPresent(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?, .bool(false)?: return false
        case .string(let text)?: return !text.isEmpty
        default: return true
        }
    }

    static func adding(_ path: [String], to paths: [[String]]) -> [[String]] {
        path.isEmpty || paths.contains(path) ? paths : [path] + paths
    }

    /// `tokens` as a JSON pointer (RFC 6901 §3: `~` as `~0`, `/` as `~1`).
    static func pointer(_ tokens: [String]) -> String {
        tokens.map { "/" + $0.replacingEvery("~", with: "~0").replacingEvery("/", with: "~1") }.joined()
    }

    /// `items 0-99/2000` (RFC 9110 §14.4, any unit): first, last and a known total; nil for `*/2000`,
    /// an unknown total `0-99/*` or anything malformed.
    public static func parseContentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64)? {
        let words = value.trimmed().split(separator: " ", maxSplits: 1)
        guard words.count == 2 else { return nil }
        let parts = words[1].trimmed().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let total = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first else { return nil }
        return (first, last, total)
    }
}

extension MoreDataSignal {
    /// Why the listing of `source` is incomplete, when `self` is the first signal on its last page `page`
    /// and `received` records arrived in all: the signal and the setting that follows it.
    public func message(source: SourceConfiguration, page: Int, received: Int) -> String {
        guard source.pagination != .none else {
            let count = isTotal ? " (\(counted(received, "record")))" : ""
            return "the response has \(description) but Pagination=none: only the first page was received\(count); \(advice)"
        }
        let pages = counted(page, "page")
        guard !isTotal else {
            return "the listing ended after \(pages) with \(counted(received, "record")), but its last page has \(description): "
                + "the collection most likely changed on the server while it was paged; retrying"
        }
        return "page \(page), the last one Pagination=\(source.pagination.rawValue) found, has \(description): only part of the "
            + "listing was received (\(counted(received, "record")) in \(pages)); \(advice)"
    }
}
