import SyncCore
import SyncStore

// One deadline for a whole refresh, its push included (docs/syncd.8.md, "Refresh lanes"): a server that
// answers each write slowly, within TimeoutSec=, holds a lane for at most ListingTimeoutSec=; the changes
// not pushed by then stay queued for the next refresh.
extension SyncEngine {
    /// The time since the refresh under way began; zero outside one.
    func refreshElapsed() -> Duration {
        refreshStarted.map { clocks.sinceBoot() - $0 } ?? .zero
    }

    /// TimeoutSec= for a push request starting now, cut to what is left of the refresh's deadline (at
    /// least a millisecond: libcurl takes a zero timeout as none).
    func pushRequestTimeout(_ source: SourceConfiguration) -> Duration {
        let timeout = RefreshDeadline(budget: source.listingTimeout).requestTimeout(source.timeout, after: refreshElapsed())
        return max(.milliseconds(1), timeout ?? .zero)
    }

    /// Throws the deadline's failure when it has passed before `remaining.first` went out.
    func checkPushDeadline(_ source: SourceConfiguration, remaining: ArraySlice<OutboxRecord>) throws(RefreshFailure) {
        guard RefreshDeadline(budget: source.listingTimeout).hasPassed(after: refreshElapsed()) else { return }
        throw pushDeadlineFailure(source, remaining: remaining)
    }

    /// Whether a push request that began `started` after the refresh and just failed was stopped by the
    /// refresh's deadline rather than by TimeoutSec=.
    func pushStoppedByDeadline(_ source: SourceConfiguration, startedAfter started: Duration) -> Bool {
        RefreshDeadline(budget: source.listingTimeout).stoppedRequest(startedAfter: started, timeout: source.timeout,
                                                                       failedAfter: refreshElapsed())
    }

    /// The push stopped at the refresh's deadline: the queued changes from `remaining.first` on stay queued.
    func pushDeadlineFailure(_ source: SourceConfiguration, remaining: ArraySlice<OutboxRecord>) -> RefreshFailure {
        let left = remaining.filter { $0.state == .queued }.count
        let failure = RefreshFailure(.transient, "the push stopped at ListingTimeoutSec=\(source.listingTimeout), the deadline of a whole refresh: "
            + "\(counted(left, "change")) not pushed \(left == 1 ? "stays" : "stay") queued and \(left == 1 ? "goes" : "go") out "
            + "at the next refresh; raise ListingTimeoutSec= if the server is just slow")
        logger.forSource(source.name).warning(failure.message)
        return failure
    }
}
