import SyncCore
import SyncRemote

// Where the next page of a listing is (syncd.conf(5), "Pagination="), and the rule that nothing is cut
// short in silence: a last page that names more data syncd did not follow fails the listing.

extension ListingFetcher {
    /// The URL of the page after `page`, or nil when `page` was the last. Every URL is resolved against
    /// the page that named it; `fetch` checks it against the origin rules before requesting it.
    /// `records`: how many records `page` held.
    func nextPage(head: HTTPResponseHead, document: JSONValue?, pageURL: String, page: Int, records: Int) throws(RefreshFailure) -> String? {
        // HasMorePath= false ends a listing whose pages name a next one even on the last page.
        if !source.hasMorePath.isEmpty, source.pagination == .body || source.pagination == .cursor,
           document?.value(at: source.hasMorePath) == .bool(false) {
            return nil
        }
        switch source.pagination {
        case .none:
            return nil
        case .page, .offset:
            var total: Int64?
            if !source.totalPath.isEmpty {
                guard case .integer(let count)? = document?.value(at: source.totalPath) else {
                    throw RefreshFailure(.permanent, "page \(page): the value at TotalPath=\(source.totalPathText) is not a whole number; "
                                         + "point TotalPath= at the collection's record count, or leave it empty")
                }
                total = count
            }
            return numberedPages?.next(afterPageWith: records, total: total)
        case .link:
            guard let next = LinkHeader.nextTarget(in: head.headerValues("link")) else { return nil }
            return try resolve(next, against: pageURL, page: page, what: "next link")
        case .header:
            // Kinto's Next-Page: the whole header value is the URL; absent or empty on the last page.
            guard let next = head.header(source.nextHeader).map({ $0.trimmed() }), !next.isEmpty else { return nil }
            return try resolve(next, against: pageURL, page: page, what: "\(source.nextHeader) header")
        case .body:
            switch document?.value(at: source.nextPath) {
            case nil, .null?:
                return nil
            case .string(let next)?:
                return next.isEmpty ? nil : try resolve(next, against: pageURL, page: page, what: "next page URL at NextPath=\(source.nextPathText)")
            case .some:
                throw RefreshFailure(.permanent, "page \(page): the value at NextPath=\(source.nextPathText) is neither a URL string nor null; "
                                     + "point NextPath= at the next page's URL")
            }
        case .cursor:
            let token: String
            switch document?.value(at: source.cursorPath) {
            case nil, .null?:
                return nil
            case .string(let text)?:
                token = text
            case let number? where number.integerText != nil:
                token = number.integerText ?? ""
            case .some:
                throw RefreshFailure(.permanent, "page \(page): the value at CursorPath=\(source.cursorPathText) is neither a string, "
                                     + "an integer nor null; point CursorPath= at the next page's token")
            }
            return token.isEmpty ? nil : CursorURL.url(base: baseURL, parameter: source.cursorParameter, token: token)
        }
    }

    private func resolve(_ reference: String, against base: String, page: Int, what: String) throws(RefreshFailure) -> String {
        guard let resolved = resolveURL(reference, against: base) else {
            let excerpt = ErrorSnippet.text(Array(reference.utf8), redaction: Redaction(source: source, token: token))
            throw RefreshFailure(.permanent, "page \(page) has an invalid \(what)", excerpt: "<\(excerpt)>")
        }
        return resolved
    }

    /// Whether this source reads members of each page besides its records to find the next one.
    var readsPagingMembers: Bool {
        switch source.pagination {
        case .body, .cursor: return true
        case .page, .offset: return !source.totalPath.isEmpty
        default: return false
        }
    }

    /// Fails the listing when its last page, `page`, names more data than `received` records in all: a next
    /// page in a header or member its `Pagination=` does not follow, `has_more`, a larger total, a
    /// `Content-Range` with more (syncd.conf(5), "Pagination="). The previous listing stays in place.
    func requireComplete(head: HTTPResponseHead, document: JSONValue?, page: Int, received: Int) throws(RefreshFailure) {
        let signals = PageSignals(linkHeaders: head.headerValues("link"), nextPageHeader: head.header("next-page"),
                                  contentRange: head.header("content-range"), document: document)
        guard let first = signals.unfollowed(by: source, received: received).first else { return }
        // A total that the pages followed fell short of: records left or joined the collection meanwhile, a
        // new listing sees it settled. Every other signal is a setting to change: retrying cannot help.
        let kind: RefreshFailure.Kind = first.isTotal && source.pagination != .none ? .transient : .permanent
        throw RefreshFailure(kind, first.message(source: source, page: page, received: received))
    }
}
