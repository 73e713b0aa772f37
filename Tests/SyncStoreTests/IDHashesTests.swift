import Testing
@testable import SyncStore

/// The ID hashes of a listing: the duplicate check's candidates and the ID index (docs/architecture.md,
/// "Storing listings").
@Suite("IDHashes and the ID index")
struct IDHashesTests {
    @Test func repeatedHashesAreFoundInAnyBucketAndNoOthers() {
        var hashes = IDHashes()
        let top: UInt64 = 0xff00_0000_0001_0000
        let low: UInt64 = 0x0000_0000_0003_0000
        for (seq, hash) in [top, 0x0000_0000_0001_0000, 0x0100_0000_0005_0000, low, top, low, low, 0x0100_0000_0006_0000].enumerated() {
            hashes.insert(hash, seq: seq)
        }
        #expect(hashes.repeated() == [top >> 16, low >> 16])
    }

    @Test func hashesThatDifferOnlyInTheirLowestBitsAreCandidates() {
        var hashes = IDHashes()
        hashes.insert(0x1234_5678_9abc_0001, seq: 0)
        hashes.insert(0x1234_5678_9abc_fffe, seq: 7)
        #expect(hashes.repeated() == [0x1234_5678_9abc])
    }

    @Test func agreesWithSortingEverythingAtOnce() {
        // The hashes of 20,000 IDs (spread over every bucket), every 97th ID repeated.
        var all: [UInt64] = []
        for index in 0..<20_000 {
            all.append(RecordChunk.hash(String(index % 97 == 0 && index > 0 ? index / 2 : index)) >> 16)
        }
        var hashes = IDHashes()
        for (index, hash) in all.enumerated() { hashes.insert(hash << 16, seq: index / 512) }
        let sorted = all.sorted()
        var expected: Set<UInt64> = []
        for index in 1..<sorted.count where sorted[index] == sorted[index - 1] { expected.insert(sorted[index]) }
        #expect(!expected.isEmpty)
        #expect(hashes.repeated() == expected)
    }

    /// The counting pass and insertion sorts give exactly the standard sort's order: for buckets of every
    /// size around the insertion limit, for runs that share their top byte (IDs made to collide, which
    /// take the standard sort), and for repeated entries.
    @Test(arguments: [0, 1, 2, 31, 32, 33, 390, 5000])
    func sortingABucketAgreesWithTheStandardSort(count: Int) {
        var random = SystemRandomNumberGenerator()
        let spread = (0..<count).map { _ in UInt64.random(in: 0...UInt64.max, using: &random) }
        // Half the entries share one top byte (a run far longer than `insertionRun`), some appear twice.
        let colliding = (0..<count).map { index in
            index % 2 == 0 ? 0x5A00_0000_0000_0000 | UInt64.random(in: 0...0xff_ffff_ffff, using: &random) : spread[index]
        } + spread.prefix(count / 10)
        var scratch: [UInt64] = [7, 7, 7]
        for input in [spread, colliding, spread.sorted(), spread.sorted().reversed()] {
            var entries = input
            IDHashes.sortEntries(&entries, scratch: &scratch)
            #expect(entries == input.sorted())
        }
    }

    @Test func theIndexFindsEveryRecordAndNoMissingOne() throws {
        let t = try TemporaryStore()
        let listing = records(1500)
        try store(listing, into: t.store)
        for (id, body) in listing {
            #expect(try t.store.chunksHolding(source: "posts", id: id) == [(Int(id)! - 1) / RecordChunk.capacity])
            var found: [UInt8] = []
            #expect(try t.store.record(source: "posts", id: id) { found = Array($0.body) })
            #expect(found == body)
        }
        #expect(try t.store.chunksHolding(source: "posts", id: "1501") == [])
        #expect(try !t.store.record(source: "posts", id: "1501") { _ in })
    }

    @Test func aChangedListingRewritesTheIndex() throws {
        let t = try TemporaryStore()
        try store(records(1500), into: t.store, time: "2026-11-29T10:00:00Z")
        try store(records(600, from: 1000), into: t.store, time: "2026-11-29T11:00:00Z")
        #expect(try !t.store.record(source: "posts", id: "1") { _ in })
        var found: [UInt8] = []
        #expect(try t.store.record(source: "posts", id: "1599") { found = Array($0.body) })
        #expect(found == Array("{\"id\":1599,\"v\":0}".utf8))
        #expect(try t.store.chunksHolding(source: "posts", id: "1599") == [1])
    }

    @Test func aChangedListingSavedInTheSameSecondWithAsManyRecordsIsIndexedAnew() throws {
        let t = try TemporaryStore()
        try store(records(1500), into: t.store, time: "2026-11-29T10:00:00Z")
        try store(records(1500, from: 2001), into: t.store, time: "2026-11-29T10:00:00Z")
        var found: [UInt8] = []
        #expect(try t.store.record(source: "posts", id: "3000") { found = Array($0.body) })
        #expect(found == Array("{\"id\":3000,\"v\":0}".utf8))
        #expect(try !t.store.record(source: "posts", id: "1") { _ in })
    }

    @Test func anIndexOfAnotherListingIsNotTrustedAndTheListingIsScanned() throws {
        let t = try TemporaryStore()
        try store(records(1500), into: t.store)
        // An older syncd committed another listing: it moved saved_at, not the stamp.
        try t.store.database.execute("UPDATE sources SET saved_at = '2026-11-30T00:00:00Z'")
        #expect(try t.store.chunksHolding(source: "posts", id: "700") == nil)
        var found: [UInt8] = []
        #expect(try t.store.record(source: "posts", id: "700") { found = Array($0.body) })
        #expect(found == Array("{\"id\":700,\"v\":0}".utf8))
    }

    @Test func aDamagedIndexRowIsACorruptionErrorAndTheListingStays() throws {
        let t = try TemporaryStore()
        try store(records(1500), into: t.store)
        let bucket = Int(RecordChunk.hash("700") >> 56)
        try t.store.database.execute("UPDATE id_index SET entries = substr(entries, 1, 5) WHERE bucket = \(bucket)")
        do {
            _ = try t.store.record(source: "posts", id: "700") { _ in }
            Issue.record("a damaged index row was read")
        } catch let error as StoreError {
            #expect(error.description.contains("ID index row \(bucket) of posts is 5 bytes, not whole 8-byte entries"))
        }
        #expect(try storedBodies(t.store) == records(1500).map { String(decoding: $0.1, as: UTF8.self) })
    }

    @Test func localRecordIsTheLatestLocalChangeOrTheServersRecord() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        _ = try t.store.enqueue(source: "posts", recordID: "2", idIsInteger: true, operation: .update, body: Array("{\"id\":2,\"v\":9}".utf8),
                                baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "k1")
        _ = try t.store.enqueue(source: "posts", recordID: "3", idIsInteger: true, operation: .delete, body: nil,
                                baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "k2")
        var view: [String: String] = [:]
        try t.store.forEachLocalRecord(source: "posts") { id, json in view[id] = String(decoding: json, as: UTF8.self) }
        for id in ["1", "2", "3", "4"] {
            var found: String?
            _ = try t.store.localRecord(source: "posts", id: id) { found = String(decoding: $0, as: UTF8.self) }
            #expect(found == view[id], "Get \(id) agrees with the cache file's view")
        }
        #expect(view["2"] == "{\"id\":2,\"v\":9}" && view["3"] == nil && view["1"] != nil)
    }
}
