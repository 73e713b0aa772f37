import Testing
@testable import SyncStore

/// `localRecords` / `localRecord`: the control API's reads of the local view must show exactly what the
/// cache file shows (`forEachLocalRecord`), page by page.
@Suite("StateStore local view")
struct StateStoreLocalViewTests {
    func queue(_ store: StateStore, _ id: String, _ operation: OutboxRecord.Operation, _ body: String? = nil) throws {
        try store.enqueue(source: "posts", recordID: id, idIsInteger: Int(id) != nil, operation: operation,
                          body: body.map { Array($0.utf8) }, baseVersion: nil, at: "2026-11-29T10:00:00Z",
                          idempotencyKey: "key-" + id)
    }

    func fileView(_ store: StateStore) throws -> [String] {
        var out: [String] = []
        try store.forEachLocalRecord(source: "posts") { _, json in out.append(String(decoding: json, as: UTF8.self)) }
        return out
    }

    func page(_ store: StateStore, offset: Int, limit: Int) throws -> (bodies: [String], total: Int) {
        var out: [String] = []
        let total = try store.localRecords(source: "posts", offset: offset, limit: limit) { _, json in
            out.append(String(decoding: json, as: UTF8.self))
        }
        return (out, total)
    }

    func get(_ store: StateStore, _ id: String) throws -> String? {
        var out: String?
        let found = try store.localRecord(source: "posts", id: id) { out = String(decoding: $0, as: UTF8.self) }
        #expect(found == (out != nil))
        return out
    }

    @Test func withoutLocalChangesTheViewIsTheServersListing() throws {
        let t = try TemporaryStore()
        let listing = records(1300)
        try store(listing, into: t.store)
        let all = listing.map { String(decoding: $0.1, as: UTF8.self) }
        #expect(try page(t.store, offset: 0, limit: 1000) == (Array(all[0..<1000]), 1300))
        #expect(try page(t.store, offset: 1000, limit: 1000) == (Array(all[1000...]), 1300))
        #expect(try get(t.store, "1300") == all[1299])
    }

    @Test func pendingDeleteUpdateAndCreateAreApplied() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        try queue(t.store, "1", .delete)
        try queue(t.store, "2", .update, #"{"id":2,"v":"local"}"#)
        try queue(t.store, "x1", .create, #"{"id":"x1","v":"new"}"#)
        let expected = [#"{"id":2,"v":"local"}"#, #"{"id":3,"v":0}"#, #"{"id":"x1","v":"new"}"#]
        #expect(try fileView(t.store) == expected)
        #expect(try page(t.store, offset: 0, limit: 1000) == (expected, 3))
        #expect(try get(t.store, "1") == nil, "a record removed locally is gone from Get too")
        #expect(try get(t.store, "2") == #"{"id":2,"v":"local"}"#)
        #expect(try get(t.store, "x1") == #"{"id":"x1","v":"new"}"#)
        #expect(try get(t.store, "4") == nil)
        // Nothing was lost: the server's rows are untouched underneath the overlay.
        #expect(try storedBodies(t.store) == records(3).map { String(decoding: $0.1, as: UTF8.self) })
    }

    @Test(arguments: [7, 999, 1000, 1001])
    func pagesOfTheLocalViewConcatenateToTheFileView(limit: Int) throws {
        let t = try TemporaryStore()
        try store(records(2500), into: t.store)
        try queue(t.store, "5", .delete)
        try queue(t.store, "1700", .delete)
        try queue(t.store, "new-a", .create, #"{"id":"new-a"}"#)
        try queue(t.store, "new-b", .create, #"{"id":"new-b"}"#)
        let file = try fileView(t.store)
        #expect(file.count == 2500)
        var paged: [String] = []
        var offset = 0
        while true {
            let next = try page(t.store, offset: offset, limit: limit)
            #expect(next.total == file.count)
            paged += next.bodies
            offset += next.bodies.count
            if next.bodies.isEmpty || offset >= next.total { break }
        }
        #expect(paged == file)
        #expect(try page(t.store, offset: 5000, limit: 10) == ([], 2500))
    }
}
