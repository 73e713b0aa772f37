import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// Local creations queued while the server is unreachable (docs/architecture.md, "Storing listings"): the
/// rebuild after each appends it to the previous file, at the cost of the change — the same bytes a whole
/// rebuild writes, without reading what was queued before; anything else changed in the outbox since the file
/// was written sends the rebuild the whole way.
@Suite("StateStore append creates")
struct StateStoreAppendCreatesTests {
    /// Queues a creation: every third one with an integer ID, the others with a string ID needing escapes.
    func create(_ store: StateStore, _ n: Int) throws {
        let integer = n % 3 == 0
        let id = integer ? String(100_000 + n) : "new \"\(n)\""
        let literal = integer ? id : JSONText.quoted(id)
        try store.enqueue(source: "posts", recordID: id, idIsInteger: integer, operation: .create,
                          body: Array("{\"id\":\(literal),\"title\":\"offline \(n)\"}".utf8), baseVersion: nil,
                          at: "2026-11-29T10:00:00Z", idempotencyKey: "key-\(n)")
    }

    func bytes(_ t: TemporaryStore) throws -> [UInt8] { Array(try #require(FileManager.default.contents(atPath: t.folder.path(of: "posts")))) }

    /// The file a refresh with the same listing and outbox writes: every record through the writer.
    func wholeRebuild(_ changes: (StateStore) throws -> Void) throws -> [UInt8] {
        let t = try TemporaryStore()
        try changes(t.store)
        try store(records(1100), into: t.store)
        return try bytes(t)
    }

    /// Rebuilds after the change, counting the work of that rebuild alone.
    func rebuild(_ store: StateStore) throws -> StoreWorkCounter {
        let counter = StoreWorkCounter()
        store.workCounter = counter
        defer { store.workCounter = nil }
        try store.rebuildCacheFile(source: "posts")
        return counter
    }

    @Test(arguments: [1, 40, 300])
    func eachCreationIsAppendedAtTheCostOfTheChangeAndTheFileIsWhatAWholeRebuildWrites(queued: Int) throws {
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        var last = StoreWorkCounter()
        for n in 1...queued {
            try create(t.store, n)
            last = try rebuild(t.store)
            #expect(last.appendedCreates == 1, "creation \(n) was appended")
        }
        // The rebuild after the last creation read its outbox entry only, and no record of the listing: the same
        // work whether 0 or 299 creations were queued before it.
        #expect(last.outboxEntriesRead == 1)
        #expect(last.indexEntriesVisited <= RecordChunk.capacity, "at most one chunk is searched for the new ID")
        let expected = try wholeRebuild { store in for n in 1...queued { try create(store, n) } }
        #expect(try bytes(t) == expected)
        // The fingerprint recorded is the file's, so the next rebuild (or refresh) trusts and copies it.
        let fingerprint = try #require(try t.store.state(of: "posts").snapshotFingerprint)
        let fd = open(t.folder.path(of: "posts"), O_RDONLY)
        defer { close(fd) }
        #expect(try t.store.cacheFileDigest(source: "posts", fd: fd) == fingerprint.hash)
        let state = try t.store.state(of: "posts", countingLocalView: true)
        #expect(state.localRecordCount == 1100 + queued && !state.snapshotDirty)
        #expect(t.leftovers().isEmpty)
    }

    /// A failed push notes its attempt on the first entry (attempts, last error): nothing the file shows, so a
    /// rebuild for it writes nothing and the next creation is still appended.
    @Test func aFailedPushDoesNotStopAppending() throws {
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        for n in 1...3 {
            try create(t.store, n)
            try t.store.rebuildCacheFile(source: "posts")
        }
        let before = try bytes(t)
        let first = try #require(try t.store.outbox(source: "posts").first)
        _ = try t.store.markAttempt(first.seq, at: AttemptTime(boot: "boot", uptime: 1))
        try t.store.noteFailure(first.seq, status: nil, error: "cannot reach the server")
        try t.store.setSnapshotDirty(source: "posts", true)
        let confirm = try rebuild(t.store)
        #expect(confirm.appendedCreates == 0 && confirm.outboxEntriesRead == 0)
        #expect(try bytes(t) == before, "nothing the file shows changed")
        #expect(try !t.store.state(of: "posts").snapshotDirty)
        try create(t.store, 4)
        #expect(try rebuild(t.store).appendedCreates == 1)
        #expect(try bytes(t) == wholeRebuild { store in for n in 1...4 { try create(store, n) } })
    }

    /// Creations queued while writes failed are all appended by the next rebuild.
    @Test func creationsQueuedSinceTheLastWriteAreAppendedTogether() throws {
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        for n in 1...5 { try create(t.store, n) }
        #expect(try rebuild(t.store).appendedCreates == 5)
        #expect(try bytes(t) == wholeRebuild { store in for n in 1...5 { try create(store, n) } })
    }

    /// Any other change of the outbox since the file was written (a creation changed or withdrawn, a change
    /// parked, a record of the listing changed) is seen through the outbox stamp: the whole file is rebuilt,
    /// and it is what a refresh writes.
    @Test(arguments: ["update a creation", "withdraw a creation", "park a creation", "update a listed record"])
    func anyOtherChangeSinceTheFileWasWrittenRebuildsTheWholeFile(change: String) throws {
        func apply(_ store: StateStore) throws {
            for n in 1...4 { try create(store, n) }
            try applyAfterFourth(store, change: change)
            try create(store, 5)
        }
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        for n in 1...4 {
            try create(t.store, n)
            #expect(try rebuild(t.store).appendedCreates == 1)
        }
        // The changes after creation 4 in `apply`, then creation 5.
        try applyAfterFourth(t.store, change: change)
        try create(t.store, 5)
        #expect(try rebuild(t.store).appendedCreates == 0)
        #expect(try bytes(t) == wholeRebuild(apply))
        // Written whole, the file is a base for appending again.
        try create(t.store, 6)
        #expect(try rebuild(t.store).appendedCreates == 1)
        #expect(try bytes(t) == wholeRebuild { store in
            try apply(store)
            try create(store, 6)
        })
    }

