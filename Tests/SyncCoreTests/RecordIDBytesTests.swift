import Testing
@testable import SyncCore

/// Record IDs and client IDs are the same only when their UTF-8 bytes are: `"\u{E9}"` (NFC) and `"e\u{301}"`
/// (NFD) are different records to a server, though Swift's `String.==` holds them equal.
@Suite("IDs as bytes")
struct RecordIDBytesTests {
    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"

    @Test func stringsAreTheSameIDOnlyWithTheSameBytes() {
        #expect(Self.nfc == Self.nfd, "Swift's String.== uses canonical equivalence")
        #expect(!Self.nfc.isSameID(as: Self.nfd))
        #expect(Self.nfc.isSameID(as: "\u{E9}"))
        #expect(Set<RecordID>([RecordID(Self.nfc), RecordID(Self.nfd)]).count == 2)
        var byID: [RecordID: Int] = [:]
        byID[RecordID(Self.nfc)] = 1
        #expect(byID[RecordID(Self.nfd)] == nil)
    }

    @Test func aLostCreateIsLookedForAmongIDsNotInThePreviousListingByBytes() {
        // The listing had the NFC record before; the NFD one is new, and is the create.
        var search = LostCreateSearch(clientID: "c-1", sent: ["title": "t"], idField: "id", clientIDField: nil,
                                      previousIDs: [RecordID(Self.nfc)])
        search.consider(id: Self.nfc, idIsInteger: false, body: ["id": .string(Self.nfc), "title": "t"])
        search.consider(id: Self.nfd, idIsInteger: false, body: ["id": .string(Self.nfd), "title": "t"])
        #expect(search.decision == .adopt(id: Self.nfd, idIsInteger: false))
    }

    @Test func aLostCreateIsFoundByItsClientIDsBytes() {
        var search = LostCreateSearch(clientID: Self.nfc, sent: ["title": "t"], idField: "id", clientIDField: "cid",
                                      previousIDs: [])
        search.consider(id: "1", idIsInteger: true, body: ["id": 1, "cid": .string(Self.nfd)])
        #expect(search.decision == .resend, "a canonically equivalent client ID is someone else's")
        search.consider(id: "2", idIsInteger: true, body: ["id": 2, "cid": .string(Self.nfc)])
        #expect(search.decision == .adopt(id: "2", idIsInteger: true))
    }

    @Test func clientIDDuplicatesGroupByBytes() {
        var search = ClientIDDuplicates(field: "cid")
        let records: [(String, JSONValue)] = [("1", ["cid": .string(Self.nfc)]), ("2", ["cid": .string(Self.nfd)]),
                                              ("3", ["cid": .string(Self.nfc)])]
        for (_, body) in records { search.tally(body) }
        let needsSecondPass = search.needsSecondPass()
        #expect(needsSecondPass)
        for (id, body) in records { search.collect(id: id, body: body) }
        #expect(search.duplicates.map(\.recordIDs) == [["1", "3"]])
        #expect(search.duplicates.map { Array($0.clientID.utf8) } == [Array(Self.nfc.utf8)])
    }

    @Test func integerClientIDsOfAnySizeAreKeptAsWritten() throws {
        let big = try JSONValue(parsing: #"{"id":1,"cid":12345678901234567890}"#)
        #expect(ClientIDDuplicates.clientID(of: big, field: "cid") == "12345678901234567890")
        var search = ClientIDDuplicates(field: "cid")
        let other = try JSONValue(parsing: #"{"id":2,"cid":12345678901234567891}"#)
        let again = try JSONValue(parsing: #"{"id":3,"cid":12345678901234567890}"#)
        for body in [big, other, again] { search.tally(body) }
        let needsSecondPass = search.needsSecondPass()
        #expect(needsSecondPass)
        for (id, body) in [("1", big), ("2", other), ("3", again)] { search.collect(id: id, body: body) }
        #expect(search.duplicates == [.init(clientID: "12345678901234567890", recordIDs: ["1", "3"], count: 2)])
    }
}
