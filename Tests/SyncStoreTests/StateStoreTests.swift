import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// A fresh database file in a temporary directory, removed afterwards.
final class TemporaryStore {
    let directory: String
    let store: StateStore
    var path: String { directory + "/state.db" }

    init() throws {
        directory = NSTemporaryDirectory() + "syncstore-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        store = try StateStore(path: directory + "/state.db",
                               cacheFolder: CacheFolder(directory: directory + "/cache", account: "test", group: nil))
    }

    /// The cache folder the store writes the listings' bodies to.
    var folder: CacheFolder { CacheFolder(directory: directory + "/cache", account: "test", group: nil) }

    /// Temporary files left in the cache folder.
    func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.directory)) ?? []).filter { $0.contains(".tmp-") }
    }

    /// The cache file of `source` as written, without the spaces that pad it to whole blocks (`withoutPadding`).
    func cacheFile(_ source: String = "posts") -> String {
        withoutPadding((try? String(contentsOfFile: folder.path(of: source), encoding: .utf8)) ?? "")
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// A cache file's text without the spaces that pad its header and chunks to whole blocks (`BlockAlignment`):
/// every run of spaces right before a "," or a newline (the records of these tests end with neither).
func withoutPadding(_ text: String) -> String {
    var out: [UInt8] = []
    var spaces = 0
    for byte in text.utf8 {
        if byte == 0x20 {
            spaces += 1
            continue
        }
        if byte != UInt8(ascii: ",") && byte != 0x0a { out += repeatElement(0x20, count: spaces) }
        spaces = 0
        out.append(byte)
    }
    return String(decoding: out + repeatElement(0x20, count: spaces), as: UTF8.self)
}

func records(_ count: Int, version: Int = 0, from start: Int = 1) -> [(String, [UInt8])] {
    (start..<start + count).map { i in (String(i), Array("{\"id\":\(i),\"v\":\(version)}".utf8)) }
}

@discardableResult
func store(_ listing: [(String, [UInt8])], into store: StateStore, source: String = "posts", allowEmpty: Bool = false, time: String = "2026-11-29T10:00:00Z") throws -> ListingOutcome {
    let writer = try store.beginListing(source: source, header: CacheHeader(savedAt: time, etag: "\"e\""))
    for (id, body) in listing {
        try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
    }
    return try writer.commit(ListingMetadata(url: "http://h/\(source)", etag: "\"e\"", lastModified: nil, time: time, allowEmpty: allowEmpty))
}

func storedBodies(_ store: StateStore, source: String = "posts") throws -> [String] {
    var out: [String] = []
    try store.forEachRecord(source: source) { out.append(String(decoding: $0.body, as: UTF8.self)) }
    return out
}

@Suite("StateStore listings")
struct StateStoreListingTests {
    @Test func firstListingIsStoredInOrderAndReportedChanged() throws {
        let t = try TemporaryStore()
        let listing = records(1300)
        let outcome = try store(listing, into: t.store)
        #expect(outcome == ListingOutcome(count: 1300, unchanged: false))
        #expect(try storedBodies(t.store) == listing.map { String(decoding: $0.1, as: UTF8.self) })
        let state = try t.store.state(of: "posts")
        #expect(state.recordCount == 1300)
        #expect(state.etag == "\"e\"")
        #expect(!state.snapshotDirty, "the listing's commit wrote the cache file")
    }

    @Test func identicalListingIsUnchangedAndKeepsSavedAt() throws {
        let t = try TemporaryStore()
        try store(records(1300), into: t.store, time: "2026-11-29T10:00:00Z")
        try t.store.setSnapshotDirty(source: "posts", false)
        let outcome = try store(records(1300), into: t.store, time: "2026-11-29T11:00:00Z")
        #expect(outcome.unchanged)
        let state = try t.store.state(of: "posts")
        #expect(state.savedAt == "2026-11-29T10:00:00Z")
        #expect(state.lastSuccess == "2026-11-29T11:00:00Z")
        #expect(!state.snapshotDirty)
    }

    @Test func changedTailRewritesOnlyTheTailChunks() throws {
        let t = try TemporaryStore()
        try store(records(1300), into: t.store)
        let rowids = try chunkRowIDs(t.store)
        var listing = records(1300)
        listing[1299].1 = Array("{\"id\":1300,\"v\":9}".utf8)
        #expect(try !store(listing, into: t.store).unchanged)
        let after = try chunkRowIDs(t.store)
        #expect(after[0] == rowids[0] && after[1] == rowids[1])
        #expect(after[2] != rowids[2])
        #expect(try storedBodies(t.store).last == "{\"id\":1300,\"v\":9}")
    }

    /// A commit leaves its staged chunks in the temporary table (deleting them costs more than it frees); the
    /// next listing, of any source, starts from an empty table: a chunk it does not stage (equal to the stored
    /// one) is never taken from an earlier listing's leftovers.
    @Test func aListingNeverTakesAnotherListingsStagedChunks() throws {
        let t = try TemporaryStore()
        try store(records(1300), into: t.store, source: "posts")
        try store(records(1300, version: 5, from: 5001), into: t.store, source: "other")
        var listing = records(1300)
        listing[1299].1 = Array("{\"id\":1300,\"v\":9}".utf8)
        #expect(try !store(listing, into: t.store, source: "posts").unchanged)
        #expect(try storedBodies(t.store, source: "posts") == listing.map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try storedBodies(t.store, source: "other") == records(1300, version: 5, from: 5001).map { String(decoding: $0.1, as: UTF8.self) })
    }

    @Test func removedInsertedAndReorderedRecordsFollowTheNewListing() throws {
        let t = try TemporaryStore()
        try store(records(10), into: t.store)
        let next = Array(records(5, from: 20)) + records(3).reversed()
        #expect(try !store(next, into: t.store).unchanged)
        #expect(try storedBodies(t.store) == next.map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.state(of: "posts").recordCount == 8)
    }

    @Test func shorterListingDropsStaleChunks() throws {
        let t = try TemporaryStore()
        try store(records(2000), into: t.store)
        try store(records(100), into: t.store)
        #expect(try chunkRowIDs(t.store).count == 1)
        #expect(try storedBodies(t.store).count == 100)
    }

    @Test(arguments: [[("1", "a"), ("2", "b"), ("1", "c")], [("7", "x"), ("7", "y")]])
    func duplicateIDIsRefusedAndNothingChanges(_ duplicated: [(String, String)]) throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        let listing = duplicated.map { ($0.0, Array($0.1.utf8)) }
        #expect(throws: StoreError.self) { try store(listing, into: t.store) }
        do {
            try store(listing, into: t.store)
        } catch let error as StoreError {
            #expect(error.description.contains("repeats ID \"\(duplicated.last!.0)\""))
        }
        #expect(try storedBodies(t.store) == records(3).map { String(decoding: $0.1, as: UTF8.self) })
        // The new cache file was written before the check, and removed: the old one is what apps read.
        #expect(t.leftovers().isEmpty)
        #expect(t.cacheFile().contains("\"records\":[\n{\"id\":1,\"v\":0},"))
    }

    @Test func duplicateAcrossChunksIsFound() throws {
        let t = try TemporaryStore()
        var listing = records(1500)
        listing.append(("3", Array("{\"id\":3}".utf8)))
        #expect(throws: StoreError.self) { try store(listing, into: t.store) }
        #expect(try t.store.state(of: "posts").recordCount == 0)
    }

    @Test func emptyListingIsRefusedUnlessAllowed() throws {
        let t = try TemporaryStore()
        try store(records(2), into: t.store)
        do {
            try store([], into: t.store)
            Issue.record("an empty listing replaced a non-empty one")
        } catch let error as StoreError {
            #expect(error.description == "empty listing refused: the cache holds 2 records (set AllowEmpty=yes to accept empty listings)")
        }
        #expect(t.leftovers().isEmpty)
        #expect(try storedBodies(t.store).count == 2)
        #expect(try storedBodies(t.store).count == 2)
        #expect(try store([], into: t.store, allowEmpty: true).count == 0)
        #expect(try storedBodies(t.store).isEmpty)
    }

    @Test func rollbackKeepsThePreviousListing() throws {
        let t = try TemporaryStore()
        try store(records(600), into: t.store)
        let writer = try t.store.beginListing(source: "posts")
        for (id, body) in records(700, version: 2) {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        writer.rollback()
        #expect(try storedBodies(t.store) == records(600).map { String(decoding: $0.1, as: UTF8.self) })
    }

    @Test("a listing being staged holds no write transaction: another connection writes meanwhile and reads the old listing")
    func stagingHoldsNoWriteLock() throws {
        let t = try TemporaryStore()
        try store(records(600), into: t.store)
        let other = try StateStore(path: t.path, cacheFolder: t.folder)
        let writer = try t.store.beginListing(source: "posts")
        for (id, body) in records(1300, version: 2) {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        // Would wait for the busy timeout and fail with SQLITE_BUSY if the writer held BEGIN IMMEDIATE.
        try other.saveRetryState(source: "other", "{}")
        #expect(try storedBodies(other) == records(600).map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try writer.commit(ListingMetadata(url: "http://h/posts", etag: nil, lastModified: nil, time: "2026-11-29T12:00:00Z",
                                                  allowEmpty: false)).count == 1300)
        #expect(try storedBodies(other) == records(1300, version: 2).map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try other.state(of: "other").retryState == "{}")
    }

    @Test("a rolled-back listing leaves nothing staged for the next one")
    func rollbackLeavesNothingStaged() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        let writer = try t.store.beginListing(source: "posts")
        for (id, body) in records(1300, version: 2) {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        writer.rollback()
        try store(records(2, version: 3), into: t.store)
        #expect(try storedBodies(t.store) == records(2, version: 3).map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.state(of: "posts").recordCount == 2)
    }

    @Test func sourcesAreKeptApart() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store, source: "a")
        try store(records(5, version: 1), into: t.store, source: "b")
        #expect(try storedBodies(t.store, source: "a").count == 3)
        #expect(try storedBodies(t.store, source: "b").count == 5)
        #expect(try t.store.sourceNames() == ["a", "b"])
    }

    @Test func failuresAreRecordedWithoutTouchingData() throws {
        let t = try TemporaryStore()
        try store(records(2), into: t.store)
        try t.store.recordFailure(source: "posts", url: "http://h/posts", message: "HTTP 503", at: "2026-11-29T12:00:00Z")
        let state = try t.store.state(of: "posts")
        #expect(state.isStale && state.lastError == "HTTP 503" && state.lastAttempt == "2026-11-29T12:00:00Z")
        #expect(state.recordCount == 2)
        try t.store.recordUnchanged(source: "posts", at: "2026-11-29T12:05:00Z")
        #expect(try !t.store.state(of: "posts").isStale)
    }

    func chunkRowIDs(_ store: StateStore) throws -> [Int64] {
        let statement = try store.database.prepare("SELECT rowid FROM chunks WHERE source = 'posts' ORDER BY seq")
        var ids: [Int64] = []
        while try statement.step() { ids.append(statement.int64(0)) }
        return ids
    }
}

