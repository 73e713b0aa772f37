import Testing
@testable import SyncCore

@Suite("JSONValue")
struct JSONValueTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", true), ("false", false), ("0", 0), ("-0", 0), ("12", 12),
        ("1.5", 1.5), ("-2.5e3", -2500.0), ("1E2", 100.0), ("\"\"", ""), ("\"a\\nb\"", "a\nb"),
        ("[]", []), ("{}", [:]), (" [1, {\"a\": [null]}] ", [1, ["a": [nil]]]),
    ] as [(String, JSONValue)])
    func parsesValidText(text: String, expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test(arguments: [
        "", " ", "nul", "tru", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a:1}", "01", "-", "1.", ".5", "1e", "+1",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\u{01}\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "[1] x", "NaN",
        "Infinity", "'a'", "[", "{\"a\":}",
    ])
    func refusesInvalidText(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func refusesInvalidUTF8() throws {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]) }  // encoded surrogate
        #expect(try JSONValue(parsing: [0x22, 0xC3, 0xA9, 0x22]) == "é")
    }

    @Test func limitsDepth() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        _ = try JSONValue(parsing: ok)
        #expect(throws: JSONParseError(reason: .tooDeep(limit: 64), offset: 64)) { try JSONValue(parsing: deep) }
        let objects = String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: objects) }
        // Very deep input fails cleanly instead of overflowing the stack.
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(repeating: "[", count: 1_000_000)) }
    }

    @Test func limitsSize() {
        #expect(throws: JSONParseError(reason: .tooLarge(limit: 4), offset: 0)) {
            try JSONValue(parsing: "[1,2]", limits: JSONParseLimits(maxDepth: 64, maxBytes: 4))
        }
    }

    @Test func keepsExactIntegers() throws {
        let text = #"{"id":12345678901234,"big":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808}"#
        let value = try JSONValue(parsing: text)
        #expect(value["id"] == .integer(12_345_678_901_234))
        #expect(value["big"] == .integer(Int64.max))
        #expect(value["min"] == .integer(Int64.min))
        #expect(value["over"] == .number(9_223_372_036_854_775_808))
        // 18 digits and fewer are summed directly, longer ones read as text: both exact.
        #expect(try JSONValue(parsing: "[0,-0,7,-42,999999999999999999,-999999999999999999,1234567890123456789,-1234567890123456789]")
            == .array([0, 0, 7, -42, .integer(999_999_999_999_999_999), .integer(-999_999_999_999_999_999),
                       .integer(1_234_567_890_123_456_789), .integer(-1_234_567_890_123_456_789)]))
        #expect(value.serialized() == #"{"id":12345678901234,"big":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808}"#)
    }

    @Test func decodesUnicodeEscapes() throws {
        #expect(try JSONValue(parsing: #""\u00e9\u20AC\ud83d\ude00\/""#) == "é€😀/")
        #expect(try JSONValue(parsing: #""\u0000""#) == .string("\u{0}"))
    }

    @Test func serialisesCompactAndPretty() {
        let value: JSONValue = ["b": [1, 2.5, "x\"y", nil], "a": true, "e": [:], "f": []]
        #expect(value.serialized() == #"{"b":[1,2.5,"x\"y",null],"a":true,"e":{},"f":[]}"#)
        #expect(value.serialized(.pretty) == """
            {
              "b": [
                1,
                2.5,
                "x\\"y",
                null
              ],
              "a": true,
              "e": {},
              "f": []
            }
            """)
        #expect(JSONValue.string("\u{1}\n\t").serialized() == #""\u0001\n\t""#)
        #expect(JSONValue.number(.nan).serialized() == "null")
    }

    /// The text of a top-level member's value, for passing a reply on unchanged: the last one when the key
    /// repeats (as the subscript reads it), never a nested member of the same name.
    @Test func locatesATopLevelMembersText() throws {
        let text = #"{"parameters": {"a": [1, {"parameters": 2}]} , "parameters" :"x\"y","b":{"parameters":3}}"#
        let bytes = Array(text.utf8)
        let parsed = try JSONValue.parsing(bytes, locatingMember: "parameters")
        #expect(parsed.value == (try JSONValue(parsing: text)))
        let member = try #require(parsed.member)
        #expect(String(decoding: bytes[member], as: UTF8.self) == #""x\"y""#)
        #expect(try JSONValue.parsing(Array(#"{"a": {"parameters": 1}}"#.utf8), locatingMember: "parameters").member == nil)
        #expect(try JSONValue.parsing(Array("[1]".utf8), locatingMember: "parameters").member == nil)
        let single = Array(#" {"parameters":{"x":[]}} "#.utf8)
        let range = try #require(try JSONValue.parsing(single, locatingMember: "parameters").member)
        #expect(String(decoding: single[range], as: UTF8.self) == #"{"x":[]}"#)
        #expect(throws: JSONParseError.self) { try JSONValue.parsing(Array(#"{"parameters":}"#.utf8), locatingMember: "parameters") }
    }

    @Test func escapesQuotesBackslashesAndControlCharactersBetweenPlainRuns() throws {
        let text = "ab\"c\\d\u{0}\u{1F}e\u{08}\u{0C}\r\n\tf\u{7F}é😀"
        let expected = #""ab\"c\\d\u0000\u001Fe\b\f\r\n\tf"# + "\u{7F}é😀\""
        #expect(JSONText.quoted(text) == expected)
        #expect(JSONValue.string(text).serializedBytes() == Array(expected.utf8))
        #expect(try JSONValue(parsing: JSONValue.string(text).serialized()) == .string(text))
        // Small (inline) and large strings take the same path.
        #expect(JSONText.quoted("x") == #""x""#)
        #expect(JSONText.quoted(String(repeating: "y", count: 1000) + "\"") == "\"" + String(repeating: "y", count: 1000) + #"\"""#)
    }

    @Test(arguments: [
        #"{"a":[1,-2,3.25,1e-7,"\u0001é😀",true,false,null],"b":{"c":{}}}"#,
        #"[12345678901234,-1,0,1.7976931348623157e+308]"#,
    ])
    func roundTrips(text: String) throws {
        let value = try JSONValue(parsing: text)
        #expect(try JSONValue(parsing: value.serialized()) == value)
        #expect(try JSONValue(parsing: value.serialized(.pretty)) == value)
    }

    @Test func objectKeepsOrderAndLastDuplicateWins() throws {
        let value = try JSONValue(parsing: #"{"z":1,"a":2,"z":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "z"])
        #expect(value["z"] == 3)
        var object: JSONObject = ["x": 1]
        object["y"] = 2
        object["x"] = 3
        #expect(JSONValue.object(object).serialized() == #"{"x":3,"y":2}"#)
        object["x"] = nil
        #expect(object.keys == ["y"])
    }

    @Test func integerAccessors() {
        #expect(JSONValue.number(3.0).integerValue == 3)
        #expect(JSONValue.number(3.5).integerValue == nil)
        #expect(JSONValue.integer(3) == .number(3.0))
        #expect(JSONValue.string("3").integerValue == nil)
    }
}
