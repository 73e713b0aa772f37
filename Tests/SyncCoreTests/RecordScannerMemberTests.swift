// RecordScanner's fast path through a record's members (RecordScanner+Members.swift) against the
// state machine alone (the reference scanner, which never takes it): the same records, IDs, versions,
// errors and error offsets for members of every kind, for every byte out of place that the fast path
// hands back, and with the chunk cut at every offset (so that it also hands back at each).

@testable import SyncCore
import Testing

/// Expects the same outcome with the fast path as without, whole and with one cut at every offset.
@discardableResult
private func expectSameAsTheStateMachine(
    _ text: String, options: RecordScannerOptions = RecordScannerOptions(versionField: "v"),
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> ScanOutcome {
    let document = Array(text.utf8)
    for cut in 0...document.count {
        // The same cut for both: where a record over the size limit is refused depends on it.
        let cuts = cut == 0 ? [] : [cut]
        let reference = scan(document, options: options, cuts: cuts, skipsByBlocks: false)
        let fast = scan(document, options: options, cuts: cuts, skipsByBlocks: true)
        #expect(fast == reference, "cut at \(cut) of \(text.debugDescription)", sourceLocation: sourceLocation)
        if fast != reference { break }
    }
    return scan(document, options: options, cuts: [], skipsByBlocks: false)
}

/// Members of every kind the fast path reads or hands back, each in a record of its own.
private let members: [String] = [
    #""s":"plain""#, #""s":"""#, #""s":"esc\"aped""#, #""s":"é""#, #""s":"ctl\#u{01}""#,
    #""n":12345"#, #""n":0"#, #""n":-7"#, #""n":1.5"#, #""n":1e9"#, #""n":1E+2"#, #""n":12."#, #""n":01"#,
    #""l":true"#, #""l":false"#, #""l":null"#, #""l":tru"#, #""l":nul"#, #""l":trUe"#, #""l":falsey"#,
    #""o":{"a":1,"b":"x","c":[1,{"d":null}]}"#, #""a":[1,"x",true]"#, #""e":{}"#,
    #""k\u0069":1"#, #""ké":1"#, #""x""#, #""x"1"#, #""x"::1"#, #""x":"#, #""x":,"#, #""x":}"#, #""x":]"#,
    #""a":[]"#, #""a":[ ]"#, #""a":["x", 1 ,true,null ]"#, #""a":[1,]"#, #""a":[,1]"#, #""a":[1 2]"#, #""a":["é"]"#,
    #""a":[1.5]"#, #""a":[[1]]"#, #""a":[{}]"#, #""a":[1}"#, #""a":["x"#,
    #""x":1 "y":2"#, #""x":1,,"y":2"#, #""x":1,}"#, #""x":1,"y""#, #""x":1]"#, #""x":"a"x"#,
    #""s":"日本語 😀 Größe""#, #""名前":"値""#, #""id":"é1""#,
    "\"s\":\"a\u{80}\"", "\"s\":\"\u{7F}\"",
    #" "x" : 1 , "y" : "z" "#, "\n\t\"x\"\r\n:\n\"y\"\n,\n\"z\":1\n",
    // Indentation, read four spaces at a time: runs of 3 to 9, spaces mixed with tabs and CRs, and a byte that is
    // not whitespace inside the first four.
    "\n   \"x\":\n    1,\n     \"y\":      [\n       \"z\"\n        ]\n         ",
    "\n  \t \"x\":  \r  1 ,    \t\"y\":2", "\n  x \"y\":1", "    \"x\"    :    \u{0B}1",
]

@Suite("RecordScanner member fast path")
struct RecordScannerMemberTests {
    /// Each member before, between and after the ID and version members.
    @Test(arguments: members.indices)
    func everyKindOfMember(_ index: Int) {
        let member = members[index]
        for text in [
            #"[{\#(member),"id":"a","v":"1"}]"#,
            #"[{"id":"a",\#(member),"v":"1"},{"id":"b","v":2}]"#,
            #"[{"id":7,"v":"1",\#(member)}]"#,
            #"{"data":[{"id":"a","v":"1",\#(member)}]}"#,
        ] {
            let options = text.hasPrefix("{") ? RecordScannerOptions(recordsPath: ["data"], versionField: "v")
                : RecordScannerOptions(versionField: "v")
            expectSameAsTheStateMachine(text, options: options)
        }
    }

    /// Invalid UTF-8 in a member name, a value and an ID, at each place in a sequence: handed back, and
    /// the state machine's error at the same byte.
    @Test func invalidUTF8() {
        let bad: [[UInt8]] = [[0x80], [0xC0, 0x80], [0xC3, 0x28], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82],
                              [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE6, 0x97, 0xA5, 0x80]]
        for bytes in bad {
            for template in [#"[{"id":1,"k*":2}]"#, #"[{"id":1,"s":"a*b"}]"#, #"[{"id":"*","v":"1"}]"#, #"[{"id":1,"v":"*"}]"#,
                             #"[{"id":1,"a":["*"]}]"#] {
                let parts = template.split(separator: "*", omittingEmptySubsequences: false).map { Array($0.utf8) }
                let document = parts[0] + bytes + parts[1]
                var reference: ScanOutcome?
                for cut in 0...document.count {
                    let cuts = cut == 0 ? [] : [cut]
                    let expected = scan(document, options: RecordScannerOptions(versionField: "v"), cuts: cuts, skipsByBlocks: false)
                    let fast = scan(document, options: RecordScannerOptions(versionField: "v"), cuts: cuts, skipsByBlocks: true)
                    #expect(fast == expected, "cut at \(cut) of \(document)")
                    if cut == 0 { reference = expected }
                }
                #expect(reference?.error?.kind == .invalidUTF8, "\(document)")
            }
        }
    }

    /// A member name the fast path cannot read after a `,` it read (an escape here) is handed back in the state
    /// after a comma, `.key`, not in the object's first state, which the path does not write for each member.
    @Test func aNameHandedBackAfterACommaIsInTheKeyState() throws {
        var scanner = RecordScanner(options: RecordScannerOptions(), skipsByBlocks: true)
        try scanner.feed(Array("[{".utf8)) { _ in }
        #expect(scanner.state == .keyOrObjectEnd && scanner.inRecord)
        let rest = Array(#""a":1,"b\u0041":2}]"#.utf8)
        let stop = try rest.withUnsafeBufferPointer { try scanner.scanMembers($0, from: 0) { _ in } }
        #expect(stop == 6, "at the second name's quote")
        #expect(scanner.state == .key)
        for text in [#"[{"id":1,"b\u0041":2}]"#, #"[{"id":1,"b\u0041"}]"#, #"[{"id":1,"b\u0041":}]"#, #"[{"id":1,"b\u0041"]"#] {
            expectSameAsTheStateMachine(text)
        }
    }

    /// IDs and versions of every shape: read by the fast path (plain strings, integers) or handed back.
    @Test func idsAndVersions() {
        let ids = [#""a""#, #""""#, "7", "0", "-1", "1.5", "1e3", "true", "null", "{}", "[]", #""é""#, #""a\"b""#,
                   #""12345678""#, "123456789", #""1234567""#]
        let versions = [#""1""#, #""""#, "2", "0", "-3", "2.5", "false", "null", "{}", "[1]", #""é""#, #""x\ny""#]
        for id in ids {
            for version in versions {
                let text = #"[{"id":\#(id),"v":\#(version)},{"v":\#(version),"id":\#(id),"w":1}]"#
                expectSameAsTheStateMachine(text, options: RecordScannerOptions(versionField: "v", maxIDBytes: 8))
            }
        }
        let outcome = expectSameAsTheStateMachine(#"[{"id":"a","v":"x1"},{"id":42,"v":17}]"#)
        #expect(outcome.records.map(\.key) == ["a", "42"])
        #expect(outcome.records.map(\.kind) == [.string, .integer])
        #expect(outcome.records.map(\.version) == ["x1", "17"])
    }

    /// The ID field twice, the ID field that is also the version field, and the last version winning.
    @Test func repeatedAndSharedFields() {
        let twice = expectSameAsTheStateMachine(#"[{"id":"a","x":1,"id":"b"}]"#)
        #expect(twice.error?.kind == .invalidID(index: 0, reason: "ID field appears twice"))
        let shared = expectSameAsTheStateMachine(#"[{"x":1,"v":"a1"}]"#, options: RecordScannerOptions(idField: "v", versionField: "v"))
        #expect(shared.records.first?.key == "a1")
        #expect(shared.records.first?.version == "a1")
        let last = expectSameAsTheStateMachine(#"[{"id":"a","v":"1","x":2,"v":"3"}]"#)
        #expect(last.records.first?.version == "3")
        let missing = expectSameAsTheStateMachine(#"[{"x":1,"y":"z"}]"#)
        #expect(missing.error?.kind == .missingID(index: 0, field: "id"))
    }

    /// A record's member names compared with the previous record's at the same position (`MemberName`): a
    /// name that matches, one that only starts like it or that it only starts like, one written with an escape,
    /// the ID and version fields moved to other positions, the ID field a second time where the previous
    /// record had its first, names of 15 and 16 bytes, and more members than the kept positions: the same
    /// outcome as the state machine's, at every cut.
    @Test func namesAsThePreviousRecordHadThem() throws {
        let long15 = "abcdefghijklmno", long16 = "abcdefghijklmnop"
        let shapes = [
            #"{"id":1,"v":"a","title":"t","\#(long15)":1,"\#(long16)":2}"#,
            #"{"id":2,"v":"b","title":"u","\#(long15)":3,"\#(long16)":4}"#,
            #"{"id":3,"v":"c","titl":"u","\#(long15)x":3,"\#(long16)":4}"#,
            #"{"id":4,"v":"d","titles":"u","abcdefghijklmn":3}"#,
            #"{"id":5,"v":"e","ti\u0074le":"u","tit\"le":1}"#,
            #"{"v":"f","title":"w","id":6}"#,
            #"{"title":"w","id":7,"v":"g"}"#,
            #"{"v":"h","id":8,"x":0}"#,
            #"{"id":9,"v":"i","é":1,"日本":2}"#,
            #"{"id":10,"v":"j","é":1,"日本":2}"#,
            "{" + (0..<20).map { #""m\#($0)":\#($0)"# }.joined(separator: ",") + #","id":11}"#,
            "{" + (0..<20).map { #""m\#($0)":\#($0)"# }.joined(separator: ",") + #","id":12}"#,
        ]
        let outcome = expectSameAsTheStateMachine("[" + shapes.joined(separator: ",") + "]")
        #expect(outcome.records.map(\.key) == (1...12).map(String.init))
        #expect(outcome.records.map(\.version) == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", nil, nil])
        // A name that goes on past the kept one with what could follow a name (a space, then the colon); a
        // member after it, so that the chunk does not end within the 16 bytes compared.
        let longer = expectSameAsTheStateMachine(#"[{"id":1,"v":"a","title":"t"},{"id":2,"v":"b","title :":"u","padding":"0123456789"}]"#)
        #expect(longer.records.map(\.key) == ["1", "2"])
        // The ID field again where the previous record had its first: refused as the state machine refuses it.
        let twice = expectSameAsTheStateMachine(#"[{"id":1,"x":1},{"x":2,"id":2},{"id":3,"id":4}]"#)
        #expect(twice.error?.kind == .invalidID(index: 2, reason: "ID field appears twice"))
        // The ID field that is also the version field, at a kept position.
        let shared = expectSameAsTheStateMachine(#"[{"v":"a1","x":1},{"v":"b2","x":2}]"#, options: RecordScannerOptions(idField: "v", versionField: "v"))
        #expect(shared.records.map(\.key) == ["a1", "b2"])

        // The names are kept by position with their roles (the first record's, for the next).
        var scanner = RecordScanner(options: RecordScannerOptions(versionField: "v"))
        try scanner.feed(Array(#"[{"id":1,"v":"a","title":"t","\#(long16)":1}, "#.utf8)) { _ in }
        #expect((0..<4).map { scanner.memberNames[$0].length } == [2, 1, 5, 0])
        #expect((0..<3).map { scanner.memberNames[$0].role } == [.id, .version, .other])
    }

    /// A record's end and the next record's start, read by the fast path, and everything out of place there.
    @Test func recordBoundaries() {
        for text in [
            #"[{"id":1},{"id":2}]"#, #"[{"id":1} , { "id":2 } ]"#, "[{\"id\":1}\n,\n{\"id\":2}\n]\n",
            "[\n    {\"id\":1}    ,    {    \"id\":2    }    \n]    ", "[{\"id\":1}\n  ,\n      {\"id\":2}]",
            #"[{"id":1},{}]"#, #"[{"id":1},{"x":1}]"#, #"[{"id":1},{"id":2}x"#, #"[{"id":1},[1]]"#, #"[{"id":1},1]"#,
            #"[{"id":1}}"#, #"[{"id":1},,{"id":2}]"#, #"[{"id":1},{ }]"#, #"[{"id":1},{"id":2},]"#, #"[{"id":1}]]"#,
            #"{"data":[{"id":1},{"id":2}],"more":[{"id":3}]}"#,
        ] {
            let options = text.hasPrefix("{") ? RecordScannerOptions(recordsPath: ["data"]) : RecordScannerOptions()
            expectSameAsTheStateMachine(text, options: options)
        }
        let two = expectSameAsTheStateMachine(#"[{"id":"a","v":"1"},{"id":"b","v":"2"}]"#)
        #expect(two.records.map(\.key) == ["a", "b"])
        #expect(two.records.map(\.version) == ["1", "2"])
        let missing = expectSameAsTheStateMachine(#"[{"id":1},{"x":"a"},{"id":3}]"#)
        #expect(missing.error?.kind == .missingID(index: 1, field: "id"))
    }

    /// The record size and depth limits where the fast path reads a record's end or skips an array.
    @Test func limits() {
        let text = #"[{"id":1,"a":"xx"},{"id":2,"a":"xxxxxxxxxxxxxxxxxxxx"},{"id":3}]"#
        let large = expectSameAsTheStateMachine(text, options: RecordScannerOptions(maxRecordBytes: 24))
        #expect(large.error?.kind == .recordTooLarge(index: 1, limit: 24))
        #expect(large.records.count == 1)
        let deep = expectSameAsTheStateMachine(#"[{"id":1,"a":[1,2]}]"#, options: RecordScannerOptions(maxDepth: 2))
        #expect(deep.error?.kind == .depthExceeded(2))
        let enough = expectSameAsTheStateMachine(#"[{"id":1,"a":[1,2]}]"#, options: RecordScannerOptions(maxDepth: 3))
        #expect(enough.count == 1)
    }

    /// Members of records on a longer records path, and of objects nested in a record (read by the fast
    /// path, but their names are not the record's).
    @Test func nestedObjectsAndPaths() {
        let nested = expectSameAsTheStateMachine(#"[{"o":{"id":"inner","v":"9"},"id":"outer","v":"1"}]"#)
        #expect(nested.records.first?.key == "outer")
        #expect(nested.records.first?.version == "1")
        let options = RecordScannerOptions(recordsPath: ["a", "1"], versionField: "v")
        let path = expectSameAsTheStateMachine(#"{"a":[{"id":"no"},[{"id":"yes","v":"2","n":3}]],"b":1}"#, options: options)
        #expect(path.records.map(\.key) == ["yes"])
    }
}
