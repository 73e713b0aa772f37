import Foundation
import Glibc
import SyncCore
import SyncSystem
import Testing
@testable import SyncControl

/// `syncctl status --json` checks the reply's frame and prints the parameters as received
/// (`VarlinkReplyFrame`): well-formed replies give the parameters' exact text, malformed ones a clear error.
@Suite("Varlink reply frame")
struct VarlinkReplyFrameTests {
    static func frame(_ text: String) throws(VarlinkReplyFrame.Malformed) -> VarlinkReplyFrame {
        try VarlinkReplyFrame(message: Array(text.utf8))
    }

    @Test func theParametersAreLocatedWithoutParsingThem() throws {
        let text = #" { "parameters" : {"a":[1,-2.5e+3,true,false,null,"x\"}\\\u00e9"],"b":{}} , "x":"y"} "#
        let frame = try Self.frame(text)
        let parameters = try #require(frame.parameters)
        let bytes = Array(text.utf8)
        #expect(String(decoding: bytes[parameters], as: UTF8.self) == #"{"a":[1,-2.5e+3,true,false,null,"x\"}\\\u00e9"],"b":{}}"#)
        #expect(!frame.hasError && !frame.continues)
        #expect(try Self.frame(#"{"continues":true,"parameters":{}}"#).continues)
        #expect(try Self.frame(#"{"error":"io.syncd.Manager.NoSuchSource","parameters":{"source":"x"}}"#).hasError)
        #expect(try Self.frame("{}").parameters == nil)
    }

