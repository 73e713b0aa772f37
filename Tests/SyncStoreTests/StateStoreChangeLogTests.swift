import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// The change sequence and its log (StateStore+ChangeLog): listings log the records they changed, found from
/// the chunks that differ only; local changes are logged by the outbox's triggers; the log is bounded.
@Suite("StateStore change log")
struct StateStoreChangeLogTests {
    func page(_ store: StateStore, since: Int64, limit: Int = 100_000) throws -> ChangePage {
        try store.changes(source: "posts", since: since, limit: limit).get()
    }

    func listing(_ count: Int, changing changed: [Int: Int] = [:], without: Set<Int> = []) -> [(String, [UInt8])] {
        (1...count).compactMap { i in
            without.contains(i) ? nil : (String(i), Array("{\"id\":\(i),\"v\":\(changed[i] ?? 0)}".utf8))
        }
    }

    @Test func aOneRecordChangeInA50kListingLogsThatRecordHashingOnlyTheChunkThatDiffers() throws {
        let t = try TemporaryStore()
        try store(listing(50_000), into: t.store)
        let first = try t.store.state(of: "posts").changeSeq
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try store(listing(50_000, changing: [31_337: 1]), into: t.store, time: "2026-11-29T11:00:00Z")
        t.store.workCounter = nil
        #expect(counter.changeDigests <= 2 * RecordChunk.capacity, "the new and the old chunk, not the listing")
        let seq = try t.store.state(of: "posts").changeSeq
        #expect(seq == first + 1)
        #expect(try page(t.store, since: first) == ChangePage(changed: ["31337"], removed: [], next: nil, seq: seq))
    }

    /// A removal near the start shifts every later chunk: more records are compared than a change lists, yet only
    /// the ones that differ are logged.
    @Test func aListingShiftedByARemovalLogsOnlyTheRemovedAndChangedRecords() throws {
        let t = try TemporaryStore()
        try store(listing(12_000), into: t.store)
        let first = try t.store.state(of: "posts").changeSeq
        try store(listing(12_000, changing: [11_900: 2, 7: 1], without: [10]), into: t.store, time: "2026-11-29T11:00:00Z")
        #expect(try page(t.store, since: first) == ChangePage(changed: ["7", "11900"], removed: ["10"], next: nil, seq: first + 1))
        // The same listing again changes nothing: no new seq.
        try store(listing(12_000, changing: [11_900: 2, 7: 1], without: [10]), into: t.store, time: "2026-11-29T12:00:00Z")
        #expect(try t.store.state(of: "posts").changeSeq == first + 1)
    }

    @Test func aListingChangingMoreThanALogListsIsLoggedWithoutIDsAndExpiresOlderSinces() throws {
        let t = try TemporaryStore()
        try store(listing(ChangeFeed.listedPerListing + 1), into: t.store)
        let seq = try t.store.state(of: "posts").changeSeq
        #expect(seq == 1)
        #expect(try t.store.changes(source: "posts", since: 0, limit: 10) == .failure(ChangeFeed.Expired(oldest: 1)))
        #expect(try page(t.store, since: 1) == ChangePage(changed: [], removed: [], next: nil, seq: 1))
    }

    @Test func localChangesAreLoggedWhenQueuedChangedAndDroppedAndTheSeqSurvivesReopening() throws {
        let t = try TemporaryStore()
        try store(listing(10), into: t.store)
        let start = try t.store.state(of: "posts").changeSeq
        try t.store.enqueue(source: "posts", recordID: "3", idIsInteger: true, operation: .delete, body: nil, baseVersion: nil,
                            at: "2026-11-29T10:00:00Z", idempotencyKey: "k1")
        try t.store.enqueue(source: "posts", recordID: "new", idIsInteger: false, operation: .create,
                            body: Array("{\"id\":\"new\"}".utf8), baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "k2")
        #expect(try page(t.store, since: start) == ChangePage(changed: ["new"], removed: ["3"], next: nil, seq: start + 2))
        let create = try #require(try t.store.outbox(source: "posts").first { $0.recordID == "new" })
        try t.store.removeOutboxEntry(create.seq)
        let reopened = try StateStore(path: t.store.path, cacheFolder: t.folder)
        #expect(try reopened.state(of: "posts").changeSeq == start + 3)
        // The create dropped before it reached the server: gone.
        #expect(try reopened.changes(source: "posts", since: start, limit: 10).get().removed == ["3", "new"])
    }

