/// How one refresh ended, reduced to what the core's retry decision needs: the engine's result (its
/// `RefreshResult`) becomes this value, and `finish` turns it into the core's `RefreshFinish`. The loop only
/// converts and hands the finish on; every retry rule lives here (docs/local-changes.md, syncd(8) GUARANTEES 7).
public struct RefreshEnding: Sendable, Equatable {
    /// What the refresh did, or how its failure is to be treated.
    public enum Kind: Sendable, Equatable {
        /// A new listing replaced the cache.
        case updated
        /// The server confirmed the cached listing.
        case unchanged
        /// The refresh was cancelled (logout, reload, shutdown); it says nothing about the source.
        case cancelled
        /// Network trouble, 5xx, 429, timeouts: retried with backoff.
        case transient
        /// A local condition that clears by itself (a full disk): retried and never given up.
        case local
        /// 401, 403, 404, invalid data, a bad credential: not retried until the next trigger.
        case permanent
    }

    /// What the refresh did.
    public var kind: Kind
    /// The failure's message (nil for a success).
    public var message: String?
    /// The server's `Retry-After`, as received.
    public var retryAfter: String?
    /// Only creates whose outcome is unknown wait, the first of them this long before it may be sent again.
    public var lostCreateWait: Duration?
    /// A create's outcome became unknown (no answer to its POST); the listing was still pulled.
    public var leftCreateUnknown: Bool

    /// Creates an ending.
    public init(_ kind: Kind, message: String? = nil, retryAfter: String? = nil, lostCreateWait: Duration? = nil,
                leftCreateUnknown: Bool = false) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
        self.lostCreateWait = lostCreateWait
        self.leftCreateUnknown = leftCreateUnknown
    }

    /// The failure is a create that waits for the listing: the server answers, so it is retried past MaxAttempts=.
    public var waitsForCreate: Bool { lostCreateWait != nil || leftCreateUnknown }

    /// The ending as the core sees it.
    ///
    /// - Parameters:
    ///   - source: the source's name, for the report.
    ///   - records: the records its cache holds now, for the report.
    ///   - stale: the cached copy is stale afterwards.
    ///   - now: the wall-clock time in seconds since 1970, for a `Retry-After` that is an HTTP-date.
    ///   - interval: `IntervalSec=`, which a lost create's wait never exceeds.
    public func finish(source: String, records: Int, stale: Bool, now: Int64, interval: Duration) -> RefreshFinish {
        switch kind {
        case .updated:
            return RefreshFinish(outcome: .success, stale: stale, report: SourceRefreshReport(source: source, result: .updated, records: records))
        case .unchanged:
            return RefreshFinish(outcome: .unchanged, stale: stale, report: SourceRefreshReport(source: source, result: .unchanged, records: records))
        case .cancelled:
            return RefreshFinish(outcome: .failure(.transient, retryAfter: nil), cancelled: true, stale: stale,
                                 report: SourceRefreshReport(source: source, result: .cancelled, records: records, error: message))
        case .transient:
            var delay = retryAfter.flatMap { RetryAfter.parse($0, now: now) }
            // A lost create's wait does not hold back the source's periodic listings (IntervalSec=).
            if let lostCreateWait { delay = min(lostCreateWait, interval) }
            // The listing was pulled and only a create waits (its outcome unknown, or its wait not over): the
            // server answers, so the retries are never given up after MaxAttempts= (docs/local-changes.md).
            let failure: FailureKind = waitsForCreate ? .local : .transient
            return RefreshFinish(outcome: .failure(failure, retryAfter: delay), stale: stale,
                                 report: SourceRefreshReport(source: source, result: .failed, records: records, error: message))
        case .local, .permanent:
            return RefreshFinish(outcome: .failure(kind == .local ? .local : .permanent, retryAfter: nil), stale: stale,
                                 report: SourceRefreshReport(source: source, result: .failed, records: records, error: message))
        }
    }
}
