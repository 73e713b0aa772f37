import Testing
@testable import SyncCore

/// The daemon's core driven by a manual clock: the test says what happens when and checks the actions.
struct Core {
    var machine: DaemonStateMachine
    var jitter = ConstantJitter(0.5)
    var now = MonotonicInstant.zero

    init(_ sources: [String] = ["s1", "s2"], probeInterval: Duration = .zero, lanes: Int = 1) {
        let settings = SchedulerSettings(debounce: .seconds(2), interval: .seconds(900), randomizedDelay: .zero,
                                         initialDelay: .seconds(1), maxDelay: .seconds(60), maxAttempts: 5)
        machine = DaemonStateMachine(SourcePlan(sources: sources, settings: settings, probeInterval: probeInterval, lanes: lanes), at: now)
    }

    mutating func send(_ input: DaemonInput, after delay: Duration = .zero) -> [DaemonAction] {
        now = now + delay
        return machine.handle(input, at: now, jitter: &jitter)
    }

    /// Fires the timer at every deadline up to `delay` from now; returns every action.
    mutating func run(for delay: Duration) -> [DaemonAction] {
        let end = now + delay
        var actions: [DaemonAction] = []
        while let deadline = machine.nextDeadline, deadline <= end {
            now = deadline
            actions += machine.handle(.timer, at: now, jitter: &jitter)
        }
        now = end
        return actions
    }

    static func finish(_ source: String, _ result: RefreshReportResult = .updated) -> RefreshFinish {
        switch result {
        case .updated: RefreshFinish(outcome: .success, report: SourceRefreshReport(source: source, result: .updated, records: 2))
        case .unchanged: RefreshFinish(outcome: .unchanged, report: SourceRefreshReport(source: source, result: .unchanged, records: 2))
        case .failed: RefreshFinish(outcome: .failure(.transient, retryAfter: nil),
                                    report: SourceRefreshReport(source: source, result: .failed, records: 2, error: "HTTP 503"))
        case .cancelled: RefreshFinish(outcome: .failure(.transient, retryAfter: nil), cancelled: true,
                                       report: SourceRefreshReport(source: source, result: .cancelled, records: 2, error: "cancelled"))
        }
    }
}

func started(_ actions: [DaemonAction]) -> [RefreshTicket] {
    actions.compactMap { if case .startRefresh(let ticket) = $0 { ticket } else { nil } }
}

func replies(_ actions: [DaemonAction]) -> [RequestID: DaemonReply] {
    var replies: [RequestID: DaemonReply] = [:]
    for case .reply(let id, let reply) in actions {
        #expect(replies[id] == nil, "\(id) answered twice")
        replies[id] = reply
    }
    return replies
}

@Suite("DaemonStateMachine")
struct DaemonStateMachineTests {
    @Test("startup refreshes every source, one at a time, in order")
    func startupRunsOneAtATime() throws {
        var core = Core()
        let first = try #require(started(core.send(.started)).first)
        #expect(first.source == "s1")
        #expect(core.machine.isRefreshing("s1"))
        let second = started(core.send(.refreshFinished(first, Core.finish("s1")), after: .seconds(1)))
        #expect(second.map(\.source) == ["s2"])
        #expect(second.first.map { $0.id > first.id } == true)
    }

