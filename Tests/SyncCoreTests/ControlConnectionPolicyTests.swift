import Testing
import SyncCore

@Suite struct ControlConnectionPolicyTests {
    let policy = ControlConnectionPolicy(maxConnections: 10, privilegedReserve: 4, maxPerUnprivilegedUser: 3,
                                         callTimeout: .seconds(10), idleTimeout: .seconds(60))

    @Test func oneUnprivilegedUserGetsItsShareOnly() {
        var tally = ControlConnectionTally(policy: policy)
        for _ in 0..<3 { #expect(tally.admit(uid: 65534, privileged: false) == .admitted) }
        #expect(tally.admit(uid: 65534, privileged: false) == .refused(.perUserLimit(limit: 3), log: true))
        // Logged once: the next refusals of the same user are not.
        #expect(tally.admit(uid: 65534, privileged: false) == .refused(.perUserLimit(limit: 3), log: false))
        // Another user still gets in.
        #expect(tally.admit(uid: 1000, privileged: false) == .admitted)
        #expect(tally.perUser == [65534: 3, 1000: 1])
    }

    @Test func unprivilegedUsersTogetherLeaveTheReserve() {
        var tally = ControlConnectionTally(policy: policy)
        for uid: UInt32 in [1000, 1000, 1000, 1001, 1001, 1001] { #expect(tally.admit(uid: uid, privileged: false) == .admitted) }
        #expect(tally.unprivileged == 6)
        #expect(tally.admit(uid: 1002, privileged: false) == .refused(.unprivilegedShareUsed(limit: 6), log: true))
        // Root, the daemon's user and the control group use the reserve.
        for uid: UInt32 in [0, 0, 999, 1005] { #expect(tally.admit(uid: uid, privileged: true) == .admitted) }
        #expect(tally.total == 10)
        #expect(tally.admit(uid: 0, privileged: true) == .refused(.full(limit: 10), log: true))
    }

    @Test func releasingAConnectionLetsTheUserInAgainAndRearmsTheLog() {
        var tally = ControlConnectionTally(policy: policy)
        for _ in 0..<3 { _ = tally.admit(uid: 65534, privileged: false) }
        #expect(tally.admit(uid: 65534, privileged: false) == .refused(.perUserLimit(limit: 3), log: true))
        tally.release(uid: 65534, privileged: false)
        #expect(tally.perUser[65534] == 2)
        #expect(tally.admit(uid: 65534, privileged: false) == .admitted)
        // Admitted since the last logged refusal: the next refusal is logged again.
        #expect(tally.admit(uid: 65534, privileged: false) == .refused(.perUserLimit(limit: 3), log: true))
        for _ in 0..<3 { tally.release(uid: 65534, privileged: false) }
        #expect(tally.perUser[65534] == nil)
        #expect(tally.total == 0 && tally.unprivileged == 0)
    }

    @Test func privilegedConnectionsDoNotCountAgainstTheUnprivilegedShare() {
        var tally = ControlConnectionTally(policy: policy)
        for _ in 0..<5 { #expect(tally.admit(uid: 0, privileged: true) == .admitted) }
        #expect(tally.unprivileged == 0)
        // 5 of 10 used, all privileged: unprivileged users may still take up to the total.
        for uid: UInt32 in [1, 1, 1, 2, 2] { #expect(tally.admit(uid: uid, privileged: false) == .admitted) }
        #expect(tally.admit(uid: 3, privileged: false) == .refused(.full(limit: 10), log: true))
        tally.release(uid: 0, privileged: true)
        #expect(tally.admit(uid: 3, privileged: false) == .admitted)
    }

    @Test func refusalReasonsSayWhatHappened() {
        #expect(ControlConnectionPolicy.Refusal.perUserLimit(limit: 16).reason
                == "this user already holds 16 control connections, the most one unprivileged user may")
        #expect(ControlConnectionPolicy.Refusal.full(limit: 256).reason == "all 256 control connections are in use")
        #expect(ControlConnectionPolicy.Refusal.unprivilegedShareUsed(limit: 192).reason.hasPrefix(
            "unprivileged users hold all 192 control connections open to them"))
    }

    func activity(at seconds: Int64, called: Bool = true, inFlight: Bool = false, output: Bool = false, input: Bool = false)
        -> ControlConnectionPolicy.Activity {
        ControlConnectionPolicy.Activity(lastProgress: MonotonicInstant(offset: .seconds(seconds)), hasCalled: called,
                                         callInFlight: inFlight, outputPending: output, inputPending: input)
    }

    @Test func aConnectionWithoutACallHasTheCallTimeout() throws {
        let deadline = try #require(policy.deadline(of: activity(at: 5, called: false)))
        #expect(deadline.at == MonotonicInstant(offset: .seconds(15)))
        #expect(deadline.timeout == .noCall(.seconds(10)))
        #expect(deadline.timeout.reason == "sent no complete call within 10 s")
    }

    @Test func aPartialCallAfterAnAnsweredOneHasTheCallTimeout() throws {
        let deadline = try #require(policy.deadline(of: activity(at: 100, input: true)))
        #expect(deadline.at == MonotonicInstant(offset: .seconds(110)))
        #expect(deadline.timeout == .noCall(.seconds(10)))
    }

    @Test func anIdleConnectionBetweenCallsHasTheIdleTimeout() throws {
        let deadline = try #require(policy.deadline(of: activity(at: 100)))
        #expect(deadline.at == MonotonicInstant(offset: .seconds(160)))
        #expect(deadline.timeout.reason == "idle for 60 s")
    }

    @Test func aStreamThatIsReadNeverTimesOut() {
        // Watch between events, or Refresh --wait: a call in flight and nothing unread.
        #expect(policy.deadline(of: activity(at: 0, inFlight: true)) == nil)
        #expect(policy.deadline(of: activity(at: 0, inFlight: true, input: true)) == nil)
    }

    @Test func repliesLeftUnreadTimeOutEvenDuringACall() throws {
        let deadline = try #require(policy.deadline(of: activity(at: 30, inFlight: true, output: true)))
        #expect(deadline.at == MonotonicInstant(offset: .seconds(90)))
        #expect(deadline.timeout == .unreadReplies(.seconds(60)))
        #expect(deadline.timeout.reason == "did not read its replies for 60 s")
    }

    @Test func aUsersDroppedConnectionsAreLoggedOnceUntilOneEndsNormally() {
        var tally = ControlConnectionTally(policy: policy)
        #expect(tally.ended(uid: 65534, dropped: true) == true)
        #expect(tally.ended(uid: 65534, dropped: true) == false)
        #expect(tally.ended(uid: 65534, dropped: true) == false)
        // Another user's first drop is logged.
        #expect(tally.ended(uid: 1000, dropped: true) == true)
        // A connection that ends normally rearms the log for its user only.
        #expect(tally.ended(uid: 65534, dropped: false) == false)
        #expect(tally.ended(uid: 65534, dropped: true) == true)
        #expect(tally.ended(uid: 1000, dropped: true) == false)
    }
}
