import Foundation
import Testing
@testable import SyncStore
import SyncCore

@Suite("RecordChunk index framing")
struct RecordChunkTests {
    /// One entry of each kind: in file, overlaid and in file (a local update), overlaid and not in file (a
    /// local removal), with lengths on both sides of the varint boundaries.
    @Test(arguments: [0, 1, 127, 128, 16_383, 16_384, 2_097_152])
    func entriesRoundTrip(length: Int) throws {
        let long = String(repeating: "x", count: length)
        let server = Array("{\"id\":\"\(long)\"}".utf8)
        var buffer: [UInt8] = []
        RecordChunk.append(id: "a" + long, idIsInteger: false, version: nil, fileLength: length, serverBody: nil, to: &buffer)
        server.withUnsafeBytes {
            RecordChunk.append(id: "2", idIsInteger: true, version: long, fileLength: 128, serverBody: $0, to: &buffer)
            RecordChunk.append(id: "é", idIsInteger: false, version: "v", fileLength: nil, serverBody: $0, to: &buffer)
        }
        var decoded: [(id: String, integer: Bool, version: String?, length: Int?, server: [UInt8]?)] = []
        try buffer.withUnsafeBytes { chunk in
            try RecordChunk.forEach(in: chunk) { decoded.append(($0.id, $0.idIsInteger, $0.version, $0.fileLength, $0.serverBody.map(Array.init))) }
        }
        #expect(decoded.map(\.id) == ["a" + long, "2", "é"])
        #expect(decoded.map(\.integer) == [false, true, false])
        #expect(decoded.map(\.version) == [nil, long, "v"])
        #expect(decoded.map(\.length) == [length, 128, nil])
        #expect(decoded.map(\.server) == [nil, server, server])
    }

    @Test func varintsUseSevenBitsPerByte() {
        for (value, bytes) in [(0, [0x00]), (127, [0x7f]), (128, [0x80, 0x01]), (16_383, [0xff, 0x7f]), (16_384, [0x80, 0x80, 0x01])] {
            var buffer: [UInt8] = []
            RecordChunk.appendVarint(value, to: &buffer)
            #expect(buffer == bytes.map(UInt8.init), "\(value)")
        }
    }

    @Test func aTruncatedChunkThrowsInsteadOfReadingPastTheEnd() throws {
        var buffer: [UInt8] = []
        Array("{\"id\":1}".utf8).withUnsafeBytes {
            RecordChunk.append(id: "1", idIsInteger: true, version: "v", fileLength: 300, serverBody: $0, to: &buffer)
        }
        for length in 1..<buffer.count {
            let prefix = Array(buffer.prefix(length))
            #expect(throws: StoreError.self) { try prefix.withUnsafeBytes { try RecordChunk.forEach(in: $0) { _ in } } }
        }
    }

    @Test func anEntryNeitherInTheFileNorOverlaidIsDamage() throws {
        let buffer: [UInt8] = [1, 0x31, 0]
        #expect { try buffer.withUnsafeBytes { try RecordChunk.forEach(in: $0) { _ in } } } throws: { error in
            "\(error)".contains("neither in the cache file nor overlaid")
        }
    }
}

@Suite("StateStore cache file index")
struct StateStoreIndexTests {
    func queue(_ store: StateStore, _ id: String, _ operation: OutboxRecord.Operation, _ body: String? = nil) throws {
        try store.enqueue(source: "posts", recordID: id, idIsInteger: true, operation: operation, body: body.map { Array($0.utf8) },
                          baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: UUID().uuidString)
    }

