import Foundation
import SyncStore
import Testing
@testable import SyncEngine

/// The engine's local-change actions refuse bad requests with the control path's own `ManagerError`
/// (the Varlink error the caller gets, docs/control-api.md), and nothing is queued or dropped.
@Suite("SyncEngine local-change errors")
struct SyncEngineLocalChangeErrorTests {
    let directory = NSTemporaryDirectory() + "syncengine-errors-" + UUID().uuidString
    let writable = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", writable: true,
                                       location: SourceLocation(file: "posts.source", line: 1))
    let readOnly = SourceConfiguration(name: "users", url: "http://127.0.0.1:9/users",
                                       location: SourceLocation(file: "users.source", line: 1))

    /// An engine whose store holds one queued change of `posts`.
    func engine() throws -> (SyncEngine, String) {
        let (engine, path) = try temporaryEngine(in: directory)
        _ = try engine.put(JSONObject([("id", .string("a")), ("title", .string("x"))]), into: writable)
        return (engine, path)
    }

    /// The error `body` throws; nil (and a recorded issue) if it succeeds.
    func refusal(_ body: () throws(ManagerError) -> Void) -> ManagerError? {
        do {
            try body()
            Issue.record("the engine accepted the request")
        } catch {
            return error
        }
        return nil
    }

    @Test("each refusal is the ManagerError the control reply names, with its message")
    func refusals() throws {
        let (engine, path) = try engine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = JSONObject([("id", .string("b"))])
        #expect(refusal { () throws(ManagerError) in _ = try engine.put(record, into: readOnly) } == .notWritable(source: "users"))
        #expect(refusal { () throws(ManagerError) in try engine.delete(id: "a", from: readOnly) } == .notWritable(source: "users"))
        #expect(refusal { () throws(ManagerError) in try engine.delete(id: "zz", from: writable) }
                == .noSuchRecord(source: "posts", id: "zz"))
        #expect(refusal { () throws(ManagerError) in _ = try engine.put(JSONObject([("id", .string(""))]), into: writable) }
                == .invalidParameter(parameter: "record", reason: "the record's \"id\" must be a non-empty string or an integer"))
        let large = JSONObject([("id", .string("c")), ("text", .string(String(repeating: "x", count: 1 << 20)))])
        #expect(refusal { () throws(ManagerError) in _ = try engine.put(large, into: writable) }
                == .invalidParameter(parameter: "record", reason: "the record is larger than 1 MiB"))
        #expect(refusal { () throws(ManagerError) in _ = try engine.retryOutboxEntry(99) } == .noSuchOutboxEntry(seq: 99))
        #expect(refusal { () throws(ManagerError) in _ = try engine.dropOutboxEntry(99) } == .noSuchOutboxEntry(seq: 99))
        #expect(refusal { () throws(ManagerError) in try engine.resolve(source: writable, id: "a", keepLocal: true) }
                == .invalidParameter(parameter: "id", reason: "record \"a\" of \"posts\" is not in conflict"))
        // Nothing queued by the refused requests, nothing dropped: the one change from before is still there.
        let queued = try StateStore(readingFrom: path).outbox(source: nil)
        #expect(queued.map(\.recordID) == ["a"])
    }
}
