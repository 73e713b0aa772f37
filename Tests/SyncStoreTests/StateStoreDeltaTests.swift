import Foundation
import Glibc
import Testing
@testable import SyncStore
import SyncCore

/// Applying a delta to the stored listing (docs/architecture.md, "Incremental pull: applying a delta"): records
/// replaced in place, new ones appended, removals dropped, everything else byte for byte; the untouched chunks
/// copied; local changes applied as a listing's commit applies them; the checkpoint committed with the index.
@Suite("StateStore deltas")
struct StateStoreDeltaTests {
    static let time = "2026-12-02T09:00:00Z"

    func body(_ id: Int, _ version: Int) -> [UInt8] { Array("{\"id\":\(id),\"v\":\(version)}".utf8) }

    func upsert(_ id: Int, _ version: Int) -> DeltaRecord {
        DeltaRecord(id: String(id), idIsInteger: true, version: nil, body: body(id, version))
    }

    func checkpoint(_ value: String, deltaAt: String? = nil) -> DeltaCheckpoint {
        DeltaCheckpoint(mode: "watermark", binding: "http://h/posts|_since|/last_modified", value: value,
                        fullListingAt: "2026-11-29T10:00:00Z", deltaAt: deltaAt)
    }

    func metadata(_ time: String = StateStoreDeltaTests.time, _ checkpoint: DeltaCheckpoint?) -> ListingMetadata {
        ListingMetadata(url: "http://h/posts", etag: "\"e\"", lastModified: nil, time: time, allowEmpty: false, checkpoint: checkpoint)
    }