@Suite("StateStore files")
struct StateStoreFileTests {
    @Test func garbageFileIsReportedCorrupt() throws {
        let t = try TemporaryStore()
        let path = t.directory + "/garbage.db"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect { try StateStore(path: path) } throws: { error in
            guard case StoreError.corrupt(_, let reason) = error else { return false }
            return reason.contains("not a database")
        }
    }

    @Test func newerSchemaIsReportedCorruptNotGuessed() throws {
        let t = try TemporaryStore()
        try t.store.database.execute("PRAGMA user_version = 42")
        #expect { try StateStore(path: t.path) } throws: { error in
            guard case StoreError.corrupt(_, let reason) = error else { return false }
            return reason.contains("unknown schema version 42")
        }
    }

    @Test func reopeningKeepsData() throws {
        let t = try TemporaryStore()
        try store(records(4), into: t.store)
        let again = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(try storedBodies(again).count == 4)
        #expect(try again.database.integerPragma("user_version") == StateStore.schemaVersion)
    }

    @Test func retryStateRoundTrips() throws {
        let t = try TemporaryStore()
        try t.store.saveRetryState(source: "posts", "{\"attempt\":3}")
        #expect(try t.store.state(of: "posts").retryState == "{\"attempt\":3}")
        try t.store.saveRetryState(source: "posts", nil)
        #expect(try t.store.state(of: "posts").retryState == nil)
    }
}

