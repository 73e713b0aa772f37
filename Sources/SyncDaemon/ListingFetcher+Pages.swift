import SyncControl
import SyncCore
import SyncRemote

// Where the next page of a listing is (syncd.conf(5), "Pagination="), and what an unpaginated source
// says when the server clearly has more pages than it fetched.

extension ListingFetcher {
    /// The URL of the page after `page`, or nil when `page` was the last. Every URL is resolved against
    /// the page that named it; `fetch` checks it against the origin rules before requesting it.
    func nextPage(head: HTTPResponseHead, document: JSONValue?, pageURL: String, page: Int) throws(RefreshFailure) -> String? {
        switch source.pagination {
        case .none:
            noteUnfollowedPages(head: head, document: document)
            return nil
        case .link:
            guard let next = LinkHeader.nextTarget(in: head.headerValues("link")) else { return nil }
            return try resolve(next, against: pageURL, page: page, what: "next link")
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
            return token.isEmpty ? nil : CursorURL.url(base: source.url, parameter: source.cursorParameter, token: token)
        }
    }

    private func resolve(_ reference: String, against base: String, page: Int, what: String) throws(RefreshFailure) -> String {
        guard let resolved = resolveURL(reference, against: base) else {
            let excerpt = ErrorSnippet.text(Array(reference.utf8), redaction: Redaction(source: source, token: token))
            throw RefreshFailure(.permanent, "page \(page) has an invalid \(what)", excerpt: "<\(excerpt)>")
        }
        return resolved
    }

    /// Body members that servers commonly use for the next page (DRF and many others: `next`; Datasette:
    /// `next_url`; JSON:API: `links.next`), checked when `Pagination=none` so a paged listing is not
    /// taken silently for the whole collection.
    static let commonNextPaths: [[String]] = [["next"], ["next_url"], ["links", "next"]]

    private func noteUnfollowedPages(head: HTTPResponseHead, document: JSONValue?) {
        if LinkHeader.nextTarget(in: head.headerValues("link")) != nil {
            incomplete = true
            notices.append(SourceNotice(ownWords: "the response has a Link: rel=\"next\" header but Pagination=none, "
                                        + "so only its first page is kept; set Pagination=link"))
            return
        }
        guard let document else { return }
        for path in Self.commonNextPaths {
            switch document.value(at: path) {
            case nil, .null?, .string("")?, .bool(false)?:
                continue
            default:
                let pointer = "/" + path.joined(separator: "/")
                incomplete = true
                // `pointer` is one of `commonNextPaths`, syncd's words: the server's reference is not quoted.
                notices.append(SourceNotice(ownWords: "the response has a next page at \(pointer) but Pagination=none, "
                                            + "so only its first page is kept; set Pagination=body and NextPath=\(pointer)"))
                return
            }
        }
    }
}
