import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// The changes a `ConflictPolicy=` discarded (StateStore+Discarded): kept with the server's side, listed,
/// forgotten after the retention, queued again.
@Suite("StateStore discarded changes")
struct StateStoreDiscardedTests {
    static let local = Array("{\"id\":1,\"title\":\"local edit\",\"version\":\"v1\"}".utf8)
    static let server = Array("{\"id\":1,\"title\":\"server edit\",\"version\":\"v2\"}".utf8)

    /// Queues an update of record `id` of `source` made against v1.
    @discardableResult
    static func queued(_ store: StateStore, id: String = "1", source: String = "posts", at time: String = "2026-11-29T10:00:00Z") throws -> OutboxRecord {
        try #require(try store.enqueue(source: source, recordID: id, idIsInteger: true, operation: .update, body: local,
                                       baseVersion: "v1", at: time, idempotencyKey: "k-\(id)"))
    }

    @Test func aDiscardedChangeLeavesTheOutboxAndIsKeptWithItsBodyAndTheServersSide() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store)
        let other = try Self.queued(t.store, id: "2")
        let kept = try t.store.discard(entry.seq, reason: "the server's version is v2; dropped the local update (ConflictPolicy=server-wins)",
                                       serverBody: Self.server, serverVersion: "v2", at: "2026-11-29T11:00:00Z")
        let expected = DiscardedChange(seq: entry.seq, source: "posts", recordID: "1", idIsInteger: true, operation: .update, body: Self.local,
                                       baseVersion: "v1", createdAt: "2026-11-29T10:00:00Z", discardedAt: "2026-11-29T11:00:00Z",
                                       reason: "the server's version is v2; dropped the local update (ConflictPolicy=server-wins)",
                                       serverBody: Self.server, serverVersion: "v2")
        #expect(kept == expected)
        #expect(try t.store.outbox(source: "posts").map(\.seq) == [other.seq])
        #expect(try t.store.discarded(source: "posts") == [expected])
        #expect(try t.store.discarded(source: nil) == [expected])
        #expect(try t.store.discarded(source: "comments") == [])
        #expect(try t.store.discardedChange(entry.seq) == expected)
        #expect(try t.store.discardedChange(other.seq) == nil)
        // Kept across a reopen: it is in the file, not in memory.
        t.store.close()
        #expect(try StateStore(path: t.path, cacheFolder: t.folder).discarded(source: "posts") == [expected])
    }

    @Test func aRemovalIsKeptWithoutABodyAndAServerThatRemovedTheRecordWithoutItsSide() throws {
        let t = try TemporaryStore()
        let removal = try #require(try t.store.enqueue(source: "posts", recordID: "7", idIsInteger: false, operation: .delete, body: nil,
                                                       baseVersion: "v1", at: "2026-11-29T10:00:00Z", idempotencyKey: "k"))
        let kept = try #require(try t.store.discard(removal.seq, reason: "the server removed it", serverBody: nil, serverVersion: nil,
                                                    at: "2026-11-29T11:00:00Z"))
        #expect(kept.operation == .delete && kept.body == nil && !kept.idIsInteger)
        #expect(kept.serverBody == nil && kept.serverVersion == nil)
        #expect(try t.store.discarded(source: "posts") == [kept])
    }

    @Test func discardingAnEntryThatIsGoneChangesNothing() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store)
        #expect(try t.store.discard(entry.seq + 100, reason: "r", serverBody: nil, serverVersion: nil, at: "2026-11-29T11:00:00Z") == nil)
        #expect(try t.store.outbox(source: "posts") == [entry])
        #expect(try t.store.discarded(source: nil) == [])
    }

    @Test func pruningForgetsOnlyTheSourcesChangesDiscardedBeforeTheCutoff() throws {
        let t = try TemporaryStore()
        let times = ["2026-10-01T09:00:00Z", "2026-10-30T12:00:00Z", "2026-11-29T10:00:00Z"]
        var seqs: [Int64] = []
        for (index, time) in times.enumerated() {
            let entry = try Self.queued(t.store, id: String(index + 1))
            try t.store.discard(entry.seq, reason: "r", serverBody: nil, serverVersion: nil, at: time)
            seqs.append(entry.seq)
        }
        let comments = try Self.queued(t.store, source: "comments")
        try t.store.discard(comments.seq, reason: "r", serverBody: nil, serverVersion: nil, at: times[0])

        // 30 days before 2026-11-29T10:00:00Z (the injected "now").
        let now = try #require(Timestamp(rfc3339: "2026-11-29T10:00:00Z"))
        let cutoff = Timestamp(secondsSinceEpoch: now.secondsSinceEpoch - 30 * 86_400).rfc3339
        #expect(cutoff == "2026-10-30T10:00:00Z")
        #expect(try t.store.pruneDiscarded(source: "posts", before: cutoff) == 1)
        #expect(try t.store.discarded(source: "posts").map(\.seq) == Array(seqs.dropFirst()))
        #expect(try t.store.discarded(source: "comments").map(\.seq) == [comments.seq], "another source keeps its own")
        #expect(try t.store.pruneDiscarded(source: "posts", before: cutoff) == 0)
        // A change discarded exactly at the cutoff is kept; one second later it is not.
        #expect(try t.store.pruneDiscarded(source: "posts", before: "2026-10-30T12:00:00Z") == 0)
        #expect(try t.store.pruneDiscarded(source: "posts", before: "2026-10-30T12:00:01Z") == 1)
        #expect(try t.store.discarded(source: "posts").map(\.seq) == [seqs[2]])
    }

    @Test func restoringQueuesANewEntryWithTheGivenBodyAndForgetsTheDiscardedOne() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store)
        try t.store.discard(entry.seq, reason: "r", serverBody: Self.server, serverVersion: "v2", at: "2026-11-29T11:00:00Z")
        let rebased = Array("{\"id\":1,\"title\":\"local edit\",\"version\":\"v2\"}".utf8)
        #expect(try t.store.restoreDiscarded(entry.seq, operation: .update, body: rebased, baseVersion: "v2",
                                             at: "2026-11-29T12:00:00Z", idempotencyKey: "k-new"))
        let queued = try t.store.outbox(source: "posts")
        #expect(queued.count == 1)
        let again = try #require(queued.first)
        #expect(again.seq > entry.seq, "a new entry: the outbox never reuses a number")
        #expect(again.recordID == "1" && again.idIsInteger && again.operation == .update && again.state == .queued)
        #expect(again.body == rebased && again.baseVersion == "v2" && again.createdAt == "2026-11-29T12:00:00Z")
        #expect(again.idempotencyKey == "k-new" && again.attempts == 0)
        #expect(try t.store.discarded(source: nil) == [])
        // The cache file owes the record: the local view changed.
        #expect(try t.store.state(of: "posts").pendingCount == 1)
    }

    @Test func restoringAnUnknownChangeChangesNothing() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store, id: "2")
        let discarded = try Self.queued(t.store)
        try t.store.discard(discarded.seq, reason: "r", serverBody: nil, serverVersion: nil, at: "2026-11-29T11:00:00Z")
        let before = (try t.store.outbox(source: nil), try t.store.discarded(source: nil))
        #expect(try !t.store.restoreDiscarded(999, operation: .update, body: Self.local, baseVersion: nil,
                                              at: "2026-11-29T12:00:00Z", idempotencyKey: "k"))
        #expect(try t.store.restoreDiscarded(entry.seq, operation: .update, body: Self.local, baseVersion: nil,
                                             at: "2026-11-29T12:00:00Z", idempotencyKey: "k") == false, "an outbox entry is not a discarded change")
        #expect(try t.store.outbox(source: nil) == before.0)
        #expect(try t.store.discarded(source: nil) == before.1)
    }

    @Test func aRestoredChangeCoalescesWithAChangeOfItsRecordQueuedSince() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store)
        try t.store.discard(entry.seq, reason: "r", serverBody: nil, serverVersion: nil, at: "2026-11-29T11:00:00Z")
        let newer = try Self.queued(t.store, at: "2026-11-29T11:30:00Z")
        #expect(try t.store.restoreDiscarded(entry.seq, operation: .update, body: Self.server, baseVersion: "v2",
                                             at: "2026-11-29T12:00:00Z", idempotencyKey: "k-new"))
        let queued = try t.store.outbox(source: "posts")
        #expect(queued.map(\.seq) == [newer.seq], "one queued change per record, as for any put")
        #expect(queued.first?.body == Self.server && queued.first?.createdAt == "2026-11-29T12:00:00Z")
    }

    /// A file written before the table existed: opening it adds the table and keeps every row; a read-only
    /// open of such a file (before the daemon opened it) lists none and forgets none.
    @Test func aStoreWithoutTheTableGetsItWhenOpenedAndReadsAsEmptyBefore() throws {
        let t = try TemporaryStore()
        let entry = try Self.queued(t.store)
        try t.store.database.execute("DROP TABLE discarded")
        t.store.close()

        let reader = try StateStore(readingFrom: t.path, cacheFolder: t.folder)
        #expect(try reader.discarded(source: nil) == [])
        #expect(try reader.pruneDiscarded(source: "posts", before: "2099-01-01T00:00:00Z") == 0)
        reader.close()

        let reopened = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(try reopened.outbox(source: "posts") == [entry])
        #expect(try reopened.discarded(source: nil) == [])
        try reopened.discard(entry.seq, reason: "r", serverBody: nil, serverVersion: nil, at: "2026-11-29T11:00:00Z")
        #expect(try reopened.discarded(source: "posts").map(\.seq) == [entry.seq])
        #expect(try StateStore(readingFrom: t.path, cacheFolder: t.folder).discarded(source: "posts").map(\.seq) == [entry.seq])
    }
}
