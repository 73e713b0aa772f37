import Testing
@testable import SyncControl

/// `syncctl changes` against a scripted daemon: pages merged into one answer with each ID once in its latest
/// state, the `--json` form, a log that no longer reaches `--since`, and usage errors.
@Suite("syncctl changes", .serialized, .system)
struct SyncctlChangesTests {
    let runner = SyncctlEndToEndTests()

    @Test func pagesAreMergedIntoEachIDsLatestState() async throws {
        let fixture = try ControlServerFixture()
        let text = try await runner.syncctl(fixture, ["changes", "posts"])
        #expect(text.status == 0 && text.stderr == "", "\(text.stderr)")
        #expect(text.stdout == """
            changed b
            changed c
            removed a

            2 records changed and 1 removed after change 0; the source is at change 4 (follow with --since 4).

            """)
        let json = try await runner.syncctl(fixture, ["changes", "posts", "--since", "0", "--limit", "2", "--json"])
        #expect(json.stdout == #"{"changed":["b","c"],"removed":["a"],"seq":4}"# + "\n")
        let none = try await runner.syncctl(fixture, ["changes", "posts", "--since", "4", "--no-legend"])
        #expect(none.status == 0 && none.stdout == "")
        await fixture.stop()
    }

    @Test func aSinceTheLogNoLongerReachesSaysWhatToDo() async throws {
        let fixture = try ControlServerFixture()
        let expired = try await runner.syncctl(fixture, ["changes", "posts", "--since", "12"])
        #expect(expired.status == 1 && expired.stdout == "")
        #expect(expired.stderr == "syncctl: the change log of posts starts after that change (the oldest --since it answers is 3); "
                + "list the source again ('syncctl list posts') and follow from the change number 'syncctl status posts' shows\n")
        await fixture.stop()
    }

    @Test(arguments: [
        (["--since", "-1"], "invalid --since '-1' (expected a change number: the seq of 'syncctl changes' or 'syncctl status')"),
        (["--limit", "0"], "invalid --limit '0' (expected 1 to 10000)"),
        (["--limit", "10001"], "invalid --limit '10001' (expected 1 to 10000)"),
    ])
    func badNumbersAreUsageErrorsThatCallNothing(arguments: [String], message: String) async throws {
        let fixture = try ControlServerFixture()
        let refused = try await runner.syncctl(fixture, ["changes", "posts"] + arguments)
        #expect(refused.status == 2 && refused.stdout == "")
        #expect(refused.stderr == "syncctl: \(message)\nTry 'syncctl changes --help' for more information.\n")
        await fixture.stop()
    }
}