    private func applyAfterFourth(_ store: StateStore, change: String) throws {
        switch change {
        case "update a creation":
            try store.enqueue(source: "posts", recordID: "new \"1\"", idIsInteger: false, operation: .update,
                              body: Array(#"{"id":"new \"1\"","title":"changed"}"#.utf8), baseVersion: nil,
                              at: "2026-11-29T10:00:00Z", idempotencyKey: "key-u")
        case "withdraw a creation":
            try store.enqueue(source: "posts", recordID: "new \"2\"", idIsInteger: false, operation: .delete, body: nil,
                              baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "key-d")
        case "park a creation":
            let entry = try #require(try store.outboxEntries(source: "posts", recordID: "new \"1\"").first)
            try store.park(entry.seq, status: 400, error: "refused")
        default:
            try store.enqueue(source: "posts", recordID: "7", idIsInteger: true, operation: .update,
                              body: Array(#"{"id":7,"local":true}"#.utf8), baseVersion: nil, at: "2026-11-29T10:00:00Z",
                              idempotencyKey: "key-7")
        }
    }

    /// A cache file changed outside syncd is never appended to: its bytes after the listing no longer give the
    /// recorded hash, so the rebuild writes the whole file again, as a refresh would.
    @Test func aFileChangedOutsideSyncdIsNotAppendedTo() throws {
        let t = try TemporaryStore()
        try store(records(1100), into: t.store)
        try create(t.store, 1)
        try t.store.rebuildCacheFile(source: "posts")
        let path = t.folder.path(of: "posts")
        let fd = open(path, O_WRONLY)
        // One byte of the trailer, in place: size and inode stay.
        var space = UInt8(ascii: " ")
        #expect(pwrite(fd, &space, 1, off_t(try bytes(t).count - 3)) == 1)
        close(fd)
        try t.store.recordSnapshot(source: "posts", try #require(try t.store.state(of: "posts").snapshotFingerprint).changedTime(of: path))
        try create(t.store, 2)
        #expect(try rebuild(t.store).appendedCreates == 0)
        #expect(try bytes(t) == wholeRebuild { store in for n in 1...2 { try create(store, n) } })
        #expect(try t.store.outbox(source: "posts").count == 2, "no change was lost")
        #expect(t.leftovers().isEmpty)
    }
}

extension SnapshotFingerprint {
    /// This fingerprint with the change time the file at `path` has now (as a confirmation would record it).
    func changedTime(of path: String) -> SnapshotFingerprint {
        var info = stat()
        _ = stat(path, &info)
        return SnapshotFingerprint(size: size, inode: inode,
                                   changeTime: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec), hash: hash)
    }
}

/// The outbox counts status shows after every change: new creations are added to the last counts, anything
/// else counts the outbox again, and both agree with a count from scratch.
@Suite("StateStore outbox counts")
struct StateStoreOutboxCountsTests {
    func counts(_ store: StateStore) throws -> [Int] {
        let state = try store.state(of: "posts")
        return [state.pendingCount, state.unpushedCount, state.parkedCount, state.conflictCount]
    }

    /// Counted from scratch, by a store that never counted before.
    func fresh(_ t: TemporaryStore) throws -> [Int] { try counts(StateStore(path: t.path, cacheFolder: t.folder)) }

    @Test func creationsAreAddedToTheLastCountsAndOtherChangesCountTheOutboxAgain() throws {
        let t = try TemporaryStore()
        try store(records(10), into: t.store)
        let tests = StateStoreAppendCreatesTests()
        #expect(try counts(t.store) == [0, 0, 0, 0])
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try tests.create(t.store, 1)
        #expect(try counts(t.store) == [1, 1, 0, 0])
        for n in 2...50 { try tests.create(t.store, n) }
        #expect(try counts(t.store) == [50, 50, 0, 0])
        for n in 51...60 {
            try tests.create(t.store, n)
            #expect(try counts(t.store) == [n, n, 0, 0])
        }
        #expect(counter.outboxCounts == 0, "every creation was added to the last counts, the outbox never counted again")
        #expect(try fresh(t) == [60, 60, 0, 0])
        // A parked change is not a creation to add: counted again.
        let entry = try #require(try t.store.outboxEntries(source: "posts", recordID: "new \"1\"").first)
        try t.store.park(entry.seq, status: 400, error: "refused")
        #expect(try counts(t.store) == [60, 60, 1, 0], "a parked record is still pending, as the cache file lists it")
        #expect(counter.outboxCounts == 1)
        #expect(try fresh(t) == [60, 60, 1, 0])
        // An update of a creation queued before adds no record.
        try t.store.enqueue(source: "posts", recordID: "new \"2\"", idIsInteger: false, operation: .update,
                            body: Array(#"{"id":"new \"2\"","title":"changed"}"#.utf8), baseVersion: nil,
                            at: "2026-11-29T10:00:00Z", idempotencyKey: "key-u")
        #expect(try counts(t.store) == [60, 60, 1, 0])
        try tests.create(t.store, 61)
        #expect(try counts(t.store) == [61, 61, 1, 0])
        #expect(try fresh(t) == [61, 61, 1, 0])
    }
}
