import Testing
@testable import SyncCore

/// One deadline for a whole refresh, push included: a slow server cannot hold a lane past ListingTimeoutSec=.
@Suite("RefreshDeadline")
struct RefreshDeadlineTests {
    /// ListingTimeoutSec=10s, TimeoutSec=30s.
    let deadline = RefreshDeadline(budget: .seconds(10))
    let timeout = Duration.seconds(30)

    @Test("with writes of 3 s each, three complete, the fourth is stopped at the deadline and no fifth starts")
    func slowWritesStopAtTheDeadline() {
        // A manual clock: each write takes 3 s, within TimeoutSec=.
        var now = Duration.zero
        var sent = 0
        var timeouts: [Duration] = []
        for _ in 1...20 {
            guard let requestTimeout = deadline.requestTimeout(timeout, after: now) else { break }
            timeouts.append(requestTimeout)
            let took = min(.seconds(3), requestTimeout)
            now += took
            if took == .seconds(3) { sent += 1 } else { #expect(deadline.stoppedRequest(startedAfter: now - took, timeout: timeout, failedAfter: now)) }
        }
        #expect(sent == 3)
        #expect(timeouts == [.seconds(10), .seconds(7), .seconds(4), .seconds(1)])
        #expect(now == .seconds(10) && deadline.hasPassed(after: now))
    }

    @Test("a request's timeout is TimeoutSec= while the deadline is further away, what is left once it is nearer")
    func requestTimeout() {
        let long = RefreshDeadline(budget: .seconds(600))
        #expect(long.requestTimeout(timeout, after: .seconds(100)) == timeout)
        #expect(long.requestTimeout(timeout, after: .seconds(590)) == .seconds(10))
        #expect(long.requestTimeout(timeout, after: .seconds(600)) == nil)
        #expect(long.requestTimeout(timeout, after: .seconds(700)) == nil)
        #expect(long.remaining(after: .seconds(700)) == .zero)
    }

    @Test("a request that failed by its own timeout, or long before the deadline, was not stopped by it")
    func stoppedRequest() {
        let long = RefreshDeadline(budget: .seconds(600))
        // TimeoutSec= struck: the request had its full timeout.
        #expect(!long.stoppedRequest(startedAfter: .seconds(10), timeout: timeout, failedAfter: .seconds(40)))
        // Its timeout was cut, but it failed early (a refused connection).
        #expect(!long.stoppedRequest(startedAfter: .seconds(590), timeout: timeout, failedAfter: .seconds(591)))
        // Its timeout was cut, and it failed at the deadline.
        #expect(long.stoppedRequest(startedAfter: .seconds(590), timeout: timeout, failedAfter: .seconds(600)))
    }
}
