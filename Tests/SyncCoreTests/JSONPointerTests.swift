import Testing
@testable import SyncCore

@Suite("JSONValue.value(at:): RFC 6901 evaluation")
struct JSONPointerTests {
    static let document: JSONValue = {
        let text = #"{"next":"?page=2","links":{"next":null},"a/b":{"m~n":[10,20,{"x":"y"}]},"":1}"#
        return (try? JSONValue(parsing: Array(text.utf8))) ?? .null
    }()

    @Test("members, escaped names, array indices", arguments: [
        (["next"], JSONValue.string("?page=2")),
        (["links", "next"], .null),
        (["a/b", "m~n", "1"], .integer(20)),
        (["a/b", "m~n", "2", "x"], .string("y")),
        ([""], .integer(1)),
    ])
    func found(tokens: [String], expected: JSONValue) {
        #expect(Self.document.value(at: tokens) == expected)
    }

    @Test("missing, out of range, non-canonical indices and paths through scalars give nil", arguments: [
        ["next_url"], ["links", "next", "href"], ["a/b", "m~n", "3"], ["a/b", "m~n", "01"], ["a/b", "m~n", "-"], ["next", "0"],
    ])
    func missing(tokens: [String]) {
        #expect(Self.document.value(at: tokens) == nil)
    }

    @Test("the empty pointer is the whole document")
    func whole() {
        #expect(Self.document.value(at: []) == Self.document)
    }
}