    /// A listing of `count` records whose checkpoint is "100".
    func stored(_ count: Int) throws -> TemporaryStore {
        let t = try TemporaryStore()
        let writer = try t.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-11-29T10:00:00Z", etag: "\"e\""))
        for (id, body) in records(count) {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        _ = try writer.commit(metadata("2026-11-29T10:00:00Z", checkpoint("100")))
        return t
    }

    @discardableResult
    func apply(_ t: TemporaryStore, _ upserts: [DeltaRecord], removing removals: [String] = [], time: String = StateStoreDeltaTests.time,
               checkpoint value: String = "200") throws -> ListingOutcome {
        try t.store.applyDelta(source: "posts", upserts: upserts, removals: removals,
                               metadata: metadata(time, checkpoint(value, deltaAt: time)))
    }

    /// `listing` with the delta applied as its rules say: replaced in place, removed, new ones at the end.
    func applied(_ listing: [(String, [UInt8])], _ upserts: [DeltaRecord], removing removals: Set<String>) -> [(String, [UInt8])] {
        var rest = upserts
        var out: [(String, [UInt8])] = []
        for (id, body) in listing where !removals.contains(id) {
            if let index = rest.firstIndex(where: { $0.id == id }) {
                out.append((id, rest.remove(at: index).body))
            } else {
                out.append((id, body))
            }
        }
        return out + rest.map { ($0.id, $0.body) }
    }

    /// The cache file a full listing of `listing` at `time` writes, with `outbox` queued before it.
    func fullListingFile(_ listing: [(String, [UInt8])], time: String = StateStoreDeltaTests.time,
                         outbox: (StateStore) throws -> Void = { _ in }) throws -> [UInt8] {
        let reference = try TemporaryStore()
        try outbox(reference.store)
        try store(listing, into: reference.store, time: time)
        return try bytes(reference)
    }

    func bytes(_ t: TemporaryStore) throws -> [UInt8] { Array(try #require(FileManager.default.contents(atPath: t.folder.path(of: "posts")))) }

    /// A file's text without its block padding: what two files that frame their chunks differently share.
    func unpadded(_ bytes: [UInt8]) -> String { withoutPadding(String(decoding: bytes, as: UTF8.self)) }

    func inode(_ t: TemporaryStore) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: t.folder.path(of: "posts"))[.systemFileNumber] as? UInt64)
    }

    func found(_ t: TemporaryStore, _ id: String) throws -> String? {
        var body: String?
        _ = try t.store.record(source: "posts", id: id) { body = String(decoding: $0.body, as: UTF8.self) }
        return body
    }

    // MARK: Records

    /// 1,500 records in three chunks (512, 512, 476): a change, a removal in the first, middle and last chunk,
    /// two new records, a removal of an ID the listing lacks. The file is what a full listing of the result
    /// writes, byte for byte; reads by position and by ID find the records where they now are.
    @Test func recordsAreReplacedInPlaceAddedAtTheEndAndRemovedAndTheRestStays() throws {
        let t = try stored(1500)
        let upserts = [upsert(3, 1), upsert(700, 1), upsert(1490, 1), upsert(2001, 0), upsert(2002, 0)]
        let removals = ["5", "1000", "1500", "9999"]
        let outcome = try apply(t, upserts, removing: removals)
        let expected = applied(records(1500), upserts, removing: Set(removals))
        #expect(outcome == ListingOutcome(count: 1499, unchanged: false))
        // The document a full listing of the result writes; its padding differs where a removal left a chunk shorter.
        #expect(try unpadded(bytes(t)) == unpadded(fullListingFile(expected)), "the file a full listing of the result writes")
        #expect(try storedBodies(t.store) == expected.map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.state(of: "posts").recordCount == 1499)
        #expect(try t.store.state(of: "posts").savedAt == Self.time)
        // By ID, through the updated ID index (it stays valid: no scan).
        #expect(try found(t, "700") == "{\"id\":700,\"v\":1}")
        #expect(try found(t, "2002") == "{\"id\":2002,\"v\":0}")
        #expect(try found(t, "5") == nil && found(t, "1000") == nil && found(t, "1500") == nil)
        #expect(try t.store.chunksHolding(source: "posts", id: "2001") != nil, "the ID index answers")
        #expect(try t.store.listingPosition(source: "posts", id: "2001") == .at(1497))
        #expect(try t.store.listingPosition(source: "posts", id: "1001") == .at(998))
        // By position: the chunks before hold fewer records now.
        var page: [String] = []
        _ = try t.store.records(source: "posts", offset: 1020, limit: 3) { page.append($0.id) }
        #expect(page == expected[1020..<1023].map(\.0))
        var local: [String] = []
        #expect(try t.store.localRecords(source: "posts", offset: 1496, limit: 5) { id, _ in local.append(id) } == 1499)
        #expect(local == ["1499", "2001", "2002"])
    }

    /// A removal that empties a whole chunk: the chunk stays, empty, so that the chunks after it keep their numbers
    /// (the ID index names chunks); a local change rebuilt afterwards frames the records the same way.
    @Test func aDeltaEmptyingAChunkKeepsTheChunksAfterItAndRebuildsStillWork() throws {
        let t = try stored(1500)
        let removals = (513...1024).map(String.init)
        try apply(t, [upsert(1200, 1)], removing: removals)
        let expected = applied(records(1500), [upsert(1200, 1)], removing: Set(removals))
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 0, 476])
        #expect(try bytes(t) == fullListingFile(expected))
        #expect(try found(t, "1300") == "{\"id\":1300,\"v\":0}")
        // A local change in the last chunk, written by copies, and one with the file changed outside syncd (read whole).
        try t.store.enqueue(source: "posts", recordID: "1400", idIsInteger: true, operation: .update, body: body(1400, 7),
                            baseVersion: nil, at: Self.time, idempotencyKey: "k1")
        try t.store.rebuildCacheFile(source: "posts")
        let withLocal = try fullListingFile(expected) { try $0.enqueue(source: "posts", recordID: "1400", idIsInteger: true, operation: .update,
                                                                       body: self.body(1400, 7), baseVersion: nil, at: Self.time, idempotencyKey: "k1") }
        #expect(try bytes(t) == withLocal)
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 0, 476])
        try t.store.run("UPDATE sources SET snapshot_ctime_ns = 1 WHERE name = ?1", "posts")
        try t.store.enqueue(source: "posts", recordID: "2", idIsInteger: true, operation: .delete, body: nil, baseVersion: nil,
                            at: Self.time, idempotencyKey: "k2")
        try t.store.rebuildCacheFile(source: "posts")
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 0, 476])
        #expect(try found(t, "1400") == "{\"id\":1400,\"v\":0}", "the server's copy, through the ID index")
        #expect(try t.store.listingPosition(source: "posts", id: "1400") == .at(512 + 1400 - 1025))
        // The local view by position: record 2 removed locally, 1400 edited, the emptied chunk in between.
        var view: [String] = []
        #expect(try t.store.localRecords(source: "posts", offset: 600, limit: 2) { _, json in view.append(String(decoding: json, as: UTF8.self)) } == 987)
        _ = try t.store.localRecords(source: "posts", offset: 886, limit: 1) { _, json in view.append(String(decoding: json, as: UTF8.self)) }
        #expect(view == ["{\"id\":1114,\"v\":0}", "{\"id\":1115,\"v\":0}", "{\"id\":1400,\"v\":7}"])
    }

    /// 5,000 records in ten chunks: a change in one chunk reads and writes that chunk only; the nine others are
    /// copied by range, unread. Likewise in the first and in the last chunk.
    @Test(arguments: [1, 2_300, 4_990])
    func onlyTheChunksADeltaTouchesAreReadAndWrittenAgain(id: Int) throws {
        let t = try stored(5000)
        let seq = try t.store.state(of: "posts").changeSeq
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try apply(t, [upsert(id, 1)])
        t.store.workCounter = nil
        #expect(counter.reemittedChunks == 1)
        #expect(counter.copiedChunks == 9)
        #expect(counter.overlayScans == 0, "a listing without local changes holds no overlay: the chunks' entries are not read for one")
        #expect(counter.indexEntriesVisited <= RecordChunk.capacity, "one chunk walked, once: what the change log needs of it is kept then")
        #expect(counter.changeDigests == 1, "the change log compares the delta's record alone, not the 511 re-emitted as stored")
        #expect(try t.store.changes(source: "posts", since: seq, limit: 10).get() == ChangePage(changed: [String(id)], removed: [], next: nil, seq: seq + 1))
        var listing = records(5000)
        listing[id - 1].1 = body(id, 1)
        #expect(try bytes(t) == fullListingFile(listing))
    }

    /// New records only: the last chunk, which has room, takes them (no small chunk left behind); the others are copied.
    @Test func newRecordsFillTheLastChunk() throws {
        let t = try stored(1100)
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try apply(t, (2001...2100).map { upsert($0, 0) })
        #expect((counter.reemittedChunks, counter.copiedChunks) == (1, 2))
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 512, 176])
        #expect(try bytes(t) == fullListingFile(records(1100) + records(100, from: 2001)))
    }

    /// An empty delta, and one whose records are the stored ones byte for byte: no file is written (same inode,
    /// same bytes) and nothing is logged, yet the checkpoint, the delta's time and the success time are stored.
    @Test(arguments: [false, true])
    func aDeltaChangingNothingWritesNoFileAndStoresTheCheckpoint(equalRecords: Bool) throws {
        let t = try stored(1500)
        let (before, inodeBefore) = (try bytes(t), try inode(t))
        let seq = try t.store.state(of: "posts").changeSeq
        let outcome = try apply(t, equalRecords ? [upsert(3, 0), upsert(1499, 0)] : [], removing: equalRecords ? ["9999"] : [])
        #expect(outcome == ListingOutcome(count: 1500, unchanged: true))
        #expect(try bytes(t) == before)
        #expect(try inode(t) == inodeBefore)
        #expect(t.leftovers().isEmpty)
        let state = try t.store.state(of: "posts")
        #expect((state.savedAt, state.lastSuccess, state.changeSeq) == ("2026-11-29T10:00:00Z", Self.time, seq))
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("200", deltaAt: Self.time))
    }

    // MARK: Local changes

    /// A record edited locally that the delta changes: the file shows the local body, the index the server's new
    /// one; a sent create the delta brings is settled (the file shows the server's copy, no longer pending). The
    /// file is the one a full listing with the same outbox writes.
    @Test func localChangesAreAppliedOverTheDeltaAsOverAListing() throws {
        let queue: (StateStore) throws -> Void = { store in
            try store.enqueue(source: "posts", recordID: "700", idIsInteger: true, operation: .update, body: Array(#"{"id":700,"v":"mine"}"#.utf8),
                              baseVersion: nil, at: Self.time, idempotencyKey: "k-700")
            let create = try #require(try store.enqueue(source: "posts", recordID: "3000", idIsInteger: true, operation: .create,
                                                        body: Array(#"{"id":3000,"v":"mine"}"#.utf8), baseVersion: nil,
                                                        at: Self.time, idempotencyKey: "k-3000"))
            try store.markSent(create.seq)
        }
        let t = try stored(1500)
        try queue(t.store)
        try t.store.rebuildCacheFile(source: "posts")
        let upserts = [upsert(700, 1), DeltaRecord(id: "3000", idIsInteger: true, version: nil, body: Array(#"{"id":3000,"v":"server"}"#.utf8))]
        try apply(t, upserts)
        let expected = applied(records(1500), upserts, removing: [])
        #expect(try bytes(t) == fullListingFile(expected, outbox: queue))
        let file = String(decoding: try bytes(t), as: UTF8.self)
        #expect(file.contains(#"{"id":700,"v":"mine"}"#) && !file.contains(#"{"id":700,"v":1}"#))
        #expect(file.contains(#"{"id":3000,"v":"server"}"#) && file.hasSuffix("\"pending\":[700],\"parked\":[],\"conflicts\":[]}\n"))
        #expect(try found(t, "700") == "{\"id\":700,\"v\":1}", "the index keeps the server's new body")
    }

    /// The server removes a record with a pending local edit: the edit stays in the view (after the listing's
    /// records, as a full listing without the record shows it) and is logged as changed, not removed.
    @Test func aRemovedRecordWithALocalEditStaysShownAsAfterAFullListing() throws {
        let queue: (StateStore) throws -> Void = { store in
            try store.enqueue(source: "posts", recordID: "600", idIsInteger: true, operation: .update, body: Array(#"{"id":600,"v":"mine"}"#.utf8),
                              baseVersion: nil, at: Self.time, idempotencyKey: "k-600")
        }
        let t = try stored(1500)
        try queue(t.store)
        try t.store.rebuildCacheFile(source: "posts")
        let seq = try t.store.state(of: "posts").changeSeq
        try apply(t, [], removing: ["600"])
        #expect(try unpadded(bytes(t)) == unpadded(fullListingFile(applied(records(1500), [], removing: ["600"]), outbox: queue)))
        #expect(try t.store.changes(source: "posts", since: seq, limit: 10).get() == ChangePage(changed: ["600"], removed: [], next: nil, seq: seq + 1))
        #expect(try found(t, "600") == nil, "gone from the server's listing")
    }

    /// An overlay no local change stands behind any more (its outbox entry gone without the chunk written again):
    /// a delta re-emits that chunk with the server's body, whether or not it names a record of the chunk, and the
    /// records the delta does not name are copied as stored. The file is the one a full listing writes.
    @Test(arguments: [701, 1400])
    func aStaleOverlayIsClearedByTheNextDelta(changed: Int) throws {
        let upserts = [upsert(changed, 9)]
        let t = try stored(1500)
        try t.store.enqueue(source: "posts", recordID: "700", idIsInteger: true, operation: .update, body: Array(#"{"id":700,"v":"mine"}"#.utf8),
                            baseVersion: nil, at: Self.time, idempotencyKey: "k-700")
        try t.store.rebuildCacheFile(source: "posts")
        try t.store.database.execute("DELETE FROM outbox")
        try apply(t, upserts)
        let expected = applied(records(1500), upserts, removing: [])
        #expect(try bytes(t) == fullListingFile(expected))
        #expect(try found(t, "700") == String(decoding: try #require(records(1500).first { $0.0 == "700" }).1, as: UTF8.self))
    }

    /// The store records when no chunk holds an overlaid entry, so a delta reads no chunk it does not rewrite:
    /// an overlay stored clears that, the delta after it reads every chunk's entries once and, its local change
    /// still there, keeps it; once the change is gone and a delta cleared it, none is read again.
    @Test func chunksAreReadForOverlaysOnlyWhileOneMayBeStored() throws {
        let t = try stored(1500)
        #expect(try t.store.holdsNoOverlay(source: "posts"))
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try t.store.enqueue(source: "posts", recordID: "700", idIsInteger: true, operation: .update, body: Array(#"{"id":700,"v":"mine"}"#.utf8),
                            baseVersion: nil, at: Self.time, idempotencyKey: "k-700")
        try t.store.rebuildCacheFile(source: "posts")
        #expect(try !t.store.holdsNoOverlay(source: "posts"))
        try apply(t, [upsert(1400, 1)])
        #expect(counter.overlayScans == 1)
        #expect(try !t.store.holdsNoOverlay(source: "posts"), "the local edit is still shown")
        #expect(String(decoding: try bytes(t), as: UTF8.self).contains(#"{"id":700,"v":"mine"}"#))
        try t.store.database.execute("DELETE FROM outbox")
        try apply(t, [upsert(1400, 2)], checkpoint: "300")
        #expect(counter.overlayScans == 2)
        #expect(try t.store.holdsNoOverlay(source: "posts"))
        try apply(t, [upsert(1400, 3)], checkpoint: "400")
        #expect(counter.overlayScans == 2)
        #expect(try bytes(t) == fullListingFile(applied(records(1500), [upsert(1400, 3)], removing: [])))
    }

    /// The mark is not trusted when another commit stored an overlay while a writer ran (it may be in a chunk the
    /// writer did not look at), nor once the file it names was replaced by a syncd that does not keep it.
    @Test func theNoOverlayMarkIsNotSetOverAnotherCommitsOverlayNorTrustedForAnotherFile() throws {
        let t = try stored(1500)
        let writer = try t.store.beginListing(source: "posts", header: CacheHeader(savedAt: Self.time, etag: "\"e\""))
        for (id, body) in records(1500) { try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) } }
        try t.store.database.execute("UPDATE sources SET overlay_writes = overlay_writes + 1, overlay_free_hash = NULL")
        _ = try writer.commit(metadata(Self.time, checkpoint("100")))
        #expect(try !t.store.holdsNoOverlay(source: "posts"))
        try apply(t, [upsert(3, 1)])
        #expect(try t.store.holdsNoOverlay(source: "posts"))
        try t.store.database.execute("UPDATE sources SET snapshot_hash = snapshot_hash + 1")
        #expect(try !t.store.holdsNoOverlay(source: "posts"))
    }

    /// A cache file whose status moved since syncd wrote it is not copied from: every chunk is read, each
    /// checked against its hash, and the result is the same.
    @Test func aFileNotTrustedWholeIsReadChunkByChunk() throws {
        let t = try stored(1500)
        try t.store.run("UPDATE sources SET snapshot_ctime_ns = 1 WHERE name = ?1", "posts")
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        try apply(t, [upsert(700, 1), upsert(2001, 0)], removing: ["2"])
        #expect((counter.reemittedChunks, counter.copiedChunks) == (3, 0))
        #expect(try unpadded(bytes(t)) == unpadded(fullListingFile(applied(records(1500), [upsert(700, 1), upsert(2001, 0)], removing: ["2"]))))
    }

    /// Deltas overlap (a watermark's records are asked for again): the same delta twice changes nothing the second time.
    @Test func theSameDeltaAppliedTwiceChangesNothingTheSecondTime() throws {
        let t = try stored(1500)
        let upserts = [upsert(700, 1), upsert(2001, 0)]
        #expect(try !apply(t, upserts, removing: ["2"]).unchanged)
        let (before, inodeBefore, seq) = (try bytes(t), try inode(t), try t.store.state(of: "posts").changeSeq)
        #expect(try apply(t, upserts, removing: ["2"], time: "2026-12-02T10:00:00Z", checkpoint: "300") == ListingOutcome(count: 1500, unchanged: true))
        #expect(try (bytes(t), inode(t), t.store.state(of: "posts").changeSeq) == (before, inodeBefore, seq))
        #expect(try t.store.deltaCheckpoint(source: "posts")?.value == "300")
    }

    /// The full listing after deltas (`FullResyncIntervalSec=`) frames the chunks anew: the same records give the
    /// same file and log nothing; lookups by ID and position find them in the new chunks.
    @Test func aFullListingAfterDeltasFramesTheChunksAnew() throws {
        let t = try stored(1500)
        try apply(t, [upsert(2001, 0)], removing: ["10", "600"])
        let expected = applied(records(1500), [upsert(2001, 0)], removing: ["10", "600"])
        let (before, seq) = (try bytes(t), try t.store.state(of: "posts").changeSeq)
        try store(expected, into: t.store, time: Self.time)
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 512, 475])
        // The same document, padded for the new chunks.
        #expect(try unpadded(bytes(t)) == unpadded(before))
        #expect(try t.store.state(of: "posts").changeSeq == seq)
        #expect(try t.store.listingPosition(source: "posts", id: "2001") == .at(1498))
        #expect(try found(t, "1024") == "{\"id\":1024,\"v\":0}")
    }

    /// A stored listing of no records takes a delta's records as its first.
    @Test func aDeltaOverAnEmptyListingAddsItsRecords() throws {
        let t = try TemporaryStore()
        try store([], into: t.store, allowEmpty: true)
        try apply(t, [upsert(1, 0), upsert(2, 0)])
        #expect(try bytes(t) == fullListingFile(records(2)))
        #expect(try found(t, "2") == "{\"id\":2,\"v\":0}")
    }

    // MARK: Change log

    /// The log gets the delta's changed, new and removed IDs, once, and not those it brought unchanged or removed
    /// without holding them.
    @Test func theChangeLogGetsExactlyWhatTheDeltaChanged() throws {
        let t = try stored(1500)
        let seq = try t.store.state(of: "posts").changeSeq
        try apply(t, [upsert(3, 0), upsert(700, 1), upsert(2001, 0)], removing: ["1200", "9999"])
        #expect(try t.store.changes(source: "posts", since: seq, limit: 100).get()
                    == ChangePage(changed: ["700", "2001"], removed: ["1200"], next: nil, seq: seq + 1))
    }

    // MARK: The checkpoint

    @Test func theCheckpointIsStoredByAFullListingClearedByOneWithoutAndByForgettingTheListing() throws {
        let t = try stored(10)
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("100"))
        try apply(t, [upsert(3, 1)])
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("200", deltaAt: Self.time))
        // A local change's rebuild keeps it.
        try t.store.enqueue(source: "posts", recordID: "4", idIsInteger: true, operation: .delete, body: nil, baseVersion: nil,
                            at: Self.time, idempotencyKey: "k")
        try t.store.rebuildCacheFile(source: "posts")
        #expect(try t.store.deltaCheckpoint(source: "posts")?.value == "200")
        // A full listing under Delta=none leaves none, even when it changes nothing.
        #expect(try store(applied(records(10), [upsert(3, 1)], removing: []), into: t.store, time: "2026-12-02T10:00:00Z").unchanged)
        #expect(try t.store.deltaCheckpoint(source: "posts") == nil)
        let writer = try t.store.beginListing(source: "posts")
        for (id, body) in records(10) {
            try body.withUnsafeBytes { try writer.add(id: id, idIsInteger: true, version: nil, body: $0) }
        }
        _ = try writer.commit(metadata("2026-12-02T11:00:00Z", checkpoint("300")))
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("300"))
        try t.store.forgetListing(source: "posts")
        #expect(try t.store.deltaCheckpoint(source: "posts") == nil)
        #expect(try t.store.database.strings("SELECT source FROM delta_checkpoints") == [])
    }

    /// A logout erases the account's state folder (AccountErasure): the new store carries the change numbers
    /// over, never a checkpoint, so the first refresh after it is a full listing.
    @Test func aLogoutLeavesNoCheckpoint() throws {
        let t = try stored(10)
        let sequences = ["posts": try t.store.changeSequence(source: "posts").seq]
        t.store.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: t.path + suffix) }
        let fresh = try StateStore(path: t.path, cacheFolder: t.folder)
        try fresh.continueChangeSequences(sequences)
        #expect(try fresh.deltaCheckpoint(source: "posts") == nil)
        #expect(throws: StoreError.self) { try fresh.applyDelta(source: "posts", upserts: [upsert(1, 1)], removals: [], metadata: metadata(Self.time, nil)) }
    }

    /// The new file cannot be written (the disk is full): the old file, index and checkpoint stay, and no
    /// temporary file is left.
    @Test func aFailedWriteLeavesTheFileTheIndexAndTheCheckpoint() throws {
        let t = try stored(1500)
        let before = try bytes(t)
        let state = try t.store.state(of: "posts")
        t.store.rangeCopier = RangeCopier { _, _, _, _ in -Int(ENOSPC) }
        #expect { try apply(t, [upsert(700, 1)], removing: ["3"]) } throws: { error in
            guard case StoreError.cacheFileWrite(let path, let reason, let code) = error, code == ENOSPC else { return false }
            return path == t.folder.path(of: "posts") && reason.contains("No space left on device")
        }
        #expect(try bytes(t) == before)
        #expect(try storedBodies(t.store) == records(1500).map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("100"))
        let after = try t.store.state(of: "posts")
        #expect((after.savedAt, after.lastSuccess, after.changeSeq, after.snapshotFingerprint) == (state.savedAt, state.lastSuccess, state.changeSeq, state.snapshotFingerprint))
        #expect(t.leftovers().isEmpty)
    }

    /// The new file's flush to disk runs while the commit prepares the index (`DiskFlush`); one that fails is
    /// waited for before anything is committed: the listing and the delta fail with the path and the reason,
    /// and the store and the file stay as they were, with no temporary file left.
    @Test func aFlushThatFailsCommitsNothing() throws {
        let t = try stored(1500)
        let before = try bytes(t)
        let state = try t.store.state(of: "posts")
        t.store.fileSyncer = FileSyncer { _ in
            errno = EIO
            return -1
        }
        let failedWithEIO: (any Error) -> Bool = { error in
            guard case StoreError.cacheFileWrite(let path, let reason, let code) = error, code == EIO else { return false }
            return path == t.folder.path(of: "posts") && reason.hasPrefix("flush ") && reason.hasSuffix(" to disk: Input/output error")
        }
        #expect(performing: { try apply(t, [upsert(700, 1)], removing: ["3"]) }, throws: failedWithEIO)
        #expect(performing: { try store(records(1600), into: t.store, time: StateStoreDeltaTests.time) }, throws: failedWithEIO)
        #expect(try bytes(t) == before)
        #expect(try storedBodies(t.store) == records(1500).map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("100"))
        let after = try t.store.state(of: "posts")
        #expect((after.savedAt, after.lastSuccess, after.changeSeq, after.snapshotFingerprint, after.recordCount)
                == (state.savedAt, state.lastSuccess, state.changeSeq, state.snapshotFingerprint, state.recordCount))
        #expect(t.leftovers().isEmpty)
        // The disk works again: the next listing commits.
        t.store.fileSyncer = .kernel
        try store(records(1600), into: t.store, time: StateStoreDeltaTests.time)
        #expect(try t.store.state(of: "posts").recordCount == 1600)
    }

    /// A crash after the delta's transaction, before the rename: readers follow the temporary file, and the next
    /// start's `settlePendingRename` puts it in place; file, index and checkpoint agree.
    @Test func aCrashBeforeTheRenameIsFinishedWithTheNewCheckpoint() throws {
        let t = try stored(1500)
        let path = t.folder.path(of: "posts")
        let old = t.directory + "/old.json"
        try FileManager.default.copyItem(atPath: path, toPath: old)
        try apply(t, [upsert(700, 1)], removing: ["3"])
        let new = try bytes(t)
        // The state the crash leaves: the store committed and names the temporary file; the old file is in place.
        let temporary = ".posts.json.tmp-1-2"
        try FileManager.default.moveItem(atPath: path, toPath: t.folder.directory + "/" + temporary)
        try FileManager.default.moveItem(atPath: old, toPath: path)
        try t.store.run("UPDATE sources SET pending_rename = '\(temporary)' WHERE name = ?1", "posts")
        let expected = applied(records(1500), [upsert(700, 1)], removing: ["3"]).map { String(decoding: $0.1, as: UTF8.self) }
        #expect(try storedBodies(t.store) == expected)

        let reopened = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(try reopened.settlePendingRename(source: "posts") == .finished)
        #expect(try bytes(t) == new)
        #expect(try reopened.deltaCheckpoint(source: "posts") == checkpoint("200", deltaAt: Self.time))
        #expect(try storedBodies(reopened) == expected)
        // The next delta copies from it.
        try reopened.applyDelta(source: "posts", upserts: [upsert(701, 1)], removals: [],
                                metadata: metadata("2026-12-02T10:00:00Z", checkpoint("300")))
        #expect(try found(t, "701") == "{\"id\":701,\"v\":1}")
    }

    // MARK: Contract

    @Test func aDeltaBreakingItsContractOrWithoutAListingChangesNothing() throws {
        let t = try stored(1500)
        let (before, state) = (try bytes(t), try t.store.state(of: "posts"))
        func refused(_ upserts: [DeltaRecord], _ removals: [String], _ message: String) {
            #expect { try apply(t, upserts, removing: removals) } throws: { "\($0)" == message }
        }
        refused([upsert(7, 1), upsert(8, 1), upsert(7, 2)], [], "record 2 repeats ID \"7\"")
        refused([upsert(7, 1)], ["9", "7"], "record 2 repeats ID \"7\"")
        #expect(try bytes(t) == before)
        #expect(try t.store.state(of: "posts") == state)
        #expect(try t.store.deltaCheckpoint(source: "posts") == checkpoint("100"))
        #expect(t.leftovers().isEmpty)

        try t.store.forgetListing(source: "posts")
        #expect { try apply(t, [upsert(7, 1)]) } throws: { error in
            "\(error)" == "the cache file \(t.folder.path(of: "posts")) does not match the store (the store holds no listing of posts to "
                + "apply a delta to); the next refresh fetches the whole listing again"
        }
        #expect(try t.store.deltaCheckpoint(source: "posts") == nil)
        #expect(try bytes(t) == before, "the file stays until a listing replaces it")
    }

    // MARK: Stores written before

    /// A store written before the checkpoints existed (the previous release's, schema 2) gains the table when
    /// opened, keeps every row, and takes a delta; a read-only open of a file without it answers none.
    @Test func aStoreWrittenBeforeTheCheckpointsGainsTheTable() throws {
        let files = try StateStoreOutboxStateMigrationTests.VersionTwoFiles()
        let old = try Database(path: files.path, readOnly: true)
        #expect(try old.strings("SELECT name FROM sqlite_master WHERE name = 'delta_checkpoints'") == [])
        old.close()
        let store = try StateStore(path: files.path, cacheFolder: files.folder)
        #expect(try store.database.strings("SELECT name FROM sqlite_master WHERE name = 'delta_checkpoints'") == ["delta_checkpoints"])
        #expect(try store.deltaCheckpoint(source: "posts") == nil)
        let count = try store.state(of: "posts").recordCount
        let outcome = try store.applyDelta(source: "posts", upserts: [DeltaRecord(id: "new", idIsInteger: false, version: nil, body: Array(#"{"id":"new"}"#.utf8))],
                                           removals: [], metadata: metadata(Self.time, checkpoint("1")))
        #expect(outcome.count == count + 1)
        #expect(try store.deltaCheckpoint(source: "posts") == checkpoint("1"))

        let t = try TemporaryStore()
        try t.store.database.execute("DROP TABLE delta_checkpoints")
        let reader = try StateStore(readingFrom: t.path, cacheFolder: t.folder)
        #expect(try reader.deltaCheckpoint(source: "posts") == nil)
        _ = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(try t.store.database.strings("SELECT name FROM sqlite_master WHERE name = 'delta_checkpoints'") == ["delta_checkpoints"])
    }
}
