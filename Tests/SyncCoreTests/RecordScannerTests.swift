// RecordScanner: valid listings with exact records, invalid ones with exact errors,
// and the same outcome however the input is cut into chunks.

import Testing
import SyncCore

/// A valid document and the records it must produce.
struct ValidListing: Sendable, CustomTestStringConvertible {
    let name: String
    let document: [UInt8]
    var options = RecordScannerOptions()
    let records: [RecordCopy]
    var testDescription: String { name }
}

/// An invalid document and the error it must produce.
struct InvalidListing: Sendable, CustomTestStringConvertible {
    let name: String
    let document: [UInt8]
    var options = RecordScannerOptions()
    let kind: JSONScanError.Kind
    var offset: Int64?
    var testDescription: String { name }
}

private let deepButAllowed = #"[{"id":1,"a":"# + String(repeating: "[", count: 62) + String(repeating: "]", count: 62) + "}]"
private let tooDeep = #"[{"id":1,"a":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}]"

private let validListings: [ValidListing] = [
    ValidListing(name: "top-level array", document: Array(json: #"[{"id":1},{"id":"b","x":null}]"#), records: [
        RecordCopy(0, "1", .integer, bytes: #"{"id":1}"#),
        RecordCopy(1, "b", .string, bytes: #"{"id":"b","x":null}"#),
    ]),
    ValidListing(name: "empty array", document: Array(json: "[]"), records: []),
    ValidListing(name: "empty array with whitespace", document: Array(json: " \t\r\n[ \n ] \n"), records: []),
    ValidListing(
        name: "typical record",
        document: Array(json: #"[{"id":123,"title":"Post","author":"J","body":"long body text here","tags":["a","b"],"lastModified":"2026-11-29T10:00:00Z"}]"#),
        options: RecordScannerOptions(versionField: "lastModified"),
        records: [RecordCopy(0, "123", .integer, version: "2026-11-29T10:00:00Z",
                             bytes: #"{"id":123,"title":"Post","author":"J","body":"long body text here","tags":["a","b"],"lastModified":"2026-11-29T10:00:00Z"}"#)]
    ),
    ValidListing(
        name: "wrapper object with path",
        document: Array(json: #"{"meta":{"data":[{"id":9}],"x":[1,{"data":2}]},"data":[{"id":1}],"next":null,"data2":[]}"#),
        options: RecordScannerOptions(recordsPath: ["data"]),
        records: [RecordCopy(0, "1", .integer, bytes: #"{"id":1}"#)]
    ),
    ValidListing(
        name: "nested path",
        document: Array(json: #"{"result":{"count":2,"items":[{"id":"x"},{"id":"y"}],"more":{"items":5}},"items":7}"#),
        options: RecordScannerOptions(recordsPath: ["result", "items"]),
        records: [RecordCopy(0, "x", .string, bytes: #"{"id":"x"}"#), RecordCopy(1, "y", .string, bytes: #"{"id":"y"}"#)]
    ),
    ValidListing(
        name: "array index in path",
        document: Array(json: #"{"pages":[{"items":[{"id":1}]},{"items":[{"id":2}]}]}"#),
        options: RecordScannerOptions(recordsPath: ["pages", "1", "items"]),
        records: [RecordCopy(0, "2", .integer, bytes: #"{"id":2}"#)]
    ),
    ValidListing(
        name: "array index at the top of the path",
        document: Array(json: #"[[{"id":1}],[{"id":-0},{"id":"0"}]]"#),
        options: RecordScannerOptions(recordsPath: ["1"]),
        records: [RecordCopy(0, "-0", .integer, bytes: #"{"id":-0}"#), RecordCopy(1, "0", .string, bytes: #"{"id":"0"}"#)]
    ),
    ValidListing(
        name: "escaped path key",
        document: Array(json: #"{"a/b~c":[{"id":1}],"d\u0061ta":[]}"#),
        options: RecordScannerOptions(recordsPath: ["a/b~c"]),
        records: [RecordCopy(0, "1", .integer, bytes: #"{"id":1}"#)]
    ),
    ValidListing(
        name: "unicode",
        document: Array(json: #"[{"id":"日本語","title":"😀 é ü ß ∑ 𝄞"}]"#),
        records: [RecordCopy(0, "日本語", .string, bytes: #"{"id":"日本語","title":"😀 é ü ß ∑ 𝄞"}"#)]
    ),
    ValidListing(
        name: "escapes in keys and IDs",
        document: Array(json: #"[{"\u0069d":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC"}]"#),
        records: [RecordCopy(0, "a\"b\\c/d\u{8}\u{C}\n\r\té€", .string, bytes: #"{"\u0069d":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC"}"#)]
    ),
    ValidListing(
        name: "surrogate pair",
        document: Array(json: #"[{"id":"\uD83D\uDE00x\ud834\udd1e"}]"#),
        records: [RecordCopy(0, "😀x𝄞", .string, bytes: #"{"id":"\uD83D\uDE00x\ud834\udd1e"}"#)]
    ),
    ValidListing(
        name: "numbers of all shapes",
        document: Array(json: #"[{"id":-5,"n":[0,-0,7,1.5,-1.5e10,1E+2,1e-2,0.0,0e0,-0.25E-7,123456789012345678901234567890]},{"id":0}]"#),
        records: [
            RecordCopy(0, "-5", .integer, bytes: #"{"id":-5,"n":[0,-0,7,1.5,-1.5e10,1E+2,1e-2,0.0,0e0,-0.25E-7,123456789012345678901234567890]}"#),
            RecordCopy(1, "0", .integer, bytes: #"{"id":0}"#),
        ]
    ),
    ValidListing(
        name: "versions of every type",
        document: Array(json: #"[{"id":1,"v":"a\u0062"},{"v":2.50,"id":2},{"id":3,"v":null},{"id":4,"v":true},{"id":5,"v":{"x":1}},{"id":6},{"id":7,"v":"x","v":[1]}]"#),
        options: RecordScannerOptions(versionField: "v"),
        records: [
            RecordCopy(0, "1", .integer, version: "ab", bytes: #"{"id":1,"v":"a\u0062"}"#),
            RecordCopy(1, "2", .integer, version: "2.50", bytes: #"{"v":2.50,"id":2}"#),
            RecordCopy(2, "3", .integer, bytes: #"{"id":3,"v":null}"#),
            RecordCopy(3, "4", .integer, bytes: #"{"id":4,"v":true}"#),
            RecordCopy(4, "5", .integer, bytes: #"{"id":5,"v":{"x":1}}"#),
            RecordCopy(5, "6", .integer, bytes: #"{"id":6}"#),
            RecordCopy(6, "7", .integer, bytes: #"{"id":7,"v":"x","v":[1]}"#),
        ]
    ),
    ValidListing(
        name: "versions read from the record's bytes or copied, the last one wins",
        document: Array(json: versionsLastWins),
        options: RecordScannerOptions(versionField: "v"),
        records: [
            RecordCopy(0, "1", .integer, version: "plain", bytes: #"{"id":1,"v":"a\"b","v":"plain"}"#),
            RecordCopy(1, "2", .integer, version: "x\u{e9}", bytes: #"{"id":2,"v":"plain","v":"x\u00e9"}"#),
            RecordCopy(2, "\u{e9}", .string, version: "2026-11-29T10:00:00Z", bytes: #"{"v":"2026-11-29T10:00:00Z","id":"é"}"#),
            RecordCopy(3, "3", .integer, version: "é😀", bytes: #"{"id":3,"v":"é😀"}"#),
            RecordCopy(4, "4", .integer, bytes: #"{"id":4,"v":"t","v":null}"#),
            RecordCopy(5, "5", .integer, version: "-1.5e3", bytes: #"{"id":5,"v":{"a":"b"},"v":-1.5e3}"#),
            RecordCopy(6, "6", .integer, bytes: #"{"id":6,"v":"t","v":[]}"#),
        ]
    ),
    ValidListing(
        name: "ID and version fields named otherwise, nested look-alikes ignored",
        document: Array(json: #"[{"id":5,"meta":{"uuid":"no","updatedAt":"no"},"uuid":"u-1","updatedAt":"t1"}]"#),
        options: RecordScannerOptions(idField: "uuid", versionField: "updatedAt"),
        records: [RecordCopy(0, "u-1", .string, version: "t1", bytes: #"{"id":5,"meta":{"uuid":"no","updatedAt":"no"},"uuid":"u-1","updatedAt":"t1"}"#)]
    ),
    ValidListing(
        name: "ID field is also the version field",
        document: Array(json: #"[{"rev":"r1"}]"#),
        options: RecordScannerOptions(idField: "rev", versionField: "rev"),
        records: [RecordCopy(0, "r1", .string, version: "r1", bytes: #"{"rev":"r1"}"#)]
    ),
    ValidListing(
        name: "deep but allowed nesting",
        document: Array(json: deepButAllowed),
        records: [RecordCopy(0, "1", .integer, bytes: String(deepButAllowed.dropFirst().dropLast()))]
    ),
    ValidListing(
        name: "whitespace everywhere",
        document: Array(json: " \t\n\r[ \n{ \"id\" :\t1 , \"x\" : [ 1 , { } , [ ] ] } \r\n, {\"id\":\"2\"}\n] \n"),
        records: [
            RecordCopy(0, "1", .integer, bytes: "{ \"id\" :\t1 , \"x\" : [ 1 , { } , [ ] ] }"),
            RecordCopy(1, "2", .string, bytes: "{\"id\":\"2\"}"),
        ]
    ),
    ValidListing(
        name: "ID exactly at the length limit",
        document: Array(json: #"[{"id":"\u0061bcd"},{"id":1234}]"#),
        options: RecordScannerOptions(maxIDBytes: 4),
        records: [RecordCopy(0, "abcd", .string, bytes: #"{"id":"\u0061bcd"}"#), RecordCopy(1, "1234", .integer, bytes: #"{"id":1234}"#)]
    ),
    ValidListing(
        name: "escaped NUL, DEL and U+2028 in strings",
        document: Array(json: "[{\"id\":\"a\\u0000b\u{7F}\u{2028}\"}]"),
        records: [RecordCopy(0, "a\u{0}b\u{7F}\u{2028}", .string, bytes: "{\"id\":\"a\\u0000b\u{7F}\u{2028}\"}")]
    ),
]

private let invalidListings: [InvalidListing] = [
    InvalidListing(name: "HTML error page", document: Array(json: "<!DOCTYPE html><html><body>502</body></html>"),
                   kind: .syntax("unexpected character '<'"), offset: 0),
    InvalidListing(name: "empty input", document: [], kind: .truncated, offset: 0),
    InvalidListing(name: "only whitespace", document: Array(json: " \n"), kind: .truncated, offset: 2),
    InvalidListing(name: "truncated mid-record", document: Array(json: #"[{"id":1},{"id":2,"ti"#), kind: .truncated, offset: 21),
    InvalidListing(name: "truncated after a record", document: Array(json: #"[{"id":1}"#), kind: .truncated),
    InvalidListing(name: "truncated in an escape", document: Array(json: #"[{"id":"\u00"#), kind: .truncated),
    InvalidListing(name: "truncated in a literal", document: Array(json: #"[{"id":1,"x":nu"#), kind: .truncated),
    InvalidListing(name: "trailing bytes", document: Array(json: "[]x"), kind: .trailingBytes, offset: 2),
    InvalidListing(name: "two documents", document: Array(json: "[] []"), kind: .trailingBytes, offset: 3),
    InvalidListing(name: "object at top", document: Array(json: "{}"), kind: .notAnArray(path: ""), offset: 0),
    InvalidListing(name: "number at top", document: Array(json: "123"), kind: .notAnArray(path: ""), offset: 0),
    InvalidListing(name: "number at top then space", document: Array(json: " -1.5e3 "), kind: .notAnArray(path: ""), offset: 1),
    InvalidListing(name: "string at top", document: Array(json: #""abc""#), kind: .notAnArray(path: "")),
    InvalidListing(name: "null at top", document: Array(json: "null"), kind: .notAnArray(path: "")),
    InvalidListing(name: "record is a number", document: Array(json: "[1]"), kind: .recordNotObject(index: 0), offset: 1),
    InvalidListing(name: "second record is a string", document: Array(json: #"[{"id":1},"x"]"#), kind: .recordNotObject(index: 1)),
    InvalidListing(name: "record is an array", document: Array(json: "[[]]"), kind: .recordNotObject(index: 0)),
    InvalidListing(name: "record without ID", document: Array(json: #"[{"id":1},{"title":"x","meta":{"id":2}}]"#),
                   kind: .missingID(index: 1, field: "id")),
    InvalidListing(name: "ID with a fraction", document: Array(json: #"[{"id":1.5}]"#),
                   kind: .invalidID(index: 0, reason: "ID must be a string or an integer")),
    InvalidListing(name: "ID with an exponent", document: Array(json: #"[{"id":1e3}]"#),
                   kind: .invalidID(index: 0, reason: "ID must be a string or an integer")),
    InvalidListing(name: "ID true", document: Array(json: #"[{"id":true}]"#),
                   kind: .invalidID(index: 0, reason: "ID must be a string or an integer")),
    InvalidListing(name: "ID null", document: Array(json: #"[{"id":null}]"#),
                   kind: .invalidID(index: 0, reason: "ID must be a string or an integer")),
    InvalidListing(name: "ID object", document: Array(json: #"[{"id":{}}]"#),
                   kind: .invalidID(index: 0, reason: "ID must be a string or an integer")),
    InvalidListing(name: "empty ID", document: Array(json: #"[{"id":""}]"#), kind: .invalidID(index: 0, reason: "empty ID")),
    InvalidListing(name: "ID twice", document: Array(json: #"[{"id":1,"\u0069d":2}]"#),
                   kind: .invalidID(index: 0, reason: "ID field appears twice")),
    InvalidListing(name: "string ID too long", document: Array(json: #"[{"id":"abcde"}]"#), options: RecordScannerOptions(maxIDBytes: 4),
                   kind: .invalidID(index: 0, reason: "ID longer than 4 bytes")),
    InvalidListing(name: "escaped ID too long", document: Array(json: #"[{"id":"abc\u00e9"}]"#), options: RecordScannerOptions(maxIDBytes: 4),
                   kind: .invalidID(index: 0, reason: "ID longer than 4 bytes")),
    InvalidListing(name: "integer ID too long", document: Array(json: #"[{"id":-1234}]"#), options: RecordScannerOptions(maxIDBytes: 4),
                   kind: .invalidID(index: 0, reason: "ID longer than 4 bytes")),
    InvalidListing(name: "invalid UTF-8 C3 28", document: Array(json: #"[{"id":""#) + [0xC3, 0x28] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 9),
    InvalidListing(name: "overlong C0 AF", document: Array(json: #"[{"id":""#) + [0xC0, 0xAF] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 8),
    InvalidListing(name: "overlong E0 80 AF", document: Array(json: #"[{"id":""#) + [0xE0, 0x80, 0xAF] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 9),
    InvalidListing(name: "UTF-8 surrogate ED A0 80", document: Array(json: #"[{"id":""#) + [0xED, 0xA0, 0x80] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 9),
    InvalidListing(name: "above U+10FFFF", document: Array(json: #"[{"id":""#) + [0xF4, 0x90, 0x80, 0x80] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 9),
    InvalidListing(name: "lead byte F5", document: Array(json: #"[{"id":""#) + [0xF5, 0x80, 0x80, 0x80] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 8),
    InvalidListing(name: "stray continuation byte", document: Array(json: #"[{"id":"a"#) + [0x80] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 9),
    InvalidListing(name: "truncated UTF-8 sequence", document: Array(json: #"[{"id":""#) + [0xE2, 0x82] + Array(json: #""}]"#),
                   kind: .invalidUTF8, offset: 10),
    InvalidListing(name: "invalid UTF-8 outside strings", document: [0x5B, 0xFF, 0x5D], kind: .invalidUTF8, offset: 1),
    InvalidListing(name: "byte order mark", document: [0xEF, 0xBB, 0xBF] + Array(json: "[]"),
                   kind: .syntax("byte order mark at the start (RFC 8259 §8.1 forbids it)"), offset: 0),
    InvalidListing(name: "lone high surrogate", document: Array(json: #"[{"id":"\uD800"}]"#),
                   kind: .syntax("unpaired UTF-16 surrogate in \\u escape"), offset: 14),
    InvalidListing(name: "high surrogate then letter", document: Array(json: #"[{"id":"\uD800\u0041"}]"#),
                   kind: .syntax("unpaired UTF-16 surrogate in \\u escape")),
    InvalidListing(name: "lone low surrogate", document: Array(json: #"[{"id":"\uDC00"}]"#),
                   kind: .syntax("unpaired UTF-16 surrogate in \\u escape")),
    InvalidListing(name: "bad hex digit", document: Array(json: #"[{"id":"\u12G4"}]"#),
                   kind: .syntax("invalid \\u escape: unexpected character 'G'")),
    InvalidListing(name: "invalid escape", document: Array(json: #"[{"id":"a\qb"}]"#), kind: .syntax("invalid escape \\q"), offset: 10),
    InvalidListing(name: "depth 65", document: Array(json: tooDeep), kind: .depthExceeded(64), offset: 75),
    InvalidListing(name: "depth limit 2", document: Array(json: #"[{"id":1,"a":[]}]"#), options: RecordScannerOptions(maxDepth: 2),
                   kind: .depthExceeded(2), offset: 13),
    InvalidListing(name: "raw tab in string", document: Array(json: "[{\"id\":\"a\tb\"}]"), kind: .controlCharacterInString, offset: 9),
    InvalidListing(name: "raw NUL in key", document: Array(json: "[{\"i\u{0}d\":1}]"), kind: .controlCharacterInString, offset: 4),
    InvalidListing(name: "leading zero", document: Array(json: "[01]"), kind: .syntax("invalid number"), offset: 2),
    InvalidListing(name: "leading zero in a record", document: Array(json: #"[{"id":1,"n":-012}]"#), kind: .syntax("invalid number")),
    InvalidListing(name: "dot without digits", document: Array(json: "[1.]"), kind: .syntax("invalid number"), offset: 3),
    InvalidListing(name: "minus alone", document: Array(json: "[-]"), kind: .syntax("invalid number"), offset: 2),
    InvalidListing(name: "exponent without digits", document: Array(json: #"[{"id":1,"n":1e+}]"#), kind: .syntax("invalid number")),
    InvalidListing(name: "leading dot", document: Array(json: #"[{"id":1,"n":.5}]"#), kind: .syntax("unexpected character '.'")),
    InvalidListing(name: "leading plus", document: Array(json: #"[{"id":1,"n":+1}]"#), kind: .syntax("unexpected character '+'")),
    InvalidListing(name: "hex number", document: Array(json: #"[{"id":1,"n":0x1}]"#), kind: .syntax("unexpected character 'x'")),
    InvalidListing(name: "NaN", document: Array(json: #"[{"id":1,"n":NaN}]"#), kind: .syntax("unexpected character 'N'")),
    InvalidListing(name: "short literal", document: Array(json: "[tru]"), kind: .syntax("invalid literal (expected true)"), offset: 4),
    InvalidListing(name: "capitalised literal", document: Array(json: #"[{"id":1,"x":True}]"#), kind: .syntax("unexpected character 'T'")),
    InvalidListing(name: "lone comma", document: Array(json: "[,]"), kind: .syntax("unexpected character ','"), offset: 1),
    InvalidListing(name: "trailing comma in array", document: Array(json: #"[{"id":1},]"#), kind: .syntax("unexpected character ']'"), offset: 10),
    InvalidListing(name: "trailing comma in object", document: Array(json: #"[{"id":1,}]"#), kind: .syntax("unexpected character '}'")),
    InvalidListing(name: "missing comma", document: Array(json: #"[{"id":1} {"id":2}]"#), kind: .syntax("unexpected character '{'")),
    InvalidListing(name: "missing colon", document: Array(json: #"[{"id" 1}]"#), kind: .syntax("unexpected character '1'")),
    InvalidListing(name: "unquoted key", document: Array(json: "[{id:1}]"), kind: .syntax("unexpected character 'i'")),
    // The token loop's own cases (a name or string starting, ':' and ',' in a container) and their neighbours.
    InvalidListing(name: "comma after the top-level value", document: Array(json: #"[{"id":1}],"#), kind: .trailingBytes, offset: 10),
    InvalidListing(name: "colon in an array", document: Array(json: #"[{"id":1}:]"#), kind: .syntax("unexpected character ':'"), offset: 9),
    InvalidListing(name: "colon twice", document: Array(json: #"[{"id"::1}]"#), kind: .syntax("unexpected character ':'"), offset: 7),
    InvalidListing(name: "string where the colon goes", document: Array(json: #"[{"id" "x":1}]"#), kind: .syntax("unexpected character '\"'"), offset: 7),
    InvalidListing(name: "string right after a value", document: Array(json: #"[{"id":1 "a":2}]"#), kind: .syntax("unexpected character '\"'"), offset: 9),
    InvalidListing(name: "comma right after a colon", document: Array(json: #"[{"id":,1}]"#), kind: .syntax("unexpected character ','"), offset: 7),
    InvalidListing(name: "comma right after a comma", document: Array(json: #"[{"id":1},,{"id":2}]"#), kind: .syntax("unexpected character ','"), offset: 10),
    InvalidListing(name: "single quotes", document: Array(json: "['a']"), kind: .syntax("unexpected character '''")),
    InvalidListing(name: "mismatched bracket", document: Array(json: #"[{"id":1]"#), kind: .syntax("unexpected character ']'")),
    InvalidListing(name: "vertical tab is not whitespace", document: Array(json: "[\u{0B}]"), kind: .syntax("unexpected byte 0x0B")),
    InvalidListing(name: "duplicate path key", document: Array(json: #"{"data":[{"id":1}],"data":[{"id":2}]}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .syntax("duplicate key \"data\"")),
    InvalidListing(name: "duplicate escaped path key", document: Array(json: #"{"data":[],"x":1,"\u0064ata":5}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .syntax("duplicate key \"data\"")),
    InvalidListing(name: "path absent", document: Array(json: #"{"items":[]}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .pathNotFound(path: "/data"), offset: 11),
    InvalidListing(name: "path through a scalar", document: Array(json: #"{"result":5}"#),
                   options: RecordScannerOptions(recordsPath: ["result", "items"]), kind: .pathNotFound(path: "/result/items")),
    InvalidListing(name: "path key on an array", document: Array(json: #"[{"id":1}]"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .pathNotFound(path: "/data"), offset: 0),
    InvalidListing(name: "path index out of range", document: Array(json: #"{"pages":[[],[]]}"#),
                   options: RecordScannerOptions(recordsPath: ["pages", "2"]), kind: .pathNotFound(path: "/pages/2")),
    InvalidListing(name: "path escaped in message", document: Array(json: "{}"),
                   options: RecordScannerOptions(recordsPath: ["a/b~c"]), kind: .pathNotFound(path: "/a~1b~0c")),
    InvalidListing(name: "path value is an object", document: Array(json: #"{"data":{"id":1}}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .notAnArray(path: "/data"), offset: 8),
    InvalidListing(name: "path value is null", document: Array(json: #"{"data":null}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .notAnArray(path: "/data"), offset: 8),
    InvalidListing(name: "syntax error in the wrapper after the records", document: Array(json: #"{"data":[{"id":1}],"x":[1 2]}"#),
                   options: RecordScannerOptions(recordsPath: ["data"]), kind: .syntax("unexpected character '2'")),
]

/// Versions with and without escapes, in one chunk or split, given twice (the last counts).
private let versionsLastWins = #"[{"id":1,"v":"a\"b","v":"plain"},{"id":2,"v":"plain","v":"x\u00e9"},{"v":"2026-11-29T10:00:00Z","id":"é"},"#
    + #"{"id":3,"v":"é😀"},{"id":4,"v":"t","v":null},{"id":5,"v":{"a":"b"},"v":-1.5e3},{"id":6,"v":"t","v":[]}]"#

@Suite("RecordScanner")
struct RecordScannerTests {
    @Test("valid listing", arguments: validListings)
    func valid(_ listing: ValidListing) {
        let outcome = scanEverySplit(listing.document, options: listing.options)
        #expect(outcome.error == nil)
        #expect(outcome.records == listing.records)
        #expect(outcome.count == listing.records.count)
    }

    @Test("invalid listing", arguments: invalidListings)
    func invalid(_ listing: InvalidListing) {
        let outcome = scanEverySplit(listing.document, options: listing.options)
        #expect(outcome.count == nil)
        #expect(outcome.error?.kind == listing.kind)
        if let offset = listing.offset {
            #expect(outcome.error?.offset == offset)
        }
    }

    /// `withVersionBytes` gives the version's UTF-8 bytes however the record was fed; when the version is
    /// its raw text in one chunk they are a slice of the record's bytes (no string was made for it).
    @Test func versionBytesAreTheVersionsUTF8() throws {
        let document = Array(json: versionsLastWins)
        let options = RecordScannerOptions(versionField: "v")
        for cuts in [[]] + (0...document.count).map({ [$0] }) + [Array(0..<document.count)] {
            var scanner = RecordScanner(options: options)
            var start = 0
            var inPlace = 0
            for end in cuts + [document.count] where end >= start {
                try scanner.feed(Array(document[start..<end])) { record in
                    let version = record.version
                    record.withVersionBytes { bytes in
                        #expect(bytes.map(Array.init) == version.map { Array($0.utf8) }, "record \(record.index), cuts \(cuts)")
                        if let bytes, let base = bytes.baseAddress, let recordBase = record.bytes.baseAddress,
                           base >= recordBase && base + bytes.count <= recordBase + record.bytes.count {
                            inPlace += 1
                        }
                    }
                }
                start = end
            }
            #expect(try scanner.finish() == 7)
            if cuts.isEmpty {
                // Records 0, 2, 3 and 5: raw text; 1 has an escape, 4 and 6 have none.
                #expect(inPlace == 4)
            }
        }
    }

    /// `withIDBytes` gives the ID key's UTF-8 bytes however the record was fed; when the ID is its raw text in
    /// one chunk (no escape) they are a slice of the record's bytes: the scanner made no string for it.
    @Test func idBytesAreTheKeysUTF8() throws {
        let document = Array(json: #"[{"id":17,"a":1},{"a":"x","id":"b\u0063"},{"id":"plain"},{"id":"é€"},{"id":"t\"q","n":null}]"#)
        let expected: [(String, RecordID.Kind)] = [("17", .integer), ("bc", .string), ("plain", .string), ("é€", .string), ("t\"q", .string)]
        for cuts in [[]] + (0...document.count).map({ [$0] }) {
            var scanner = RecordScanner(options: RecordScannerOptions())
            var start = 0
            var inPlace: [Int] = []
            for end in cuts + [document.count] where end >= start {
                try scanner.feed(Array(document[start..<end])) { record in
                    let id = record.id
                    #expect((id.key, id.kind) == expected[record.index], "record \(record.index), cuts \(cuts)")
                    #expect(record.idKind == id.kind)
                    record.withIDBytes { bytes in
                        #expect(Array(bytes) == Array(id.key.utf8), "record \(record.index), cuts \(cuts)")
                        if let base = bytes.baseAddress, let recordBase = record.bytes.baseAddress,
                           base >= recordBase && base + bytes.count <= recordBase + record.bytes.count {
                            inPlace.append(record.index)
                        }
                    }
                }
                start = end
            }
            #expect(try scanner.finish() == 5)
            if cuts.isEmpty {
                // Raw text: 17, "plain", "é€"; the escapes of 1 and 4 made strings.
                #expect(inPlace == [0, 2, 3])
            }
        }
    }

    @Test func recordsBeforeAnErrorAreEmittedInOrder() {
        let outcome = scanEverySplit(Array(json: #"[{"id":1},{"id":2},{"id":2.5}]"#), options: RecordScannerOptions())
        #expect(outcome.records.map(\.key) == ["1", "2"])
        #expect(outcome.error?.kind == .invalidID(index: 2, reason: "ID must be a string or an integer"))
    }

    @Test func largeRecordsSpanningManyChunks() {
        var document = Array(json: "[")
        var expected: [RecordCopy] = []
        for index in 0..<40 {
            let text = String(repeating: "é漢😀x\\n", count: index * 50)
            let record = #"{"title":"\#(text)","id":"r\#(index)","n":[\#(index),-\#(index).5e1]}"#
            if index > 0 { document += Array(json: ",") }
            document += Array(json: record)
            expected.append(RecordCopy(index, "r\(index)", .string, bytes: record))
        }
        document += Array(json: "]")
        let outcome = scanEverySplit(document, options: RecordScannerOptions(), randomSplits: 8)
        #expect(outcome.records == expected)
        #expect(outcome.count == 40)
        for size in [1, 7, 64, 4096] {
            let cuts = Array(stride(from: size, to: document.count, by: size))
            #expect(scan(document, options: RecordScannerOptions(), cuts: cuts) == outcome)
        }
    }

    @Test func countsBytesAndRecords() throws {
        var scanner = RecordScanner(options: RecordScannerOptions())
        try scanner.feed(Array(json: #"[{"id":1},{"id""#)) { _ in }
        #expect(scanner.bytesConsumed == 15)
        #expect(scanner.recordCount == 1)
        try scanner.feed(Array(json: #":2}] "#)) { _ in }
        #expect(try scanner.finish() == 2)
        #expect(scanner.bytesConsumed == 20)
        #expect(scanner.recordCount == 2)
    }

    @Test func deadAfterAnError() throws {
        var scanner = RecordScanner(options: RecordScannerOptions())
        #expect(throws: JSONScanError(kind: .recordNotObject(index: 0), offset: 1)) {
            try scanner.feed(Array(json: "[1,")) { _ in }
        }
        #expect(throws: JSONScanError(kind: .recordNotObject(index: 0), offset: 1)) {
            try scanner.feed(Array(json: #"{"id":1}]"#)) { _ in }
        }
        #expect(throws: JSONScanError(kind: .recordNotObject(index: 0), offset: 1)) {
            _ = try scanner.finish()
        }
    }

    struct Stop: Error {}

    @Test func callbackErrorIsRethrownAndStopsTheScanner() throws {
        var scanner = RecordScanner(options: RecordScannerOptions())
        var seen = 0
        #expect(throws: Stop.self) {
            try scanner.feed(Array(json: #"[{"id":1},{"id":2},{"id":3}]"#)) { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(seen == 2)
        #expect(scanner.recordCount == 1)
        #expect(throws: JSONScanError(kind: .callbackFailed, offset: 17)) { _ = try scanner.finish() }
    }

    @Test func emptyChunksAreIgnored() throws {
        var scanner = RecordScanner(options: RecordScannerOptions())
        try scanner.feed([]) { _ in }
        try scanner.feed(Array(json: "[]")) { _ in }
        try scanner.feed([]) { _ in }
        #expect(try scanner.finish() == 0)
    }
}
