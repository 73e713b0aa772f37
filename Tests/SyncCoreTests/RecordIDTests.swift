// RecordID: identity by canonical text, and JSON re-encoding.

import Testing
import SyncCore

@Suite("RecordID")
struct RecordIDTests {
    @Test func integerAndStringWithTheSameTextAreTheSameID() {
        let integer = RecordID(key: "1", kind: .integer)
        let string = RecordID(key: "1", kind: .string)
        #expect(integer == string)
        #expect(Set([integer, string]).count == 1)
    }

    @Test func comparesBytesWithoutUnicodeNormalisation() {
        let precomposed = RecordID(key: "\u{E9}", kind: .string)
        let decomposed = RecordID(key: "e\u{301}", kind: .string)
        #expect(precomposed != decomposed)
        #expect(Set([precomposed, decomposed]).count == 2)
        #expect(decomposed < precomposed)
    }

    @Test func ordersByUTF8Bytes() {
        let ids = ["b", "a", "10", "9", "ä", "Z"].map { RecordID(key: $0, kind: .string) }
        #expect(ids.sorted().map(\.key) == ["10", "9", "Z", "a", "b", "ä"])
    }

    @Test("jsonLiteral", arguments: [
        (RecordID(key: "123", kind: .integer), "123"),
        (RecordID(key: "-5", kind: .integer), "-5"),
        (RecordID(key: "123", kind: .string), "\"123\""),
        (RecordID(key: "a\"b\\c\n\t\u{1}é😀/", kind: .string), #""a\"b\\c\n\t\u0001é😀/""#),
        (RecordID(key: "12a", kind: .integer), "\"12a\""),
        (RecordID(key: "007", kind: .integer), "\"007\""),
    ])
    func jsonLiteral(_ id: RecordID, _ expected: String) {
        #expect(id.jsonLiteral == expected)
    }

    @Test func descriptionIsTheKey() {
        #expect(RecordID(key: "abc", kind: .string).description == "abc")
    }
}