    /// A removal the server took stays a removal when its outbox entry is settled; a removal dropped by the user
    /// brings the record back (changed).
    @Test func aSettledRemovalIsLoggedRemovedAndADroppedOneChanged() throws {
        let t = try TemporaryStore()
        try store(listing(5), into: t.store)
        func remove(_ id: String) throws -> Int64 {
            try #require(try t.store.enqueue(source: "posts", recordID: id, idIsInteger: true, operation: .delete, body: nil,
                                             baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "d\(id)")).seq
        }
        let taken = try remove("2"), dropped = try remove("3")
        try t.store.markSent(taken)
        try store(listing(5, without: [2]), into: t.store, time: "2026-11-29T11:00:00Z")
        let before = try t.store.state(of: "posts").changeSeq
        try t.store.removeOutboxEntry(taken)            // settled: the listing no longer has it
        try t.store.removeOutboxEntry(dropped)          // dropped: the record shows again
        let after = try page(t.store, since: before)
        #expect(after.removed == ["2"] && after.changed == ["3"])
        // A removal settled although the listing still shows the record (after three refreshes) is logged shown.
        try t.store.logRecordShown(source: "posts", recordID: "2")
        #expect(try page(t.store, since: after.seq).changed == ["2"])
    }

    @Test func theOldestChangesAreTrimmedFirstBeyondTheKeptCount() throws {
        let t = try TemporaryStore()
        try store(listing(2), into: t.store)
        let kept = ChangeFeed.keptChanges
        try t.store.write("log") {
            for n in 0..<(kept + 5) { try t.store.logChange(source: "posts", changed: [Array("r\(n)".utf8)], removed: [], unlisted: false) }
        }
        let (seq, floor) = try t.store.changeSequence(source: "posts")
        #expect(floor == seq - kept)
        #expect(try t.store.changes(source: "posts", since: floor - 1, limit: 10) == .failure(ChangeFeed.Expired(oldest: floor)))
        let rest = try page(t.store, since: floor)
        #expect(rest.changed.count == Int(kept) && rest.changed.first == "r5")
    }

    @Test func aForgottenListingIsAChangeWithoutIDs() throws {
        let t = try TemporaryStore()
        try store(listing(5), into: t.store)
        let before = try t.store.state(of: "posts").changeSeq
        try t.store.forgetListing(source: "posts")
        #expect(try t.store.changes(source: "posts", since: before, limit: 10) == .failure(ChangeFeed.Expired(oldest: before + 1)))
    }

    @Test func aNewStoreContinuesTheNumbersOfAnErasedOneWithAChangeWithoutIDs() throws {
        let erased = try TemporaryStore()
        try store(listing(5), into: erased.store)
        let old = try erased.store.changeSequence(source: "posts").seq
        let fresh = try TemporaryStore()
        try fresh.store.continueChangeSequences(["posts": old, "never": 0])
        #expect(try fresh.store.changeSequence(source: "posts") == (old + 1, old + 1), "the log answers from the logout on")
        #expect(try fresh.store.changes(source: "posts", since: old, limit: 10) == .failure(ChangeFeed.Expired(oldest: old + 1)))
        #expect(try fresh.store.changes(source: "posts", since: old + 1, limit: 10).get() == ChangePage(changed: [], removed: [], next: nil, seq: old + 1))
        #expect(try fresh.store.changeSequence(source: "never") == (0, 0))
    }

    @Test func aStoreWrittenBeforeTheChangeLogGetsItWhenOpenedKeepingItsRows() throws {
        let t = try TemporaryStore()
        try store(listing(3), into: t.store)
        try t.store.database.execute("""
            DROP TRIGGER change_log_insert; DROP TRIGGER change_log_update; DROP TRIGGER change_log_delete;
            DROP TABLE change_log; ALTER TABLE sources DROP COLUMN change_seq; ALTER TABLE sources DROP COLUMN change_floor;
            """)
        // A reader of such a file sees no changes and no error.
        let reader = try StateStore(readingFrom: t.store.path, cacheFolder: t.folder)
        #expect(try reader.changeSequence(source: "posts") == (0, 0))
        #expect(try reader.state(of: "posts").changeSeq == 0 && reader.state(of: "posts").recordCount == 3)
        let reopened = try StateStore(path: t.store.path, cacheFolder: t.folder)
        #expect(try reopened.state(of: "posts").recordCount == 3)
        try reopened.enqueue(source: "posts", recordID: "2", idIsInteger: true, operation: .delete, body: nil, baseVersion: nil,
                             at: "2026-11-29T10:00:00Z", idempotencyKey: "k")
        #expect(try reopened.changes(source: "posts", since: 0, limit: 10).get() == ChangePage(changed: [], removed: ["2"], next: nil, seq: 1))
    }

    @Test func aShiftBeyondTheComparedRecordsIsLoggedWithoutIDs() throws {
        let t = try TemporaryStore()
        let count = ChangeFeed.comparedPerListing + RecordChunk.capacity
        try store(listing(count), into: t.store)
        let before = try t.store.changeSequence(source: "posts").seq
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try store(listing(count, without: [1]), into: t.store, time: "2026-11-29T11:00:00Z")
        t.store.workCounter = nil
        #expect(try t.store.changes(source: "posts", since: before, limit: 10) == .failure(ChangeFeed.Expired(oldest: before + 1)))
        #expect(counter.changeDigests <= ChangeFeed.comparedPerListing + RecordChunk.capacity, "the old records were not read")
    }
}
