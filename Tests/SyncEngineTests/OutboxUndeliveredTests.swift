@testable import SyncEngine
@testable import SyncStore
import Testing

/// Which queued changes a refresh must have delivered (`OutboxRecord.undelivered`, docs/local-changes.md,
/// "Always a push scheduled"): those no person has to act on first, queued before the refresh began.
@Suite("Undelivered changes")
struct OutboxUndeliveredTests {
    func entry(_ seq: Int64, _ id: String, _ state: OutboxRecord.State, error: String? = nil) -> OutboxRecord {
        OutboxRecord(seq: seq, source: "posts", recordID: id, idIsInteger: false, operation: .update, body: nil,
                     baseVersion: nil, createdAt: "2026-11-30T00:00:00Z", idempotencyKey: "k\(seq)", state: state,
                     attempts: 0, unconfirmed: 0, lastStatus: nil, lastError: error)
    }

    @Test("a queued change nothing holds is undelivered; sent ones are delivered")
    func queuedAndSent() {
        let entries = [entry(1, "a", .sent), entry(2, "b", .queued), entry(3, "c", .queued)]
        #expect(OutboxRecord.undelivered(entries, through: 3).map(\.seq) == [2, 3])
        #expect(OutboxRecord.undelivered([entry(1, "a", .sent)], through: 1).isEmpty)
    }

    @Test("a change behind a parked or conflicting change of its record waits for a person, not for a retry")
    func heldForAPerson() {
        let entries = [entry(1, "a", .parked, error: "HTTP 400"), entry(2, "a", .queued),
                       entry(3, "b", .conflict), entry(4, "b", .queued), entry(5, "c", .queued)]
        #expect(OutboxRecord.undelivered(entries, through: 5).map(\.seq) == [5])
    }

    @Test("a superseded parked change holds nothing back")
    func superseded() {
        var superseded = entry(1, "a", .parked, error: "HTTP 400")
        superseded.superseded = true
        let entries = [superseded, entry(2, "a", .queued)]
        #expect(OutboxRecord.undelivered(entries, through: 2).map(\.seq) == [2])
    }

    @Test("changes queued after the refresh began are left to their own trigger")
    func queuedDuringTheRefresh() {
        let entries = [entry(1, "a", .queued), entry(2, "b", .queued)]
        #expect(OutboxRecord.undelivered(entries, through: 1).map(\.seq) == [1])
        #expect(OutboxRecord.undelivered(entries, through: 0).isEmpty)
    }

    @Test("a parked change holds back only its own record, told apart by the ID's bytes")
    func heldByBytes() {
        // "\u{E9}" (NFC) and "e\u{301}" (NFD): equal to String.==, two records to the server.
        let entries = [entry(1, "\u{E9}", .parked, error: "HTTP 400"), entry(2, "e\u{301}", .queued), entry(3, "\u{E9}", .queued)]
        #expect(OutboxRecord.undelivered(entries, through: 3).map(\.seq) == [2])
    }
}
