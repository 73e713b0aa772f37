import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// A rebuild for local changes that would write what the cache file already holds leaves the file in place
/// (docs/syncd.cache.5.md, "Replacements"): apps following it are not told of a replacement that changes
/// nothing, and the next local creation is still appended.
@Suite("StateStore identical rebuilds")
struct StateStoreIdenticalRebuildTests {
    func inode(_ t: TemporaryStore) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: t.folder.path(of: "posts"))
        return try #require(attributes[.systemFileNumber] as? UInt64)
    }

    func contents(_ t: TemporaryStore) throws -> Data { try #require(FileManager.default.contents(atPath: t.folder.path(of: "posts"))) }

    @Test func aChangeSentLeavesTheFileInPlaceAndTheNextCreationIsAppended() throws {
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        let update = try #require(try t.store.enqueue(source: "posts", recordID: "7", idIsInteger: true, operation: .update,
                                                      body: Array(#"{"id":7,"v":"local"}"#.utf8), baseVersion: nil,
                                                      at: "2026-11-29T10:00:00Z", idempotencyKey: "k-7"))
        #expect(try t.store.rebuildCacheFile(source: "posts") == (1100, true))
        let (before, inodeBefore) = (try contents(t), try inode(t))
        #expect(String(decoding: before, as: UTF8.self).contains(#"{"id":7,"v":"local"}"#))

        // Sent: the file shows the same (the change is still pending until a listing confirms it).
        try t.store.markSent(update.seq)
        try t.store.setSnapshotDirty(source: "posts", true)
        let again = try t.store.rebuildCacheFile(source: "posts")
        #expect(again.records == 1100 && again.rewritten == false, "nothing new to show: not rewritten")
        #expect(try inode(t) == inodeBefore, "the file in place was not replaced")
        #expect(try contents(t) == before)
        #expect(try !t.store.state(of: "posts").snapshotDirty, "the file shows the store's view again")
        #expect(t.leftovers().isEmpty, "the discarded copy left no temporary file")

        // The file is recorded as the one for this outbox: a new creation is appended to it, not rebuilt whole.
        try t.store.enqueue(source: "posts", recordID: "new", idIsInteger: false, operation: .create,
                            body: Array(#"{"id":"new"}"#.utf8), baseVersion: nil, at: "2026-11-29T10:00:01Z", idempotencyKey: "k-new")
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        #expect(try t.store.rebuildCacheFile(source: "posts") == (1101, true))
        #expect(counter.appendedCreates == 1)
        #expect(try inode(t) != inodeBefore)
    }

    @Test func aChangeOfTheSameLengthIsWritten() throws {
        let t = try TemporaryStore()
        try store(records(10), into: t.store)
        for (n, text) in ["local", "LOCAL"].enumerated() {
            try t.store.enqueue(source: "posts", recordID: "3", idIsInteger: true, operation: .update,
                                body: Array("{\"id\":3,\"v\":\"\(text)\"}".utf8), baseVersion: nil,
                                at: "2026-11-29T10:00:0\(n)Z", idempotencyKey: "k-\(n)")
            let before = try inode(t)
            #expect(try t.store.rebuildCacheFile(source: "posts").rewritten)
            #expect(try inode(t) != before, "same size, other bytes: replaced")
            #expect(t.cacheFile().contains("{\"id\":3,\"v\":\"\(text)\"}"))
        }
    }

    /// A listing that shows sent changes taken writes the file they settle to (the server's copies, not
    /// pending), so the settling right after the commit (`SyncEngine.confirmSent`) replaces nothing: one
    /// replacement for the refresh instead of two. A change still queued, and a sent one the listing does not
    /// show yet, stay as they were.
    @Test func aListingSettlingSentChangesIsWrittenOnceAsSettled() throws {
        let t = try TemporaryStore()
        try store(records(10), into: t.store)
        func queue(_ id: String, _ operation: OutboxRecord.Operation, _ body: String?) throws -> Int64 {
            try #require(try t.store.enqueue(source: "posts", recordID: id, idIsInteger: true, operation: operation,
                                             body: body.map { Array($0.utf8) }, baseVersion: nil,
                                             at: "2026-11-29T10:00:00Z", idempotencyKey: "k-\(id)")).seq
        }
        let edit = try queue("3", .update, #"{"id":3,"v":"mine"}"#)
        let removal = try queue("4", .delete, nil)
        let create = try queue("11", .create, #"{"id":11,"v":"new"}"#)
        _ = try queue("5", .update, #"{"id":5,"v":"still queued"}"#)
        for seq in [edit, removal, create] { try t.store.markSent(seq) }
        try t.store.rebuildCacheFile(source: "posts")

        // The server took the edit and the removal; the create is not listed yet.
        var listing = records(10).filter { $0.0 != "4" }
        listing[2] = ("3", Array(#"{"id":3,"v":"server"}"#.utf8))
        try store(listing, into: t.store, time: "2026-11-29T11:00:00Z")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(t.cacheFile().utf8)) as? [String: Any])
        let bodies = try #require(written["records"] as? [[String: Any]])
        #expect(bodies.first { $0["id"] as? Int == 3 }?["v"] as? String == "server", "the settled edit shows the server's copy")
        #expect(bodies.first { $0["id"] as? Int == 5 }?["v"] as? String == "still queued")
        #expect(bodies.last?["id"] as? Int == 11, "the create the listing does not show yet stays")
        #expect(!bodies.contains { $0["id"] as? Int == 4 })
        #expect(written["pending"] as? [Int] == [11, 5], "in the order the changes were made")

        // What the engine does right after: the settled entries go, and the rewrite finds nothing new.
        let inodeAfterCommit = try inode(t)
        for seq in [edit, removal] { try t.store.removeOutboxEntry(seq) }
        try t.store.setSnapshotDirty(source: "posts", true)
        #expect(try t.store.rebuildCacheFile(source: "posts").rewritten == false)
        #expect(try inode(t) == inodeAfterCommit)
    }
}
