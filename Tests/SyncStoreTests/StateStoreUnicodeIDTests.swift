import Testing
@testable import SyncStore
import SyncCore

/// Record IDs are compared as bytes everywhere in the store: `"\u{E9}"` (é precomposed, NFC) and `"e\u{301}"`
/// (e and a combining acute accent, NFD) are two records, although Swift's `String.==` holds them equal.
@Suite("StateStore IDs as bytes")
struct StateStoreUnicodeIDTests {
    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"

    /// A listing holding both records, `{"id":"é","v":"nfc"}` and `{"id":"é","v":"nfd"}` in their own bytes.
    func storeBoth(_ t: TemporaryStore) throws {
        let writer = try t.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-11-29T10:00:00Z", etag: nil))
        for (id, tag) in [(Self.nfc, "nfc"), (Self.nfd, "nfd")] {
            let body = Array(#"{"id":"\#(id)","v":"\#(tag)"}"#.utf8)
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: false, version: nil, body: $0) }
        }
        _ = try writer.commit(ListingMetadata(url: "http://h/posts", etag: nil, lastModified: nil, time: "2026-11-29T10:00:00Z", allowEmpty: false))
    }

    func queue(_ t: TemporaryStore, _ id: String, _ operation: OutboxRecord.Operation, _ tag: String? = nil) throws {
        try t.store.enqueue(source: "posts", recordID: id, idIsInteger: false, operation: operation,
                            body: tag.map { Array(#"{"id":"\#(id)","v":"\#($0)"}"#.utf8) }, baseVersion: nil,
                            at: "2026-11-29T10:00:00Z", idempotencyKey: "k-\(tag ?? "delete")")
    }

    func get(_ t: TemporaryStore, _ id: String) throws -> [UInt8]? {
        var out: [UInt8]?
        _ = try t.store.localRecord(source: "posts", id: id) { out = Array($0) }
        return out
    }

    func fileView(_ t: TemporaryStore) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        try t.store.forEachLocalRecord(source: "posts") { _, json in out.append(Array(json)) }
        return out
    }

    func body(_ id: String, _ tag: String) -> [UInt8] { Array(#"{"id":"\#(id)","v":"\#(tag)"}"#.utf8) }

    /// How often `needle` occurs in `haystack`, byte for byte (`String.contains` would match either form).
    func occurrences(_ needle: String, in haystack: [UInt8]) -> Int {
        let bytes = Array(needle.utf8)
        guard haystack.count >= bytes.count else { return 0 }
        return (0...(haystack.count - bytes.count)).filter { haystack[$0..<($0 + bytes.count)].elementsEqual(bytes) }.count
    }

    @Test func theServersRecordIsFoundByItsOwnBytes() throws {
        let t = try TemporaryStore()
        try storeBoth(t)
        var found: [String] = []
        for id in [Self.nfd, Self.nfc] {
            _ = try t.store.record(source: "posts", id: id) { found.append(String(decoding: $0.body, as: UTF8.self)) }
        }
        #expect(found.map { Array($0.utf8) } == [body(Self.nfd, "nfd"), body(Self.nfc, "nfc")])
        #expect(try get(t, Self.nfd) == body(Self.nfd, "nfd"))
        #expect(try get(t, Self.nfc) == body(Self.nfc, "nfc"))
    }

    @Test func aChangeOfOneOverlaysOnlyThatOneInGetTheLocalViewAndTheFile() throws {
        let t = try TemporaryStore()
        try storeBoth(t)
        try queue(t, Self.nfd, .update, "nfd-local")
        #expect(try get(t, Self.nfd) == body(Self.nfd, "nfd-local"))
        #expect(try get(t, Self.nfc) == body(Self.nfc, "nfc"))
        #expect(try fileView(t) == [body(Self.nfc, "nfc"), body(Self.nfd, "nfd-local")])
        try t.store.rebuildCacheFile(source: "posts")
        let file = Array(t.cacheFile().utf8)
        #expect(occurrences(#""id":"\#(Self.nfc)","v":"nfc""#, in: file) == 1)
        #expect(occurrences(#""id":"\#(Self.nfd)","v":"nfd-local""#, in: file) == 1)
        #expect(occurrences(#""id":"\#(Self.nfd)""#, in: file) == 1, "no duplicate of the changed ID")
    }

    @Test func aRemovalOfOneHidesOnlyThatOne() throws {
        let t = try TemporaryStore()
        try storeBoth(t)
        try queue(t, Self.nfc, .delete)
        #expect(try get(t, Self.nfc) == nil)
        #expect(try get(t, Self.nfd) == body(Self.nfd, "nfd"))
        #expect(try fileView(t) == [body(Self.nfd, "nfd")])
        try t.store.rebuildCacheFile(source: "posts")
        let file = Array(t.cacheFile().utf8)
        #expect(occurrences(#""id":"\#(Self.nfc)""#, in: file) == 0)
        #expect(occurrences(#""id":"\#(Self.nfd)","v":"nfd""#, in: file) == 1)
    }

    @Test func twoCreatesAreNotFoldedIntoOne() throws {
        let t = try TemporaryStore()
        try queue(t, Self.nfc, .create, "a")
        try queue(t, Self.nfd, .create, "b")
        let entries = try t.store.outbox(source: "posts")
        #expect(entries.map { Array($0.recordID.utf8) } == [Array(Self.nfc.utf8), Array(Self.nfd.utf8)])
        #expect(try fileView(t) == [body(Self.nfc, "a"), body(Self.nfd, "b")])
        #expect(try get(t, Self.nfd) == body(Self.nfd, "b"))
    }
}
