// What an HTTP status means to syncd, for each kind of request it sends: the one place that looks at status
// codes. It decides whether an answer concerns one record (its change is parked or retried alone) or the whole
// server (the push stops, the source backs off), which redirects are followed, and when a create's outcome is
// unknown. docs/local-changes.md, "Failures"; syncd(8), GUARANTEES.

/// The meaning of an HTTP status for one of syncd's requests (redirects other than 303 are followed before).
public enum HTTPAnswer: Sendable, Equatable {
    /// 2xx (or no status at all: a `file:` URL read): the request was taken.
    case success
    /// 304 on a listing page: the stored listing is current (only a conditional request gets it).
    case notModified
    /// 303 on a write: the server did not take it, the answer is elsewhere (RFC 9110 §15.4.4).
    case seeOther
    /// 404 (and 410 on a pre-push check): no such resource.
    case notFound
    /// 409 or 412 on a write: the server holds another version of the record.
    case conflict
    /// 401 or 403: the credential is refused; a matter of the source, never of one record.
    case credentials
    /// 408, 500, 501 or 505–599 on a write or a pre-push check: this one request failed; the change stays queued
    /// and is retried while the other records' changes go on.
    case recordTrouble
    /// 429 or 502–504 (any 408, 429 or 5xx for a listing page): the server or its gateway is down or overloaded;
    /// the push stops and the source is retried with backoff.
    case serverTrouble
    /// Any other answer (another 4xx, an unfollowed 3xx, a 1xx): the server refused this request for good.
    /// On a write or a pre-push check it concerns that record only: its change is parked with the answer.
    case refused

    /// The request an answer is for.
    public enum Request: Sendable, Equatable {
        /// A page of a source's listing.
        case listingPage
        /// A `POST`, `PUT` or `DELETE` of a local change.
        case push
        /// The `GET` of one record's item URL before an update or removal is pushed (`VersionField=`).
        case prePushCheck
    }

    /// What `status` means as the answer to `request`.
    public init(status: Int, answering request: Request) {
        switch (request, status) {
        case (_, 0), (_, 200..<300):
            self = .success
        case (.listingPage, 304):
            self = .notModified
        case (_, 401), (_, 403):
            self = .credentials
        case (.listingPage, 404), (.prePushCheck, 404), (.prePushCheck, 410), (.push, 404):
            self = .notFound
        case (.listingPage, 408), (.listingPage, 429), (.listingPage, 500...599):
            self = .serverTrouble
        case (.push, 303):
            self = .seeOther
        case (.push, 409), (.push, 412):
            self = .conflict
        case (_, 429), (_, 502...504):
            self = .serverTrouble
        case (_, 408), (_, 500...599):
            self = .recordTrouble
        default:
            self = .refused
        }
    }

    /// Whether a body with `status` is the answer's content (a listing page's records, a record), not an
    /// error's words.
    public static func carriesContent(_ status: Int) -> Bool { status == 0 || (200..<300).contains(status) }

    /// How `HTTPClient` follows a redirect (RFC 9110 §15.4), by its status and the request's method.
    public enum Redirect: Sendable, Equatable {
        /// 301, 302, 307, 308, and 303 to a GET or HEAD: sent again to the `Location`, same method and body.
        case follow
        /// 303 to any other method: the server did not take the write; the answer is returned as it is.
        case notTaken
    }

    /// The redirect `status` asks for, nil when it is not one.
    public static func redirect(status: Int, method: String) -> Redirect? {
        switch status {
        case 301, 302, 307, 308: return .follow
        case 303: return method == "GET" || method == "HEAD" ? .follow : .notTaken
        default: return nil
        }
    }

    /// Whether a create answered with `status` may be on the server though the answer did not say it was taken:
    /// a 5xx (the server failed, maybe after it stored the record; a gateway whose server broke off or did not
    /// answer in time: 502, 503, 504, a CDN's 520–524), except 501 and 505, which refuse the request outright.
    public static func leavesCreateUnknown(_ status: Int) -> Bool {
        (500...599).contains(status) && status != 501 && status != 505
    }
}
