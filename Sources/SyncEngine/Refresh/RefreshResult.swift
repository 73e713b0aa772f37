import SyncCore
import SyncStore

/// Why a refresh failed, classified for the scheduler (syncd(8) GUARANTEES 7).
public struct RefreshFailure: Error, Sendable, CustomStringConvertible {
    /// How the scheduler should treat the failure.
    public enum Kind: Sendable, Equatable {
        /// Network trouble, 5xx, 429, timeouts, a full disk: retried with backoff.
        case transient
        /// 401, 403, 404, other 4xx, invalid data, a bad credential: not retried until the next trigger.
        case permanent
        /// A local condition that clears by itself (the cache file could not be written: a full disk): retried
        /// with backoff and never given up, since the server is fine.
        case local
        /// The refresh was cancelled (logout, reload, shutdown); nothing is recorded.
        case cancelled
    }

    /// Classification.
    public var kind: Kind
    /// One line for people: what failed and, where possible, what to do.
    public var message: String
    /// `message` without what the server wrote (the start of its error body, a URL it redirected or linked to)
    /// and without the credential's name, for those who may not read them: callers of `GetStatus` outside
    /// ControlGroup= and the STATUS= line (docs/control-api.md, "Secrets"); nil when `message` quotes none of them.
    public var publicMessage: String?
    /// HTTP status, when a server answered.
    public var status: Int?
    /// The server's `Retry-After`, as received.
    public var retryAfter: String?
    /// Only creates whose outcome is unknown wait, the first of them this long before it may be sent again
    /// (requireDelivery): the daemon refreshes then, or at its interval if that comes sooner.
    public var lostCreateWait: Duration?
    /// A new listing replaced the cache before the refresh failed (a change failed to push, the pull
    /// went through): watchers are told the cache changed.
    public var listingReplaced = false
    /// The message already says what the cache file holds (a failed write of it), so callers do not add it again.
    public var describesCacheFile = false
    /// A create's outcome became unknown (no answer to its POST): the push stops, but the listing is still
    /// pulled, since only it can tell whether the server has the record (docs/local-changes.md).
    public var leftCreateUnknown = false

    /// Creates a failure.
    public init(_ kind: Kind, _ message: String, publicMessage: String? = nil, status: Int? = nil, retryAfter: String? = nil) {
        self.kind = kind
        self.message = message
        self.publicMessage = publicMessage
        self.status = status
        self.retryAfter = retryAfter
    }

    /// A failure whose message ends in the server's words, `excerpt` (already redacted): `message` is
    /// "`summary`: `excerpt`", `publicMessage` the summary alone (or `publicSummary`, when the summary names
    /// something only privileged callers may read, such as a URL the server gave).
    public init(_ kind: Kind, _ summary: String, excerpt: String, publicSummary: String? = nil, status: Int? = nil, retryAfter: String? = nil) {
        self.init(kind, excerpt.isEmpty ? summary : "\(summary): \(excerpt)", status: status, retryAfter: retryAfter)
        if !excerpt.isEmpty || publicSummary != nil { publicMessage = publicSummary ?? summary }
    }

    /// Adds `text` to the end of both messages.
    public mutating func append(_ text: String) {
        message += text
        if publicMessage != nil { publicMessage! += text }
    }

    /// The failure with `redaction` applied to its messages (the public one for everyone).
    public func redacted(by redaction: Redaction) -> RefreshFailure {
        var copy = self
        copy.message = redaction.redacting(message)
        copy.publicMessage = redaction.redacting(publicMessage ?? message, for: .everyone)
        return copy
    }

    public var description: String { message }
}

/// What one refresh of one source did.
public enum RefreshResult: Sendable {
    /// A new listing replaced the cache.
    case updated(ListingOutcome)
    /// The server confirmed the cached listing (304 or identical content); only the file's mtime moved.
    case unchanged(count: Int)
    /// Nothing was replaced; the previous copy stays byte-for-byte.
    case failed(RefreshFailure)
}

extension RefreshResult {
    /// The result reduced to what the core's retry decision needs (`RefreshEnding.finish`).
    public var ending: RefreshEnding {
        switch self {
        case .updated: return RefreshEnding(.updated)
        case .unchanged: return RefreshEnding(.unchanged)
        case .failed(let failure):
            let kind: RefreshEnding.Kind = switch failure.kind {
            case .cancelled: .cancelled
            case .transient: .transient
            case .local: .local
            case .permanent: .permanent
            }
            return RefreshEnding(kind, message: failure.message, retryAfter: failure.retryAfter,
                                 lostCreateWait: failure.lostCreateWait, leftCreateUnknown: failure.leftCreateUnknown)
        }
    }
}
