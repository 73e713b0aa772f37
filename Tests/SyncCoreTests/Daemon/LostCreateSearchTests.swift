import Testing
@testable import SyncCore

/// The decision about a create whose answer was lost, from the listing pulled after it.
@Suite("LostCreateSearch")
struct LostCreateSearchTests {
    /// The create of "c-1" sent `{"id": "c-1", "title": "t", "n": 2}`; the listing had records 1 and 2 before.
    private func search(clientIDField: String? = nil, _ records: [(String, JSONValue)]) -> LostCreateSearch.Decision {
        var search = LostCreateSearch(clientID: "c-1", sent: ["id": "c-1", "title": "t", "n": 2], idField: "id",
                                      clientIDField: clientIDField, previousIDs: ["1", "2"])
        for (id, body) in records { search.consider(id: id, idIsInteger: true, body: body) }
        return search.decision
    }

    @Test func oneNewExactMatchIsAdopted() {
        let decision = search([("1", ["id": 1, "title": "t", "n": 2]),      // in the listing before: not it
                               ("3", ["id": 3, "title": "other", "n": 2]),  // a field differs
                               ("4", ["id": 4, "title": "t", "n": 2.0, "extra": true])])  // the server adds members
        #expect(decision == .adopt(id: "4", idIsInteger: true))
    }

    @Test func noMatchSendsItAgain() {
        #expect(search([]) == .resend)
        #expect(search([("2", ["id": 2, "title": "t", "n": 2]), ("3", ["id": 3, "title": "t"]), ("4", "not an object")]) == .resend)
    }

    @Test func severalNewMatchesAreParkedNamingThem() {
        #expect(search([("3", ["id": 3, "title": "t", "n": 2]), ("4", ["id": 4, "title": "t", "n": 2])]) == .park(ids: ["3", "4"]))
    }

    @Test func parkingNamesAtMostFiveAndStopsLooking() {
        var search = LostCreateSearch(clientID: "c-1", sent: ["title": "t"], idField: "id", clientIDField: nil, previousIDs: [])
        for id in 1...5 { search.consider(id: String(id), idIsInteger: true, body: ["title": "t"]) }
        #expect(!search.wantsMore)
        search.consider(id: "6", idIsInteger: true, body: ["title": "t"])
        #expect(search.decision == .park(ids: ["1", "2", "3", "4", "5"]))
    }

    @Test func clientIDFieldFindsTheRecordWhateverItsOtherFields() {
        // Changed by the server: found by the client's ID all the same.
        #expect(search(clientIDField: "client_id", [("5", ["id": 5, "title": "changed", "client_id": "c-1"]),
                                                    ("3", ["id": 3, "title": "t", "n": 2, "client_id": ""])])
                == .adopt(id: "5", idIsInteger: true))
        // A record of the listing before the create is not it, though it carries the same value (a record may
        // set that member itself): adopting it would send the record's later changes to someone else's record.
        #expect(search(clientIDField: "client_id", [("2", ["id": 2, "title": "other", "client_id": "c-1"])]) == .resend)
        #expect(search(clientIDField: "client_id", [("2", ["id": 2, "client_id": "c-1"]), ("6", ["id": 6, "client_id": "c-1"])])
                == .adopt(id: "6", idIsInteger: true))
        // An exact copy without the client's ID is someone else's record.
        #expect(search(clientIDField: "client_id", [("3", ["id": 3, "title": "t", "n": 2])]) == .resend)
        #expect(search(clientIDField: "client_id", [("3", ["client_id": "c-1"]), ("4", ["client_id": "c-1"])]) == .park(ids: ["3", "4"]))
    }

    @Test func clientIDFieldMayHoldANumber() {
        var search = LostCreateSearch(clientID: "42", sent: ["ref": 42], idField: "id", clientIDField: "ref", previousIDs: [])
        search.consider(id: "a", idIsInteger: false, body: ["ref": 41])
        search.consider(id: "b", idIsInteger: false, body: ["ref": 42])
        #expect(search.decision == .adopt(id: "b", idIsInteger: false))
    }

    @Test func clientIDFieldLooksForTheValueTheCreateSent() {
        // The user's record set the member itself: that value is what the server stores, not the client's ID.
        var search = LostCreateSearch(clientID: "c-1", sent: ["title": "t", "ref": "mine"], idField: "id", clientIDField: "ref",
                                      previousIDs: [])
        search.consider(id: "7", idIsInteger: true, body: ["id": 7, "ref": "c-1"])
        search.consider(id: "8", idIsInteger: true, body: ["id": 8, "ref": "mine"])
        #expect(search.decision == .adopt(id: "8", idIsInteger: true))
    }
}