@Suite("StateStore write-ahead log")
struct StateStoreCheckpointTests {
    @Test func largeLogIsFoldedIntoTheDatabaseSmallOneIsLeft() throws {
        let t = try TemporaryStore()
        try store(records(200), into: t.store)
        // The log holds the index only (no bodies): 40,000 records are well under 1 MiB of it.
        #expect(try !t.store.checkpointIfWriteAheadLog(largerThan: 256 << 10))
        let big = (1...40_000).map { i in (String(i), Array("{\"id\":\(i),\"pad\":\"\(String(repeating: "x", count: 300))\"}".utf8)) }
        try store(big, into: t.store)
        #expect(fileSize(t.path + "-wal") > 256 << 10)
        #expect(try t.store.checkpointIfWriteAheadLog(largerThan: 256 << 10))
        // Folded, and started again with one page (its header and one 4 KiB frame).
        #expect(fileSize(t.path + "-wal") == 32 + 24 + 4096)
        #expect(try storedBodies(t.store).count == 40_000)
    }

    /// After a checkpoint the next write appends to the log the checkpoint started; it does not start one
    /// (which would write a new header with new salts, and flush it).
    @Test func theNextWriteAppendsToTheLogTheCheckpointStarted() throws {
        let t = try TemporaryStore()
        let big = (1...40_000).map { i in (String(i), Array("{\"id\":\(i),\"pad\":\"\(String(repeating: "x", count: 300))\"}".utf8)) }
        try store(big, into: t.store)
        #expect(try t.store.checkpointIfWriteAheadLog(largerThan: 256 << 10))
        let header = try #require(Self.logHeader(t.path + "-wal"))
        try t.store.saveRetryState(source: "posts", "{\"attempt\":1}")
        #expect(Self.logHeader(t.path + "-wal") == header)
        #expect(fileSize(t.path + "-wal") == 32 + 2 * (24 + 4096))
        #expect(try t.store.state(of: "posts").retryState == "{\"attempt\":1}")
    }