    func inode(_ path: String) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }

    func document(_ t: TemporaryStore) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: t.folder.path(of: "posts")))
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theStoreHoldsNoBodiesAndTheFileIsTheListing() throws {
        let t = try TemporaryStore()
        let listing = records(1300)
        try store(listing, into: t.store)
        let bodies = listing.map { String(decoding: $0.1, as: UTF8.self) }
        #expect(t.cacheFile().contains("\"records\":[\n" + bodies.joined(separator: ",\n") + "\n],\n\"pending\":[]"))
        // The index holds IDs and lengths: far fewer bytes than the bodies.
        let size = try t.store.database.prepare("SELECT sum(length(data)), sum(file_bytes) FROM chunks")
        _ = try size.step()
        #expect(size.int64(0) * 2 < size.int64(1))
        #expect(try storedBodies(t.store) == bodies)
    }

    @Test func anIdenticalListingWritesNothingAndAChangedOneReplacesTheFile() throws {
        let t = try TemporaryStore()
        try store(records(1300), into: t.store)
        let path = t.folder.path(of: "posts")
        let before = try inode(path)
        #expect(try store(records(1300), into: t.store, time: "2026-11-29T11:00:00Z").unchanged)
        #expect(try inode(path) == before)
        var listing = records(1300)
        listing[700].1 = Array("{\"id\":701,\"v\":9}".utf8)
        #expect(try !store(listing, into: t.store, time: "2026-11-29T12:00:00Z").unchanged)
        #expect(try inode(path) != before)
        #expect(try storedBodies(t.store)[700] == "{\"id\":701,\"v\":9}")
        #expect(try document(t)["savedAt"] as? String == "2026-11-29T12:00:00Z")
    }

    /// Local removals of all of chunk 0, an update and a creation: the file is the local view, the store
    /// still serves the server's records, by scan and by ID (the first in-file record is in chunk 1).
    @Test func overlaysAndRemovalsShiftTheFileAndTheServersCopyStaysReadable() throws {
        let t = try TemporaryStore()
        let listing = records(1300)
        try store(listing, into: t.store)
        for id in 1...512 { try queue(t.store, String(id), .delete) }
        try queue(t.store, "600", .update, "{\"id\":600,\"local\":true}")
        try queue(t.store, "5000", .create, "{\"id\":5000}")
        let rebuilt = try t.store.rebuildCacheFile(source: "posts")
        #expect(rebuilt == (records: 1300 - 512 + 1, rewritten: true))
        let file = try #require(try document(t)["records"] as? [[String: Any]])
        #expect(file.count == 789)
        #expect(file.first?["id"] as? Int == 513)
        #expect(file[600 - 513]["local"] as? Bool == true)
        #expect(file.last?["id"] as? Int == 5000)
        #expect(try storedBodies(t.store) == listing.map { String(decoding: $0.1, as: UTF8.self) })
        for id in ["1", "512", "600", "513", "1300"] {
            var found: String?
            #expect(try t.store.record(source: "posts", id: id) { found = String(decoding: $0.body, as: UTF8.self) })
            #expect(found == "{\"id\":\(id),\"v\":0}")
        }
        #expect(try t.store.record(source: "posts", id: "5000") { _ in } == false)
        // A page of the server's listing starting past the removed chunk.
        var page: [String] = []
        _ = try t.store.records(source: "posts", offset: 1000, limit: 3) { page.append($0.id) }
        #expect(page == ["1001", "1002", "1003"])
        // The same listing again keeps the overlays: nothing to write.
        #expect(try store(listing, into: t.store, time: "2026-11-29T11:00:00Z").unchanged)
    }

    @Test func aFileChangedBehindTheStoresBackIsAMismatchNotWrongRecords() throws {
        let t = try TemporaryStore()
        try store(records(1300), into: t.store)
        let path = t.folder.path(of: "posts")
        // Same size, same inode: only the chunk's hash can tell.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 6000)        // in chunk 0, past the header's padding
        handle.write(Data("9".utf8))
        try handle.close()
        #expect { try storedBodies(t.store) } throws: { error in
            guard case StoreError.cacheFileMismatch(_, let reason) = error else { return false }
            return reason.contains("chunk 0") && reason.contains("differs from what the store recorded")
        }
        // Replaced by another file: size or inode differ.
        try FileManager.default.removeItem(atPath: path)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try storedBodies(t.store) }
        #expect(try t.store.state(of: "posts").recordCount == 1300, "the index stays until the daemon forgets it")
        try t.store.forgetListing(source: "posts")
        let state = try t.store.state(of: "posts")
        #expect((state.recordCount, state.etag, state.snapshotFingerprint) == (0, nil, nil))
        #expect(try storedBodies(t.store) == [])
    }

    /// A crash between the commit and the rename: readers follow `pending_rename`, and the next start
    /// finishes the rename; a rename that did happen is only recorded; a file gone is reported lost.
    @Test func aPendingRenameIsFollowedThenFinished() throws {
        let t = try TemporaryStore()
        try store(records(600), into: t.store)
        let path = t.folder.path(of: "posts")
        let temporary = ".posts.json.tmp-1-2"
        try FileManager.default.moveItem(atPath: path, toPath: t.folder.directory + "/" + temporary)
        try t.store.run("UPDATE sources SET pending_rename = '\(temporary)' WHERE name = ?1", "posts")
        #expect(try t.store.pendingRenames() == [temporary])
        #expect(try storedBodies(t.store).count == 600)
        // The next start (a new connection) finishes the rename.
        let reopened = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(try reopened.settlePendingRename(source: "posts") == .finished)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try t.store.pendingRenames() == [])
        #expect(try t.store.settlePendingRename(source: "posts") == PendingRenameOutcome.none)

        try t.store.run("UPDATE sources SET pending_rename = '\(temporary)' WHERE name = ?1", "posts")
        #expect(try t.store.settlePendingRename(source: "posts") == .cleared)
        #expect(try storedBodies(t.store).count == 600)

        try t.store.run("UPDATE sources SET pending_rename = '\(temporary)' WHERE name = ?1", "posts")
        try FileManager.default.removeItem(atPath: path)
        #expect(try t.store.settlePendingRename(source: "posts") == .lost)
    }

    /// A local change written (by another engine's connection) while a listing pages: the listing's commit
    /// refuses to describe a file whose chunks changed under it, and nothing is lost.
    @Test func aListingOvertakenByALocalChangeIsNotCommitted() throws {
        let t = try TemporaryStore()
        let listing = records(1300)
        try store(listing, into: t.store)
        var changed = listing
        changed[0].1 = Array("{\"id\":1,\"v\":5}".utf8)
        let writer = try t.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-11-29T11:00:00Z", etag: nil))
        for (id, body) in changed {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        let other = try StateStore(path: t.path, cacheFolder: t.folder)
        try queue(other, "700", .update, "{\"id\":700,\"local\":1}")
        try other.rebuildCacheFile(source: "posts")
        #expect { try writer.commit(ListingMetadata(url: "http://h/posts", etag: nil, lastModified: nil, time: "2026-11-29T11:00:00Z", allowEmpty: false)) } throws: { error in
            "\(error)".contains("local changes rewrote it while the listing was fetched")
        }
        #expect(writer.overtaken)
        #expect(try storedBodies(t.store) == listing.map { String(decoding: $0.1, as: UTF8.self) })
        #expect(t.cacheFile().contains("{\"id\":700,\"local\":1}"))
        #expect(t.leftovers().isEmpty)
        // Fetched again, it is committed with the local change applied.
        #expect(try !store(changed, into: t.store, time: "2026-11-29T12:00:00Z").unchanged)
        #expect(t.cacheFile().contains("{\"id\":1,\"v\":5}") && t.cacheFile().contains("{\"id\":700,\"local\":1}"))
    }

    @Test func aStoreWithoutItsCacheFolderSaysSo() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        let bare = try StateStore(path: t.path)
        #expect { try storedBodies(bare) } throws: { error in "\(error)".contains("opened without its cache folder") }
        #expect(throws: StoreError.self) { try bare.beginListing(source: "posts") }
    }
}
