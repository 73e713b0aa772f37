import Testing
@testable import SyncCore

/// How a refresh's ending becomes the core's finish: every retry rule the loop used to decide itself.
@Suite struct RefreshEndingTests {
    /// 1994-11-06T08:49:37Z, the HTTP-date of RFC 9110's examples.
    static let dateSeconds: Int64 = 784_111_777
    static let interval: Duration = .seconds(900)

    func finish(_ ending: RefreshEnding, stale: Bool = false, now: Int64 = dateSeconds) -> RefreshFinish {
        ending.finish(source: "s1", records: 7, stale: stale, now: now, interval: Self.interval)
    }

    @Test func successesReportTheirResultAndRecords() {
        #expect(finish(RefreshEnding(.updated)) == RefreshFinish(outcome: .success,
                                                                  report: SourceRefreshReport(source: "s1", result: .updated, records: 7)))
        #expect(finish(RefreshEnding(.unchanged), stale: true)
            == RefreshFinish(outcome: .unchanged, stale: true, report: SourceRefreshReport(source: "s1", result: .unchanged, records: 7)))
    }

    @Test func aCancelledRefreshSaysNothingAboutTheSource() {
        let finish = finish(RefreshEnding(.cancelled, message: "cancelled by stop"))
        #expect(finish == RefreshFinish(outcome: .failure(.transient, retryAfter: nil), cancelled: true,
                                        report: SourceRefreshReport(source: "s1", result: .cancelled, records: 7, error: "cancelled by stop")))
    }

    @Test func aTransientFailureWithoutRetryAfterBacksOff() {
        let finish = finish(RefreshEnding(.transient, message: "HTTP 503"))
        #expect(finish == RefreshFinish(outcome: .failure(.transient, retryAfter: nil),
                                        report: SourceRefreshReport(source: "s1", result: .failed, records: 7, error: "HTTP 503")))
    }

    @Test func retryAfterInSecondsIsTheDelay() {
        #expect(finish(RefreshEnding(.transient, message: "HTTP 429", retryAfter: "120")).outcome == .failure(.transient, retryAfter: .seconds(120)))
    }

    @Test func retryAfterAsAnHTTPDateIsCountedFromTheWallClock() {
        let ending = RefreshEnding(.transient, message: "HTTP 503", retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(finish(ending, now: Self.dateSeconds - 90).outcome == .failure(.transient, retryAfter: .seconds(90)))
        // A date already past asks for no delay.
        #expect(finish(ending, now: Self.dateSeconds + 5).outcome == .failure(.transient, retryAfter: .zero))
    }

    @Test func aMalformedRetryAfterIsIgnored() {
        #expect(finish(RefreshEnding(.transient, message: "HTTP 503", retryAfter: "soon")).outcome == .failure(.transient, retryAfter: nil))
    }

    @Test func aLostCreatesWaitIsTheDelayAndALocalFailure() {
        let ending = RefreshEnding(.transient, message: "create waits", retryAfter: "30", lostCreateWait: .seconds(300))
        #expect(ending.waitsForCreate)
        #expect(finish(ending) == RefreshFinish(outcome: .failure(.local, retryAfter: .seconds(300)),
                                                report: SourceRefreshReport(source: "s1", result: .failed, records: 7, error: "create waits")))
    }

    @Test func aLostCreatesWaitIsCappedByTheInterval() {
        let ending = RefreshEnding(.transient, message: "create waits", lostCreateWait: .seconds(3_600))
        #expect(finish(ending).outcome == .failure(.local, retryAfter: Self.interval))
    }

    @Test func aCreateLeftUnknownIsLocalWithTheServersDelay() {
        let ending = RefreshEnding(.transient, message: "no answer to the create", retryAfter: "60", leftCreateUnknown: true)
        #expect(ending.waitsForCreate)
        #expect(finish(ending).outcome == .failure(.local, retryAfter: .seconds(60)))
    }

    @Test func localAndPermanentFailuresKeepTheirKindAndIgnoreRetryAfter() {
        #expect(finish(RefreshEnding(.local, message: "disk full", retryAfter: "60"))
            == RefreshFinish(outcome: .failure(.local, retryAfter: nil),
                             report: SourceRefreshReport(source: "s1", result: .failed, records: 7, error: "disk full")))
        #expect(finish(RefreshEnding(.permanent, message: "HTTP 401")).outcome == .failure(.permanent, retryAfter: nil))
        #expect(!RefreshEnding(.permanent).waitsForCreate)
    }

    /// MaxAttempts= is 5 in `Core`: a create that waits is retried past it, a server's failure is given up.
    @Test(arguments: [(RefreshEnding(.transient, message: "create waits", leftCreateUnknown: true), 8, SourceStateName.backoff),
                      (RefreshEnding(.transient, message: "HTTP 503"), 5, SourceStateName.error)])
    func aWaitingCreateIsRetriedPastMaxAttempts(ending: RefreshEnding, refreshes: Int, after: SourceStateName) {
        var core = Core(["s1"])
        var tickets = started(core.send(.started))
        var finished = 0
        while let ticket = tickets.first, finished < 8 {
            let finish = ending.finish(source: "s1", records: 0, stale: true, now: Self.dateSeconds, interval: Self.interval)
            tickets = started(core.send(.refreshFinished(ticket, finish)))
            finished += 1
            if finished < 8 { tickets += started(core.run(for: .seconds(120))) }
        }
        #expect(finished == refreshes)
        #expect(core.machine.scheduler.status(of: "s1")?.state == after)
    }
}