    /// The first 32 bytes of a write-ahead log: magic, version, page size, checkpoint sequence, salts, checksum.
    static func logHeader(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 32)
        return fread(&header, 1, 32, file) == 32 ? header : nil
    }
}

@Suite("StateStore outbox counts")
struct StateStoreOutboxCountTests {
    /// `pendingCount` counts the records the cache file lists as pending: every change not in conflict
    /// (queued, sent and not yet confirmed by a listing, parked); `parkedCount` the refused ones apart;
    /// `unpushedCount` only what has not reached the server (what logging out would lose). A parked change a
    /// newer one superseded is history: counted nowhere, shown nowhere.
    @Test func pushedChangesArePendingButNotUnpushed() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        var seqs: [String: Int64] = [:]
        for id in ["queued", "parked", "sent", "conflict", "superseded"] {
            let entry = try store.enqueue(source: "posts", recordID: id, idIsInteger: false, operation: .update, body: Array("{}".utf8),
                                          baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: id)
            seqs[id] = try #require(entry).seq
        }
        try store.park(try #require(seqs["parked"]), status: 422, error: "HTTP 422")
        try store.park(try #require(seqs["superseded"]), status: 400, error: "HTTP 400")
        try store.markSuperseded(try #require(seqs["superseded"]))
        try store.markSent(try #require(seqs["sent"]))
        try store.recordConflict(try #require(seqs["conflict"]), remoteBody: nil, remoteVersion: nil, at: "2026-11-29T10:00:00Z",
                                 status: 409, reason: "HTTP 409 from PUT")
        // Counted the same whether or not the source was ever synced.
        for synced in [false, true] {
            if synced { try SyncStoreTests.store(records(2), into: store) }
            let state = try store.state(of: "posts")
            #expect(state.pendingCount == 3, "queued, parked, sent: the file's pending list")
            #expect(try store.pendingAndConflicts(source: "posts").pending.map(\.key) == ["queued", "parked", "sent"])
            #expect(state.parkedCount == 1)
            #expect(try store.parkedIDs(source: "posts") == [RecordID(key: "parked", kind: .string)])
            #expect(state.unpushedCount == 2)
            #expect(state.conflictCount == 1)
        }
    }
}

extension StateStoreOutboxCountTests {
    /// The counts are of records, not of changes: a record with a change out and a newer one queued is one
    /// pending record, one with a refused change and a newer queued one is one parked and one unpushed record.
    @Test func countsRecordsNotChanges() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        func enqueue(_ id: String, _ key: String) throws -> Int64 {
            try #require(try store.enqueue(source: "posts", recordID: id, idIsInteger: false, operation: .update, body: Array("{}".utf8),
                                           baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: key)).seq
        }
        try store.markSent(try enqueue("a", "a1"))
        _ = try enqueue("a", "a2")
        try store.park(try enqueue("b", "b1"), status: 422, error: "HTTP 422")
        _ = try enqueue("b", "b2")
        try store.recordConflict(try enqueue("c", "c1"), remoteBody: nil, remoteVersion: nil, at: "2026-11-29T10:00:00Z",
                                 status: 409, reason: "HTTP 409 from PUT")
        // Another source's changes count for it alone.
        _ = try store.enqueue(source: "users", recordID: "a", idIsInteger: false, operation: .update, body: Array("{}".utf8),
                              baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "u1")
        #expect(try store.outbox(source: "posts").count == 5)
        let state = try store.state(of: "posts")
        #expect(state.pendingCount == 2)  // a, b
        #expect(state.parkedCount == 1)  // b
        #expect(state.unpushedCount == 2)  // a's queued change, b
        #expect(state.conflictCount == 1)  // c
        let users = try store.state(of: "users")
        #expect((users.pendingCount, users.parkedCount, users.unpushedCount, users.conflictCount) == (1, 0, 1, 0))
    }

