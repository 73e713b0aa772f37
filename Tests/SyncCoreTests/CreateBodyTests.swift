import Testing
@testable import SyncCore

@Suite("CreateBody: a create's body with or without the client's ID")
struct CreateBodyTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("SendClientID=yes sends the record as queued, its ID included")
    func withID() {
        let queued = Self.bytes(#"{"id":"c1","title":"a"}"#)
        #expect(CreateBody.bytes(queued, idField: "id", sendClientID: true) == queued)
    }

    @Test("SendClientID=no leaves out the IDField member, and only it; the other members keep their order and values")
    func withoutID() {
        let queued = Self.bytes(#"{"title":"a","id":"c1","client_id":"c1","n":7}"#)
        #expect(CreateBody.bytes(queued, idField: "id", sendClientID: false) == Self.bytes(#"{"title":"a","client_id":"c1","n":7}"#))
        let keyed = Self.bytes(#"{"key":12,"id":"stays"}"#)
        #expect(CreateBody.bytes(keyed, idField: "key", sendClientID: false) == Self.bytes(#"{"id":"stays"}"#))
    }

    @Test("a body without the member, or that is not an object, goes out unchanged", arguments: [
        #"{"title":"a"}"#, #"[1,2]"#, "not json",
    ])
    func unchanged(text: String) {
        #expect(CreateBody.bytes(Self.bytes(text), idField: "id", sendClientID: false) == Self.bytes(text))
    }
}
