import Foundation
import SyncCore
import SyncStore
import Testing
@testable import SyncEngine

/// The engine's local changes find a record by its ID's bytes: `"\u{E9}"` (NFC) and `"e\u{301}"` (NFD) are two
/// records (docs/local-changes.md, "Records as written"), and an integer ID of any length is kept as written.
@Suite("SyncEngine IDs as bytes")
struct SyncEngineIDBytesTests {
    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"
    let directory = NSTemporaryDirectory() + "syncengine-ids-" + UUID().uuidString
    let writable = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", writable: true,
                                       location: SourceLocation(file: "posts.source", line: 1))

    func engine() throws -> (SyncEngine, String) { try temporaryEngine(in: directory) }

    @Test func changesOfCanonicallyEquivalentIDsStayApart() throws {
        let (engine, path) = try engine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try engine.put(JSONObject([("id", .string(Self.nfc)), ("v", "a")]), into: writable)
        // A removal of the NFD record finds nothing: the queued create is the NFC one's.
        do {
            try engine.delete(id: Self.nfd, from: writable)
            Issue.record("the removal of an ID nobody has was accepted")
        } catch {
            #expect(error == .noSuchRecord(source: "posts", id: Self.nfd))
        }
        _ = try engine.put(JSONObject([("id", .string(Self.nfd)), ("v", "b")]), into: writable)
        let queued = try StateStore(readingFrom: path).outbox(source: nil)
        #expect(queued.map { Array($0.recordID.utf8) } == [Array(Self.nfc.utf8), Array(Self.nfd.utf8)])
        #expect(queued.map(\.operation) == [.create, .create])
        try engine.delete(id: Self.nfc, from: writable)
        let left = try StateStore(readingFrom: path).outbox(source: nil)
        #expect(left.map { Array($0.recordID.utf8) } == [Array(Self.nfd.utf8)], "the create of NFC vanished, NFD's stays")
    }

    @Test func anIntegerIDBeyondInt64IsKeptAsWritten() throws {
        let (engine, path) = try engine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = try #require(try JSONValue(parsing: #"{"id":12345678901234567890,"n":0.123456789012345678}"#).objectValue)
        _ = try engine.put(record, into: writable)
        let queued = try StateStore(readingFrom: path).outbox(source: nil)
        #expect(queued.map(\.recordID) == ["12345678901234567890"])
        #expect(queued.map(\.idIsInteger) == [true])
        #expect(queued.first?.body.map { String(decoding: $0, as: UTF8.self) } == #"{"id":12345678901234567890,"n":0.123456789012345678}"#)
    }
}
