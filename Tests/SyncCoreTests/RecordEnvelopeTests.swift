import Testing
@testable import SyncCore

@Suite("RecordEnvelope: one record inside a wrapper (RecordEnvelope=)")
struct RecordEnvelopeTests {
    private func wrap(_ record: String, _ path: [String]) -> String {
        String(decoding: RecordEnvelope.wrap(Array(record.utf8), in: path), as: UTF8.self)
    }

    private func unwrap(_ body: String, _ path: [String]) -> Result<String, RecordEnvelope.Problem> {
        RecordEnvelope.unwrap(Array(body.utf8), at: path).map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    @Test("a write is wrapped in one object per token; the record's bytes stay as they are")
    func wraps() throws {
        #expect(wrap(#"{"id":"a", "n":1.50}"#, ["data"]) == #"{"data":{"id":"a", "n":1.50}}"#)
        #expect(wrap(#"{"id":1}"#, ["a", "b"]) == #"{"a":{"b":{"id":1}}}"#)
        #expect(wrap(#"{"id":1}"#, []) == #"{"id":1}"#)
        // A token that needs escaping is written as a JSON string, and the result parses back.
        let odd = wrap(#"{"id":1}"#, ["say \"hi\"/x"])
        #expect(odd == #"{"say \"hi\"/x":{"id":1}}"#)
        #expect(try unwrap(odd, ["say \"hi\"/x"]).get() == #"{"id":1}"#)
    }

    @Test("Kinto's answer: the record is at /data, its bytes exactly as the server wrote them")
    func unwrapsKinto() throws {
        let body = #"{"data": {"id":"b7","title":"x","last_modified":1764633600123, "n": 1e2},"permissions":{"write":["system.Everyone"]}}"#
        let unwrapped = RecordEnvelope.unwrap(Array(body.utf8), at: ["data"])
        let (record, bytes) = try unwrapped.get()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"id":"b7","title":"x","last_modified":1764633600123, "n": 1e2}"#)
        #expect(record["last_modified"] == .integer(1_764_633_600_123) && record["id"] == .string("b7"))
        #expect(try unwrap(#"{"a":{"b":{"id":2}}}"#, ["a", "b"]).get() == #"{"id":2}"#)
        #expect(try unwrap(#" {"id":3} "#, []).get() == #"{"id":3}"#, "the empty pointer: the whole body")
    }

    @Test("a body with no record where the envelope says is a problem, never an empty record", arguments: [
        (#"{"id":"a"}"#, ["data"], "the answer has nothing at RecordEnvelope=/data"),
        (#"{"data":[{"id":"a"}]}"#, ["data"], "the answer's value at RecordEnvelope=/data is not a JSON object"),
        (#"{"data":null}"#, ["data"], "the answer's value at RecordEnvelope=/data is not a JSON object"),
        (#"[{"data":{}}]"#, ["data"], "the answer has nothing at RecordEnvelope=/data"),
        (#"[1]"#, [], "the answer is not a JSON object"),
    ])
    func problems(body: String, path: [String], message: String) {
        guard case .failure(let problem) = unwrap(body, path) else {
            Issue.record("unwrapped \(body)")
            return
        }
        #expect(problem.message(pointerText: path.isEmpty ? "" : "/" + path.joined(separator: "/")) == message)
    }

    @Test("an answer that is not JSON says so")
    func notJSON() {
        guard case .failure(.notJSON(let error)) = unwrap("<html>Bad gateway</html>", ["data"]) else {
            Issue.record("not reported as not JSON")
            return
        }
        #expect(RecordEnvelope.Problem.notJSON(error).message(pointerText: "/data").hasPrefix("the answer is not JSON ("))
    }
}