    @Test("scenario 1: SIGTERM during a waited refresh fails every request, cancels the ticket and exits")
    func stopDuringWaitedRefresh() throws {
        var core = Core()
        let startup = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(startup, Core.finish("s1")))
        let s2 = try #require(core.machine.running["s2"])
        _ = core.send(.refreshFinished(s2, Core.finish("s2")))
        let ticket = try #require(started(core.send(.refresh(RequestID(1), source: nil, wait: true), after: .seconds(5))).first)
        let actions = core.send(.stop, after: .milliseconds(500))
        #expect(actions.contains(.cancelRefresh(ticket)))
        #expect(replies(actions) == [RequestID(1): .failed(.stopping)])
        #expect(!actions.contains(.exit), "waits for the cancelled refresh (to save its retry state)")
        // A request that arrives while stopping is answered at once.
        #expect(replies(core.send(.refresh(RequestID(2), source: "s1", wait: true))) == [RequestID(2): .failed(.stopping)])
        #expect(core.send(.refreshFinished(ticket, Core.finish("s1", .cancelled)), after: .milliseconds(100)) == [.exit])
        #expect(core.send(.timer, after: .seconds(10)).isEmpty)
    }

    @Test("scenario 1: a refresh that ignores its cancel does not keep the daemon: exit at the stop deadline")
    func stopDeadline() throws {
        var core = Core()
        let ticket = try #require(started(core.send(.started)).first)
        let actions = core.send(.stop, after: .seconds(1))
        #expect(actions == [.cancelRefresh(ticket)])
        #expect(core.machine.nextDeadline == core.now + DaemonStateMachine.stopGrace)
        #expect(core.run(for: .seconds(3)).isEmpty)
        #expect(core.run(for: .seconds(1)) == [.exit])
        #expect(core.now <= MonotonicInstant.zero + .seconds(5))
    }

    @Test("SIGTERM with nothing running exits at once")
    func stopWhenIdle() throws {
        var core = Core(["s1"])
        let ticket = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(ticket, Core.finish("s1")))
        #expect(core.send(.stop) == [.exit])
    }

    @Test("a logout answers a waited-for refresh with Cancelled, not a storage failure")
    func logoutCancelsWaitedRefresh() throws {
        var core = Core(["s1"])
        let startup = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(startup, Core.finish("s1")), after: .seconds(1))
        _ = try #require(started(core.send(.refresh(RequestID(1), source: "s1", wait: true), after: .seconds(10))).first)
        let logout = core.send(.logout(RequestID(2), discardPending: false, pendingChanges: 0), after: .milliseconds(100))
        #expect(replies(logout)[RequestID(1)] == .failed(.cancelled(reason: "the refresh was cancelled by a logout")))
    }

    @Test("scenario 2: a refresh after logout is not dropped because the old one is still in flight")
    func refreshAfterLogoutWhileOldTicketRuns() throws {
        var core = Core(["s1"])
        let startup = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(startup, Core.finish("s1")), after: .seconds(1))
        let old = try #require(started(core.send(.refresh(RequestID(1), source: "s1", wait: false), after: .seconds(10))).first)
        let logout = core.send(.logout(RequestID(2), discardPending: true, pendingChanges: 3), after: .milliseconds(100))
        #expect(logout.contains(.cancelRefresh(old)))
        #expect(logout.contains(.eraseAccount(RequestID(2))))
        #expect(replies(core.send(.accountErased(RequestID(2), .success(())))) == [RequestID(2): .done])
        // At once `refresh --wait`: queued behind the old ticket, started when it ends.
        #expect(started(core.send(.refresh(RequestID(3), source: nil, wait: true))).isEmpty)
        #expect(!core.machine.isRefreshing("s1"), "the old ticket belongs to the previous account")
        let next = core.send(.refreshFinished(old, Core.finish("s1", .cancelled)), after: .seconds(2))
        #expect(next.contains(.discarded(old)))
        let fresh = try #require(started(next).first)
        #expect(fresh.source == "s1" && fresh.generation == old.generation + 1)
        let done = core.send(.refreshFinished(fresh, Core.finish("s1")), after: .seconds(1))
        #expect(replies(done) == [RequestID(3): .refreshed([SourceRefreshReport(source: "s1", result: .updated, records: 2)])])
        #expect(core.machine.scheduler.status(of: "s1")?.state == .idle)
    }

    @Test("scenario 3: a reload that removes a waited-for source answers the waiter")
    func reloadRemovingWaitedSource() throws {
        var core = Core()
        let startup = try #require(started(core.send(.started)).first)
        _ = core.send(.refresh(RequestID(1), source: nil, wait: true))
        let plan = SourcePlan(sources: ["s1"], settings: core.machine.scheduler.settings, probeInterval: .zero)
        #expect(replies(core.send(.reloaded(plan))).isEmpty)
        // The startup ticket was issued before the request: it does not answer it; the follow-up does.
        let followUp = try #require(started(core.send(.refreshFinished(startup, Core.finish("s1")))).first)
        #expect(followUp.source == "s1")
        let answer = replies(core.send(.refreshFinished(followUp, Core.finish("s1", .unchanged))))
        #expect(answer == [RequestID(1): .refreshed([
            SourceRefreshReport(source: "s1", result: .unchanged, records: 2),
            SourceRefreshReport(source: "s2", result: .cancelled, records: 0, error: "removed from the configuration by a reload"),
        ])])
        #expect(core.machine.scheduler.source("s2") == nil)
    }

    @Test("after logout, a reload brings every source back and refreshes it at once, as at startup")
    func reloadAfterLogoutRefreshes() throws {
        var core = Core(["s1", "s2"], lanes: 2)
        let first = started(core.send(.started))
        for ticket in first { _ = core.send(.refreshFinished(ticket, Core.finish(ticket.source)), after: .seconds(1)) }
        _ = core.send(.logout(RequestID(1), discardPending: false, pendingChanges: 0))
        _ = core.send(.accountErased(RequestID(1), .success(())))
        let plan = SourcePlan(sources: ["s1", "s2"], settings: core.machine.scheduler.settings, probeInterval: .zero, lanes: 2)
        let reloaded = core.send(.reloaded(plan), after: .seconds(5))
        #expect(core.machine.phase == .running)
        #expect(started(reloaded).map(\.source) == ["s1", "s2"])
        #expect(started(reloaded).allSatisfy { $0.generation == 1 })
    }

    @Test("after logout, refresh NAME refreshes NAME once and brings the other sources back refreshed")
    func refreshByNameAfterLogoutBringsOthersBack() throws {
        var core = Core(["s1", "s2"], lanes: 2)
        for ticket in started(core.send(.started)) { _ = core.send(.refreshFinished(ticket, Core.finish(ticket.source))) }
        _ = core.send(.logout(RequestID(1), discardPending: false, pendingChanges: 0))
        _ = core.send(.accountErased(RequestID(1), .success(())))
        let actions = core.send(.refresh(RequestID(2), source: "s2", wait: true))
        #expect(Set(started(actions).map(\.source)) == ["s1", "s2"])
        let s2 = try #require(started(actions).first { $0.source == "s2" })
        let done = core.send(.refreshFinished(s2, Core.finish("s2")), after: .seconds(1))
        #expect(replies(done) == [RequestID(2): .refreshed([SourceRefreshReport(source: "s2", result: .updated, records: 2)])])
        #expect(started(done).isEmpty, "no second refresh of s2")
    }

    @Test("scenario 4: after logout, refresh NAME finds its source")
    func refreshByNameAfterLogout() throws {
        var core = Core(["s1"])
        let startup = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(startup, Core.finish("s1")))
        _ = core.send(.logout(RequestID(1), discardPending: false, pendingChanges: 0))
        _ = core.send(.accountErased(RequestID(1), .success(())))
        #expect(core.machine.phase == .loggedOut)
        let actions = core.send(.refresh(RequestID(2), source: "s1", wait: false))
        #expect(replies(actions) == [RequestID(2): .refreshed([])])
        #expect(started(actions).map(\.source) == ["s1"])
        #expect(replies(core.send(.refresh(RequestID(3), source: "nope", wait: false))) == [RequestID(3): .failed(.noSuchSource(source: "nope"))])
    }

    @Test("logout refuses while changes are pending, unless told to discard them")
    func logoutWithPendingChanges() {
        var core = Core(["s1"])
        _ = core.send(.started)
        #expect(replies(core.send(.logout(RequestID(1), discardPending: false, pendingChanges: 2))) == [RequestID(1): .failed(.pendingChanges(count: 2))])
        #expect(core.machine.phase == .running)
    }

    @Test("a client that goes away cancels its request, which is answered once")
    func disconnectCancels() throws {
        var core = Core(["s1"])
        let ticket = try #require(started(core.send(.started)).first)
        _ = core.send(.refresh(RequestID(7), source: "s1", wait: true))
        let gone = replies(core.send(.cancelled(RequestID(7))))
        #expect(gone.keys.sorted() == [RequestID(7)])
        #expect(replies(core.send(.refreshFinished(ticket, Core.finish("s1")))).isEmpty)
        #expect(core.send(.cancelled(RequestID(7))).isEmpty)
    }

    @Test("a trigger during a refresh gets one follow-up, not one per trigger")
    func oneFollowUp() throws {
        var core = Core(["s1"])
        let first = try #require(started(core.send(.started)).first)
        for id in 1...3 { _ = core.send(.refresh(RequestID(id), source: "s1", wait: false)) }
        let next = started(core.send(.refreshFinished(first, Core.finish("s1"))))
        #expect(next.count == 1)
        let last = try #require(next.first)
        #expect(started(core.send(.refreshFinished(last, Core.finish("s1")))).isEmpty)
    }

    @Test("probes run only while a source fails, and a recovery triggers the failing sources")
    func probes() throws {
        var core = Core(["s1"], probeInterval: .seconds(60))
        let ticket = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(ticket, Core.finish("s1")))
        #expect(core.machine.nextProbe == nil)
        let retry = try #require(started(core.send(.refresh(RequestID(1), source: "s1", wait: false))).first)
        _ = core.send(.refreshFinished(retry, Core.finish("s1", .failed)))
        #expect(core.machine.nextProbe == core.now + .seconds(60))
        _ = core.send(.probeFinished(reachable: false))
        let recovered = core.send(.probeFinished(reachable: true))
        #expect(recovered.contains(.reachableAgain))
    }

    @Test("a successful refresh after a probe said unreachable makes reachable true: no later probe would correct it")
    func aSuccessCorrectsAnUnreachableProbe() throws {
        var core = Core(["s1"], probeInterval: .seconds(60))
        let ticket = try #require(started(core.send(.started)).first)
        _ = core.send(.refreshFinished(ticket, Core.finish("s1", .failed)))
        _ = core.send(.probeFinished(reachable: false))
        #expect(core.machine.reachable == false)
        let retry = try #require(started(core.send(.refresh(RequestID(1), source: "s1", wait: false))).first)
        _ = core.send(.refreshFinished(retry, Core.finish("s1", .unchanged)))
        #expect(core.machine.reachable == true)
        #expect(core.machine.nextProbe == nil, "no source fails: no more probes")
        // A failure says nothing about reachability (an HTTP error is an answer, a timeout is not): unchanged.
        let again = try #require(started(core.send(.refresh(RequestID(2), source: "s1", wait: false))).first)
        _ = core.send(.refreshFinished(again, Core.finish("s1", .failed)))
        #expect(core.machine.reachable == true)
    }

    @Test("a cache file lost while running is fetched again at once, even in backoff and offline; an unknown source is ignored")
    func cacheFileLostRefreshesAtOnce() throws {
        var core = Core(["s1"])
        let startup = try #require(started(core.send(.started)).first)
        // The refresh failed: the source waits out its backoff, and the network is gone.
        _ = core.send(.refreshFinished(startup, Core.finish("s1", .failed)))
        _ = core.send(.links(online: false, significant: false))
        #expect(started(core.send(.timer, after: .milliseconds(100))).isEmpty)
        let again = started(core.send(.cacheFileLost(source: "s1"), after: .milliseconds(100)))
        #expect(again.map(\.source) == ["s1"])
        #expect(again.first.map { $0.id > startup.id } == true)
        #expect(core.send(.cacheFileLost(source: "gone")).isEmpty)
    }
}
