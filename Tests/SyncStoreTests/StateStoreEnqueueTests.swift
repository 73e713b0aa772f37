import Testing
@testable import SyncStore

/// `enqueue`: changes coalesce only while none of them was attempted; a change made after one that went out
/// (its request may be on the wire, or its answer lost) is a new entry after it, never merged into it.
@Suite("StateStore enqueue")
struct StateStoreEnqueueTests {
    @discardableResult
    func queue(_ store: StateStore, _ operation: OutboxRecord.Operation, _ body: String?) throws -> OutboxRecord? {
        try store.enqueue(source: "posts", recordID: "70", idIsInteger: true, operation: operation,
                          body: body.map { Array($0.utf8) }, baseVersion: nil, at: "2026-11-29T10:00:00Z",
                          idempotencyKey: "key-" + (body ?? "delete"))
    }

    func bodies(_ store: StateStore) throws -> [String] {
        try store.outbox(source: "posts").map { $0.body.map { String(decoding: $0, as: UTF8.self) } ?? "-" }
    }

    func localView(_ store: StateStore) throws -> [String] {
        var out: [String] = []
        try store.forEachLocalRecord(source: "posts") { _, json in out.append(String(decoding: json, as: UTF8.self)) }
        return out
    }

    /// Never attempted: a second put is merged into the queued create (one POST with the newest content).
    @Test func neverAttemptedChangesCoalesce() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try queue(store, .create, "first")
        try queue(store, .create, "second")
        let entries = try store.outbox(source: "posts")
        #expect(entries.map(\.operation) == [.create])
        #expect(try bodies(store) == ["second"])
        try queue(store, .delete, nil)
        #expect(try store.outbox(source: "posts").isEmpty)
    }

    /// The create went out (its answer lost): the second put is an update queued after it, with its own
    /// idempotency key, and the create keeps exactly what was sent.
    @Test func changeAfterAnAttemptedCreateIsANewUpdate() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let create = try #require(try queue(store, .create, "first"))
        let claimed = try #require(try store.markAttempt(create.seq, at: AttemptTime(boot: "b", uptime: 0)))
        #expect(claimed.attempts == 1 && claimed.body == Array("first".utf8))
        let later = try #require(try queue(store, .create, "second"))
        #expect(later.seq != create.seq)
        #expect(later.operation == .update)
        #expect(later.idempotencyKey != create.idempotencyKey)
        #expect(try bodies(store) == ["first", "second"])
        // Further changes coalesce into the new, never-attempted entry; the local view shows the newest.
        try queue(store, .update, "third")
        #expect(try bodies(store) == ["first", "third"])
        #expect(try store.outbox(source: "posts").map(\.operation) == [.create, .update])
        #expect(try localView(store) == ["third"])
        // A removal then replaces that update; the attempted create stays as it was.
        try queue(store, .delete, nil)
        #expect(try store.outbox(source: "posts").map(\.operation) == [.create, .delete])
        #expect(try bodies(store) == ["first", "-"])
        #expect(try localView(store).isEmpty)
    }

    /// A removal after an attempted create is queued after it, not merged (the create may be on the server).
    @Test func removalAfterAnAttemptedCreateIsQueuedAfterIt() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let create = try #require(try queue(store, .create, "first"))
        _ = try store.markAttempt(create.seq, at: AttemptTime(boot: "b", uptime: 0))
        try queue(store, .delete, nil)
        #expect(try store.outbox(source: "posts").map(\.operation) == [.create, .delete])
        #expect(try bodies(store) == ["first", "-"])
    }

    /// A change after a sent one (the server took it, the listing does not show it yet) is an update.
    @Test func changeAfterASentCreateIsAnUpdate() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let create = try #require(try queue(store, .create, "first"))
        _ = try store.markAttempt(create.seq, at: AttemptTime(boot: "b", uptime: 0))
        try store.markSent(create.seq)
        try queue(store, .create, "second")
        let entries = try store.outbox(source: "posts")
        #expect(entries.map(\.state) == [.sent, .queued])
        #expect(entries.map(\.operation) == [.create, .update])
        #expect(try localView(store) == ["second"])
    }

    /// `markAttempt` claims only a queued entry and returns it as it stands; a parked one is left alone.
    @Test func markAttemptClaimsOnlyQueuedEntries() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let entry = try #require(try queue(store, .update, "first"))
        try store.park(entry.seq, status: 422, error: "HTTP 422")
        #expect(try store.markAttempt(entry.seq, at: AttemptTime(boot: "b", uptime: 0)) == nil)
        #expect(try store.outbox(source: "posts").first?.attempts == 0)
        #expect(try store.markAttempt(entry.seq + 99, at: AttemptTime(boot: "b", uptime: 0)) == nil)
    }
}
