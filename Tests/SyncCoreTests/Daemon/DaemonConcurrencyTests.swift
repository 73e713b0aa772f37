import Testing
@testable import SyncCore

/// Several refresh lanes (docs/architecture.md, "Concurrency"): different sources refresh at once, one
/// source never twice, and stop and logout cancel every running refresh. The `Core` helper and the action
/// filters are in DaemonStateMachineTests.swift.
@Suite("DaemonStateMachine with several lanes")
struct DaemonConcurrencyTests {
    @Test("two lanes: two sources refresh at once, the third starts when one ends")
    func twoSourcesAtOnce() throws {
        var core = Core(["a", "b", "c"], lanes: 2)
        let first = started(core.send(.started))
        #expect(first.map(\.source) == ["a", "b"])
        #expect(core.machine.isRefreshing("a") && core.machine.isRefreshing("b") && !core.machine.isRefreshing("c"))
        let a = try #require(first.first)
        let next = started(core.send(.refreshFinished(a, Core.finish("a")), after: .seconds(1)))
        #expect(next.map(\.source) == ["c"])
        #expect(core.machine.running.count == 2)
    }

    @Test("a source is never refreshed twice at once: a trigger during its refresh waits, the others go ahead")
    func sameSourceNeverTwice() throws {
        var core = Core(["a", "b", "c"], lanes: 3)
        let startup = started(core.send(.started))
        #expect(startup.map(\.source) == ["a", "b", "c"])
        let byName = Dictionary(uniqueKeysWithValues: startup.map { ($0.source, $0) })
        let a = try #require(byName["a"])
        let b = try #require(byName["b"])
        // A manual refresh of every source while all three run: nothing starts, a lane is free for none.
        #expect(started(core.send(.refresh(RequestID(1), source: nil, wait: false), after: .seconds(1))).isEmpty)
        // b ends: only b's follow-up starts, a and c still run their first refresh.
        let afterB = started(core.send(.refreshFinished(b, Core.finish("b"))))
        #expect(afterB.map(\.source) == ["b"])
        #expect(core.machine.running["a"] == a, "a keeps its one ticket")
        #expect(core.machine.running.count == 3)
        // a ends: its follow-up starts, with a new ticket.
        let afterA = try #require(started(core.send(.refreshFinished(a, Core.finish("a")))).first)
        #expect(afterA.source == "a" && afterA.id > a.id)
        #expect(Set(core.machine.running.values.map(\.source)).count == core.machine.running.count)
    }

    @Test("a free lane does not start a source whose refresh is running, even when it is first in the queue")
    func queuedSourceWaitsForItsOwnRefresh() throws {
        var core = Core(["a", "b"], lanes: 2)
        let startup = started(core.send(.started))
        let a = try #require(startup.first { $0.source == "a" })
        let b = try #require(startup.first { $0.source == "b" })
        _ = core.send(.refresh(RequestID(1), source: "a", wait: false))
        // b ends with a queued: the free lane must not start a second refresh of a.
        #expect(started(core.send(.refreshFinished(b, Core.finish("b")))).isEmpty)
        #expect(core.machine.running.keys.sorted() == ["a"])
        let followUp = try #require(started(core.send(.refreshFinished(a, Core.finish("a")))).first)
        #expect(followUp.source == "a")
    }

    @Test("SIGTERM cancels every running refresh and exits when the last one ends")
    func stopCancelsAll() throws {
        var core = Core(["a", "b", "c"], lanes: 3)
        let tickets = started(core.send(.started))
        #expect(tickets.count == 3)
        let stop = core.send(.stop, after: .seconds(1))
        #expect(stop == tickets.map { .cancelRefresh($0) })
        #expect(core.send(.refreshFinished(tickets[0], Core.finish("a", .cancelled))).isEmpty)
        #expect(core.send(.refreshFinished(tickets[2], Core.finish("c", .cancelled))).isEmpty)
        #expect(core.send(.refreshFinished(tickets[1], Core.finish("b", .cancelled))) == [.exit])
    }

    @Test("SIGTERM with refreshes that ignore the cancel exits at the stop deadline")
    func stopDeadlineWithSeveral() throws {
        var core = Core(["a", "b"], lanes: 2)
        let tickets = started(core.send(.started))
        _ = core.send(.stop)
        #expect(core.send(.refreshFinished(tickets[0], Core.finish("a", .cancelled))).isEmpty)
        #expect(core.run(for: DaemonStateMachine.stopGrace) == [.exit])
        #expect(core.now <= MonotonicInstant.zero + .seconds(5))
    }

    @Test("logout cancels every running refresh; their late results are discarded")
    func logoutCancelsAll() throws {
        var core = Core(["a", "b"], lanes: 2)
        let tickets = started(core.send(.started))
        let logout = core.send(.logout(RequestID(1), discardPending: false, pendingChanges: 0), after: .seconds(1))
        for ticket in tickets { #expect(logout.contains(.cancelRefresh(ticket))) }
        #expect(logout.contains(.eraseAccount(RequestID(1))))
        #expect(core.send(.refreshFinished(tickets[1], Core.finish("b", .cancelled))) == [.discarded(tickets[1])])
        #expect(!core.machine.isRefreshing("a"), "a's old ticket belongs to the previous account")
        #expect(core.machine.running["a"] == tickets[0], "but it still holds a's lane until it ends")
    }

    @Test("a reload that adds sources adds lanes: the new sources start while the old one still runs")
    func reloadAddsLanes() throws {
        var core = Core(["a"], lanes: 1)
        let a = try #require(started(core.send(.started)).first)
        let plan = SourcePlan(sources: ["a", "b", "c"], settings: core.machine.scheduler.settings, probeInterval: .zero, lanes: 3)
        // New sources have nothing to serve: refreshed at once, as at startup, on the new lanes.
        let reload = started(core.send(.reloaded(plan), after: .seconds(1)))
        #expect(reload.map(\.source) == ["b", "c"])
        #expect(core.machine.running["a"] == a)
        #expect(core.machine.lanes == 3)
    }
}