    /// Status and Watch report the local view's size: the listing with removals and creations applied.
    @Test func localRecordCountAppliesLocalChanges() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try SyncStoreTests.store(records(3), into: store)
        #expect(try store.state(of: "posts", countingLocalView: true).localRecordCount == 3)
        for (id, operation) in [("2", OutboxRecord.Operation.delete), ("3", .delete), ("1", .update), ("n", .create)] {
            _ = try store.enqueue(source: "posts", recordID: id, idIsInteger: id != "n", operation: operation,
                                  body: operation == .delete ? nil : Array("{\"id\":\"\(id)\"}".utf8),
                                  baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: id)
        }
        // The engine marks the file dirty before writing the changes into it: the listing is walked.
        try store.setSnapshotDirty(source: "posts", true)
        var state = try store.state(of: "posts", countingLocalView: true)
        #expect(state.recordCount == 3)
        #expect(state.localRecordCount == 2)  // 1 (changed) and n (new)
        // Written: the count the store recorded with the file.
        try store.rebuildCacheFile(source: "posts")
        state = try store.state(of: "posts", countingLocalView: true)
        #expect((state.snapshotDirty, state.localRecordCount, state.snapshotRecordCount) == (false, 2, 2))
    }

    /// A parked change superseded by a newer one that has since been settled is all that is left of its record's
    /// changes: history for `syncctl outbox`, applied nowhere. The view, the file and the counts show the server's record.
    @Test func aSupersededChangeLeftAloneShowsNowhere() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try SyncStoreTests.store(records(3), into: store)
        let refused = try #require(try store.enqueue(source: "posts", recordID: "2", idIsInteger: true, operation: .update,
                                                     body: Array(#"{"id":2,"v":"refused"}"#.utf8), baseVersion: nil,
                                                     at: "2026-11-29T10:00:00Z", idempotencyKey: "r"))
        try store.park(refused.seq, status: 400, error: "HTTP 400")
        try store.markSuperseded(refused.seq)
        try store.rebuildCacheFile(source: "posts")
        let state = try store.state(of: "posts", countingLocalView: true)
        #expect((state.pendingCount, state.parkedCount, state.localRecordCount) == (0, 0, 3))
        var body = ""
        #expect(try store.localRecord(source: "posts", id: "2") { body = String(decoding: $0, as: UTF8.self) })
        #expect(body == #"{"id":2,"v":0}"#)
        #expect(temporary.cacheFile().contains(#"{"id":2,"v":0}"#) && temporary.cacheFile().contains(#""pending":[]"#))
        #expect(try store.outbox(source: "posts").map(\.seq) == [refused.seq], "kept in the outbox, for the record")
    }

    /// A parked create is in the cache file (in `pending` and `parked`): the local view counts it.
    @Test func localRecordCountCountsAParkedCreate() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try SyncStoreTests.store(records(3), into: store)
        let create = try #require(try store.enqueue(source: "posts", recordID: "n", idIsInteger: false, operation: .create,
                                                    body: Array("{\"id\":\"n\"}".utf8), baseVersion: nil,
                                                    at: "2026-11-29T10:00:00Z", idempotencyKey: "n"))
        try store.park(create.seq, status: 405, error: "HTTP 405 from POST http://h/posts")
        try store.setSnapshotDirty(source: "posts", true)
        var state = try store.state(of: "posts", countingLocalView: true)
        #expect((state.recordCount, state.pendingCount, state.parkedCount, state.localRecordCount) == (3, 1, 1, 4))
        try store.rebuildCacheFile(source: "posts")
        state = try store.state(of: "posts", countingLocalView: true)
        #expect((state.snapshotDirty, state.localRecordCount, state.snapshotRecordCount) == (false, 4, 4))
    }
}
