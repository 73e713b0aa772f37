import Testing
import SyncCore
@testable import SyncControl

/// `syncctl outbox --discarded` and `--restore SEQ`, and the calls behind them: `ListOutbox(discarded: true)`
/// and `RestoreDiscarded(seq)` (docs/control-api.md).
@Suite("outbox: discarded changes")
struct OutboxDiscardedTests {
    let commands = syncctlCommands.map { $0.configuration }

    @Test func listOutboxWithDiscardedAndRestoreDiscardedDecodeAndRoundTrip() throws {
        #expect(try ManagerRequest(member: "ListOutbox", parameters: ["discarded": true]) == .listDiscarded(source: nil))
        #expect(try ManagerRequest(member: "ListOutbox", parameters: ["source": "p", "discarded": true]) == .listDiscarded(source: "p"))
        #expect(try ManagerRequest(member: "ListOutbox", parameters: ["source": "p", "discarded": false]) == .listOutbox(source: "p"))
        #expect(try ManagerRequest(member: "RestoreDiscarded", parameters: ["seq": 5]) == .restoreDiscarded(seq: 5))
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "discarded")) {
            try ManagerRequest(member: "ListOutbox", parameters: ["discarded": "yes"])
        }
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "seq")) { try ManagerRequest(member: "RestoreDiscarded", parameters: [:]) }
        for request: ManagerRequest in [.listDiscarded(source: nil), .listDiscarded(source: "p"), .restoreDiscarded(seq: 9)] {
            let call = request.call()
            #expect(try ManagerRequest(member: call.memberName, parameters: call.parameters) == request)
        }
        #expect(ManagerRequest.listDiscarded(source: nil).methodName == "ListOutbox")
        #expect(ManagerRequest.listOutbox(source: nil).parameters == [:], "a plain listing does not send discarded")
        // Declared, with the new parameter and reply member, and privileged like the other outbox calls.
        #expect(ManagerInterface.description.contains("method ListOutbox(source: ?string, discarded: ?bool) -> (entries: []OutboxEntry, discarded: ?[]DiscardedChange)"))
        #expect(ManagerInterface.description.contains("method RestoreDiscarded(seq: int) -> ("))
        #expect(AccessPolicy.requiredLevel(for: "io.syncd.Manager.RestoreDiscarded") == .control)
    }

    @Test func anUnknownDiscardedChangeIsItsOwnErrorAndSaysWhereTheyAreListed() {
        let error = ManagerError.noSuchDiscardedChange(seq: 42)
        #expect(error.varlinkName == "io.syncd.Manager.NoSuchDiscardedChange")
        #expect(ManagerError(name: error.varlinkName, parameters: error.varlinkParameters) == error)
        #expect(ManagerInterface.description.contains("error NoSuchDiscardedChange (seq: int)"))
        #expect(Syncctl.describeRemoteError(name: error.varlinkName, parameters: error.varlinkParameters, command: "outbox")
                == "no discarded change 42 (restored already, or kept no longer than DiscardedRetentionSec=); "
                + "'syncctl outbox --discarded' lists them")
    }

    @Test func aDiscardedChangeRoundTripsThroughItsObject() throws {
        let entry = DiscardedEntry(seq: 5, source: "posts", id: "1", operation: "update", record: ["id": 1, "title": "local"],
                                   baseVersion: "v1", createdAt: "2026-11-29T10:00:00Z", discardedAt: "2026-11-29T11:00:00Z",
                                   reason: "r", server: ["id": 1, "title": "server"], serverVersion: "v2")
        #expect(try DiscardedEntry(json: entry.json) == entry)
        let removal = DiscardedEntry(seq: 6, source: "posts", id: "2", operation: "delete", record: nil, baseVersion: nil,
                                     createdAt: "t", discardedAt: "t", reason: "the server removed it", server: nil, serverVersion: nil)
        #expect(removal.json["record"] == .null && removal.json["server"] == .null)
        #expect(try DiscardedEntry(json: removal.json) == removal)
    }

    @Test func parsesDiscardedAndRestore() throws {
        let listed = try OutboxCommand(arguments: parseCommandLine(["outbox", "posts", "--discarded"], commands: commands).arguments)
        guard case .listDiscarded("posts") = listed.action else { Issue.record("\(listed.action)"); return }
        let restore = try OutboxCommand(arguments: parseCommandLine(["outbox", "--restore", "7"], commands: commands).arguments)
        guard case .restore(7) = restore.action else { Issue.record("\(restore.action)"); return }
    }

    @Test(arguments: [
        (["outbox", "--restore", "x"], "invalid outbox entry 'x' (expected a number from the SEQ column of 'syncctl outbox --discarded')"),
        (["outbox", "--restore", "0"], "invalid outbox entry '0' (expected a number from the SEQ column of 'syncctl outbox --discarded')"),
        (["outbox", "--restore", "1", "--discarded"], "--restore and --discarded cannot be combined"),
        (["outbox", "--retry", "1", "--restore", "2"], "--retry and --restore cannot be combined"),
        (["outbox", "--discarded=yes"], "option '--discarded' takes no value"),
    ] as [([String], String)])
    func usageErrorsExitTwo(arguments: [String], message: String) {
        let output = CapturedOutput()
        #expect(Syncctl.run(arguments: arguments, environment: [:], output: output.terminal, readFile: { _ in [] }) == 2)
        #expect(output.stderr == "syncctl: \(message)\nTry 'syncctl outbox --help' for more information.\n")
        #expect(output.stdout.isEmpty)
    }

    @Test func restoreSaysWhatItQueued() {
        #expect(OutboxCommand.restored(5, reply: ["source": "posts", "id": "1", "operation": "update", "seq": 8, "unwritten": nil])
                == "Restored discarded change 5 as outbox entry 8: the update of 1 in posts is pushed at the next refresh.\n")
        #expect(OutboxCommand.restored(5, reply: ["source": "posts", "id": "n", "operation": "delete", "seq": nil])
                == "Restored discarded change 5: the delete of n in posts cancelled a create not yet pushed; nothing to push.\n")
    }
}