    @Test(arguments: [
        ("", "not a JSON object at byte 0: the text ends early (expected an object)"),
        ("hello", "not a JSON object at byte 0: expected an object"),
        (#"{"parameters":{"daemon":{"version":"1.0"#, "not a JSON object at byte 39: the text ends early (an unterminated string)"),
        (#"{"parameters":{"sources":[{},{}"#, "not a JSON object at byte 31: the text ends early (expected ',' or ']' in an array)"),
        (#"{"parameters":{}} {"#, "not a JSON object at byte 18: unexpected text after the object"),
        (#"{"parameters":{"a":tru}}"#, "not a JSON object at byte 19: expected a value"),
        (#"{"parameters":{"a":"\q"}}"#, "not a JSON object at byte 21: a bad escape in a string"),
        ("{\"parameters\":{\"a\":\"\u{1}\"}}", "not a JSON object at byte 20: a control character in a string"),
        (#"{"parameters":{"a":-}}"#, "not a JSON object at byte 20: expected a digit in a number"),
        (#"{"parameters" {}}"#, "not a JSON object at byte 14: expected ':' after a member name"),
    ])
    func malformedRepliesAreRefusedWithWhereAndWhy(text: String, message: String) {
        #expect(throws: VarlinkReplyFrame.Malformed.self) { try Self.frame(text) }
        do {
            _ = try Self.frame(text)
        } catch {
            #expect(error.description == message)
        }
    }

    /// Strings are skipped 8 bytes at a time: a quote, a backslash or a control byte at any offset within a word
    /// is still seen, and bytes of multi-byte UTF-8 or DEL are not mistaken for them.
    @Test(arguments: 0..<20)
    func specialBytesAreSeenAtEveryOffset(offset: Int) throws {
        func reply(_ special: String) -> String {
            #"{"parameters":{"k":""# + String(repeating: "a", count: offset) + special + String(repeating: "b", count: 10) + #""}}"#
        }
        #expect(try Self.frame(reply("\\b")).parameters != nil, "an escape")
        #expect(try Self.frame(reply("é\u{7F}~")).parameters != nil, "UTF-8, DEL and ~ are plain")
        #expect(throws: VarlinkReplyFrame.Malformed.self, "a quote ends the string") { try Self.frame(reply("\"")) }
        for control in ["\u{0}", "\u{1}", "\u{1F}", "\n"] {
            #expect(throws: VarlinkReplyFrame.Malformed.self, "a control byte") { try Self.frame(reply(control)) }
        }
    }

    @Test func aLineBreakOutsideStringsMakesTheReplyMultiline() throws {
        #expect(try !Self.frame(#"{"parameters":{"a":"x y"}}"#).multiline)
        #expect(try Self.frame("{\"parameters\":{\n  \"a\": 1\r\n}}").multiline)
    }

    @Test func nestingIsBounded() throws {
        let deep = #"{"parameters":"# + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}"
        #expect(throws: VarlinkReplyFrame.Malformed.self) { try Self.frame(deep) }
        let fine = #"{"parameters":{"a":"# + String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + "}}"
        #expect(try Self.frame(fine).parameters != nil)
    }
}

/// The built `syncctl status --json` against a socket that answers one canned reply: a malformed reply gets a
/// clear message and the same exit status as the human `syncctl status`, which parses the reply whole.
@Suite("syncctl status --json against malformed replies", .serialized, .system)
struct SyncctlMalformedReplyTests {
    /// Serves `reply` (then closes) to one connection at a socket in a new directory; returns the socket path.
    static func serve(_ reply: [UInt8]) throws -> String {
        let directory = NSTemporaryDirectory() + "syncctl-canned-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/socket"
        let address = try #require(UnixSocketAddress(path: path))
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        try #require(address.bind(listener) == 0)
        try #require(listen(listener, 4) == 0)
        Thread {
            let fd = accept(listener, nil, nil)
            close(listener)
            guard fd >= 0 else { return }
            var byte: UInt8 = 1
            while byte != 0, read(fd, &byte, 1) == 1 {}  // the call, up to its NUL
            _ = reply.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }.start()
        return path
    }

    func syncctl(_ reply: [UInt8], _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = try #require(SyncctlEndToEndTests.binary, "build syncctl first (swift build)")
        let path = try Self.serve(reply)
        return try await onThread {
            try runProcess(binary, ["--socket", path, "--timeout", "10"] + arguments, environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC"])
        }
    }

    @Test(arguments: [
        ("truncated", Array(#"{"parameters":{"daemon":{"version":"1.0"#.utf8), "syncctl: syncd closed the connection", 3),
        ("truncated, NUL-terminated", Array(#"{"parameters":{"sources":[{},{}"#.utf8) + [0],
         "syncctl: unexpected reply from syncd: not a JSON object at byte 31: the text ends early (expected ',' or ']' in an array)", 1),
        ("not JSON", Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8) + [0],
         "syncctl: unexpected reply from syncd: not a JSON object at byte 0: expected an object", 1),
        ("no parameters", Array(#"{"continues":false}"#.utf8) + [0], "syncctl: unexpected reply from syncd: the reply has no parameters", 1),
        ("error", Array(#"{"error":"org.varlink.service.PermissionDenied","parameters":{}}"#.utf8) + [0], "syncctl: permission denied: status needs root", 1),
    ])
    func aMalformedReplyIsAClearErrorWithTheUsualExitStatus(kind: String, reply: [UInt8], message: String, exitStatus: Int32) async throws {
        let json = try await syncctl(reply, ["status", "--json"])
        let human = try await syncctl(reply, ["status"])
        #expect(json.stdout.isEmpty, "\(kind): nothing printed")
        #expect(json.stderr.contains(message), "\(kind): \(json.stderr)")
        #expect(json.status == exitStatus, "\(kind): syncctl(1) EXIT STATUS")
        #expect(json.status == human.status, "\(kind): the same exit status as the parsing path (\(human.stderr))")
        // The table checks the same frame first (StatusTable reads only the parameters): the same message.
        #expect(human.stdout.isEmpty && human.stderr.contains(message), "\(kind): \(human.stderr)")
    }

    /// A reply whose frame is fine but whose sources the one-pass table does not accept goes to the tree path, which
    /// names the field; nothing of the table is printed.
    @Test(arguments: [
        (#""pending":0,"#, #""pending":"0","#, "field 'sources[0].pending' missing or of the wrong type"),
        (#""state":"idle""#, #""state":"asleep""#, "field 'sources[0].state' missing or of the wrong type"),
        (#""stale":false,"#, "", "field 'sources[0].stale' missing or of the wrong type"),
    ])
    func aSourceOfTheWrongShapeIsNamed(field: String, replacement: String, message: String) async throws {
        let parameters = JSONValue.object(FakeControlHandler.status.json).serialized()
        #expect(parameters.contains(field))
        let reply = #"{"parameters":"# + parameters.replacingOccurrences(of: field, with: replacement) + "}"
        let result = try await syncctl(Array(reply.utf8) + [0], ["status"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "syncctl: unexpected reply from syncd: \(message)\n")
        let good = try await syncctl(Array((#"{"parameters":"# + parameters + "}").utf8) + [0], ["status"])
        #expect(good.status == 0 && good.stdout.contains(FakeControlHandler.status.sources[0].url), "\(good.stderr)")
    }

    @Test func aWellFormedReplyIsPrintedAsReceived() async throws {
        let parameters = JSONValue.object(FakeControlHandler.status.json).serialized()
        let result = try await syncctl(Array((#"{"parameters":"# + parameters + "}").utf8) + [0], ["status", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout == parameters + "\n")
    }
}
