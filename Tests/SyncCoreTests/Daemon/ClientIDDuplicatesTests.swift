import Testing
@testable import SyncCore

/// Records of one listing that carry one client ID in `ClientIDField=`: a create the server took twice.
@Suite("ClientIDDuplicates")
struct ClientIDDuplicatesTests {
    /// Both passes over `records`, as the engine runs them.
    private func search(_ records: [(String, JSONValue)], field: String = "client_id") -> ClientIDDuplicates {
        var search = ClientIDDuplicates(field: field)
        for (_, body) in records { search.tally(body) }
        if search.needsSecondPass() {
            for (id, body) in records { search.collect(id: id, body: body) }
        }
        return search
    }

    @Test func distinctClientIDsNeedNoSecondPassAndNoNotice() {
        var search = ClientIDDuplicates(field: "client_id")
        for body: JSONValue in [["id": 1, "client_id": "a"], ["id": 2, "client_id": "b"], ["id": 3, "client_id": 7],
                                ["id": 4], ["id": 5, "client_id": ""], ["id": 6, "client_id": nil], "not an object"] {
            search.tally(body)
        }
        let needsSecondPass = search.needsSecondPass()
        #expect(!needsSecondPass)
        #expect(search.duplicates.isEmpty)
        #expect(search.notice == nil)
    }

    @Test func aClientIDOnTwoRecordsIsNamedWithBoth() {
        let found = search([("1", ["id": 1, "client_id": "a"]), ("2", ["id": 2, "client_id": "b"]),
                            ("3", ["id": 3, "client_id": "a"])])
        #expect(found.duplicates == [.init(clientID: "a", recordIDs: ["1", "3"], count: 2)])
        #expect(found.notice == "the server took one create more than once: 2 records carry client_id=\"a\" (1, 3); "
                + "syncd keeps every record the server lists: remove the extra ones on the server")
    }

    /// Callers outside ControlGroup= read neither the client ID nor the record IDs (both the server's text).
    @Test func thePublicNoticeQuotesNoValueTheServerWrote() {
        let token = "tkn_S3cr3t/Ab+Cd=Ef9xyz"
        let found = search([("1", ["id": "1", "cid": .string("c-" + token)]), ("2", ["id": "2", "cid": .string("c-" + token)])],
                           field: "cid")
        #expect(found.publicNotice == "the server took one create more than once: 2 records carry one cid= value; "
                + "syncd keeps every record the server lists: remove the extra ones on the server "
                + "(root and members of ControlGroup= see which records)")
        #expect(found.notice?.contains("c-" + token) == true, "the privileged notice names it (redacted by the engine)")
        #expect(search([("1", ["cid": "a"]), ("2", ["cid": "b"])], field: "cid").publicNotice == nil)
    }

    @Test func integerAndStringClientIDsWithTheSameDigitsAreOneClientID() {
        let found = search([("1", ["id": 1, "cid": 42]), ("2", ["id": 2, "cid": "42"])], field: "cid")
        #expect(found.duplicates == [.init(clientID: "42", recordIDs: ["1", "2"], count: 2)])
    }

    @Test func emptyAndMissingClientIDsAreNeverDuplicates() {
        let found = search([("1", ["id": 1, "client_id": ""]), ("2", ["id": 2, "client_id": ""]), ("3", ["id": 3]), ("4", ["id": 4])])
        #expect(found.duplicates.isEmpty)
        #expect(found.notice == nil)
    }

    @Test func manyRecordsAndManyGroupsAreNamedWithinBounds() {
        var records: [(String, JSONValue)] = []
        for index in 0..<8 { records.append(("x\(index)", ["client_id": "x"])) }
        for group in ["p", "q", "r", "s"] {
            records.append(("\(group)1", ["client_id": .string(group)]))
            records.append(("\(group)2", ["client_id": .string(group)]))
        }
        let found = search(records)
        #expect(found.duplicates.map(\.clientID) == ["x", "p", "q", "r", "s"])
        #expect(found.duplicates[0].recordIDs == ["x0", "x1", "x2", "x3", "x4"])
        #expect(found.duplicates[0].count == 8)
        #expect(found.notice == "the server took one create more than once: 8 records carry client_id=\"x\" (x0, x1, x2, x3, x4 "
                + "and 3 more); 2 records carry client_id=\"p\" (p1, p2); 2 records carry client_id=\"q\" (q1, q2); 2 more client IDs; "
                + "syncd keeps every record the server lists: remove the extra ones on the server")
        #expect(found.publicNotice == "the server took one create more than once: 8 records carry one client_id= value; "
                + "2 records carry one client_id= value; 2 records carry one client_id= value; 2 more client IDs; "
                + "syncd keeps every record the server lists: remove the extra ones on the server "
                + "(root and members of ControlGroup= see which records)")
    }

    @Test func aClientIDFieldThatIsNotSetInTheListingFindsNothing() {
        let found = search([("1", ["id": 1, "client_id": "a"]), ("2", ["id": 2, "client_id": "a"])], field: "uuid")
        #expect(found.duplicates.isEmpty)
    }
}
