import Testing
@testable import SyncControl

/// What `syncctl logout` prints, from the status read just before it.
@Suite("syncctl logout summary")
struct LogoutSummaryTests {
    func status(_ sources: [(pending: Int64, parked: Int64, conflicts: Int64)]) -> JSONObject {
        JSONObject([
            ("daemon", .object(JSONObject([("account", .string("default"))]))),
            ("sources", .array(sources.enumerated().map { index, source in
                .object(JSONObject([("name", .string("s\(index)")), ("records", .integer(10)), ("pending", .integer(source.pending)),
                                    ("parked", .integer(source.parked)), ("conflicts", .integer(source.conflicts))]))
            })),
        ])
    }

    @Test func parkedChangesAreCountedOnceAsThePendingCountHoldsThemAndConflictsAreAdded() {
        // Two records pending, one of them parked; one record in conflict: three records' changes go.
        let text = LogoutCommand.summary(of: status([(pending: 2, parked: 1, conflicts: 1)]), discardPending: true)
        #expect(text == "Logged out of account default: erased the cache and state of 1 source (10 cached records), "
                + "and the local changes of 3 records not confirmed by the server")
    }

    @Test func withoutDiscardingNothingIsSaidOfChanges() {
        let text = LogoutCommand.summary(of: status([(pending: 0, parked: 0, conflicts: 0), (pending: 0, parked: 0, conflicts: 0)]),
                                         discardPending: false)
        #expect(text == "Logged out of account default: erased the cache and state of 2 sources (20 cached records)")
    }
}
