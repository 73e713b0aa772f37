import Testing
@testable import SyncCore

/// The one stop deadline the core owns: the loop's shutdown waits until `stopDeadline`, the core's wait for
/// cancelled refreshes ends `shutdownReserve` before it.
@Suite struct StopDeadlineTests {
    @Test func theGraceIsTheBudgetLessTheShutdownsReserveWithinTheFiveSecondsPromised() {
        #expect(DaemonStateMachine.stopGrace + DaemonStateMachine.shutdownReserve == DaemonStateMachine.stopBudget)
        #expect(DaemonStateMachine.shutdownReserve > .zero)
        // syncd(8), SIGNALS: gone within 5 seconds of SIGTERM.
        #expect(DaemonStateMachine.stopBudget < .seconds(5))
    }

    @Test func aStopSetsTheDeadlineAndTheCoreExitsItsReserveBeforeIt() throws {
        var core = Core()
        #expect(core.machine.stopDeadline == nil)
        let ticket = try #require(started(core.send(.started)).first)
        #expect(core.send(.stop, after: .seconds(3)) == [.cancelRefresh(ticket)])
        let stoppedAt = core.now
        #expect(core.machine.stopDeadline == stoppedAt + DaemonStateMachine.stopBudget)
        #expect(core.machine.nextDeadline == stoppedAt + DaemonStateMachine.stopGrace)
        // A second signal does not move it.
        #expect(core.send(.stop, after: .seconds(1)).isEmpty)
        #expect(core.machine.stopDeadline == stoppedAt + DaemonStateMachine.stopBudget)
        #expect(core.run(for: .seconds(3) - .milliseconds(1)).isEmpty)
        #expect(core.run(for: .milliseconds(1)) == [.exit])
        #expect(core.machine.stopDeadline == stoppedAt + DaemonStateMachine.stopBudget)
    }

    @Test func aStopWithNothingRunningExitsAtOnceAndStillStatesTheDeadline() {
        var core = Core()
        #expect(core.send(.stop, after: .seconds(2)) == [.exit])
        #expect(core.machine.stopDeadline == MonotonicInstant.zero + .seconds(2) + DaemonStateMachine.stopBudget)
    }

    @Test func localChangesAreTakenUntilTheStopBeginsLoggedOutOrNot() throws {
        var core = Core()
        _ = core.send(.started)
        #expect(core.machine.takesLocalChanges)
        _ = core.send(.logout(RequestID(1), discardPending: true, pendingChanges: 0))
        #expect(core.machine.takesLocalChanges)
        _ = core.send(.stop, after: .seconds(1))
        #expect(!core.machine.takesLocalChanges)
    }
}
