import Foundation
import Synchronization
import SyncStore
import Testing
@testable import SyncEngine

/// Incremental pull (syncd.conf(5), "Incremental pull") against a `FakeCollection` with a change feed: the first
/// refresh lists the whole collection and takes the checkpoint from it, later ones ask for changes only and apply
/// them (changes replace, new records add, tombstones remove, the rest stays), and every reason for a full listing
/// leads to exactly one.
@Suite("Engine: incremental pull")
struct DeltaTests {
    static let watermark = "Delta=watermark\nDeltaField=/modified\nDeltaQuery=since={checkpoint}\nDeletedPath=/deleted"
    static let token = "Delta=token\nRecordsPath=/results\nPagination=header\nDeltaTokenPath=/token\nDeltaQuery=syncToken={checkpoint}\nDeletedPath=/deleted"

    /// A server of `records` records with a change feed, the source set up with `settings`, synced once.
    func synced(_ settings: String = DeltaTests.watermark, records: Int = 5, tokens: Bool = false,
                paging: FakeCollection.Paging = .none) throws -> EngineRig {
        let server = FakeCollection()
        server.deltas = true
        server.tokens = tokens
        server.paging = paging
        for index in 1...records { server.seed("r\(index)", [("n", .integer(Int64(index)))]) }
        let rig = try EngineRig(settings, server: server)
        #expect(rig.refresh().isSuccess)
        return rig
    }

    /// The cache file's records equal the server's, ID for ID and member for member.
    func expectCacheEqualsServer(_ rig: EngineRig, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let server = Dictionary(uniqueKeysWithValues: rig.server.recordsByID)
        #expect(try rig.cachedRecords() == server, sourceLocation: sourceLocation)
    }

    func inode(_ rig: EngineRig) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: rig.directory + "/cache/posts.json")[.systemFileNumber] as? UInt64)
    }

    @Test func theFirstRefreshListsWholeAndLaterOnesAskForChangesOnly() throws {
        let rig = try synced()
        #expect(rig.requests() == ["GET http://api.test/posts/"])
        rig.server.edit("r2", "n", .integer(20))
        rig.server.seed("r9", [("n", .integer(9))])
        rig.server.remove("r4")
        #expect(rig.refresh().isSuccess)
        // The checkpoint is the highest stamp of the listing: 5 seeds.
        #expect(rig.requests() == ["GET http://api.test/posts/?since=5"])
        try expectCacheEqualsServer(rig)
        // Added records come after the others; the rest keep the listing's order.
        let order = try #require(rig.cacheFile()["records"]?.arrayValue).compactMap { $0.objectValue?["id"]?.stringValue }
        #expect(order == ["r1", "r2", "r3", "r5", "r9"])
        // The next delta starts from the delta's highest stamp.
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=8"])
    }

    /// Records changed and removed on the server while a full listing is paged, after the page that held them was
    /// read, with a record read later changed after them: the listing's own highest stamp would skip them; the
    /// checkpoint (its first page's highest stamp) does not, and the delta that catches them up follows at once.
    @Test func changesMadeWhileAFullListingIsPagedComeWithTheNextDelta() throws {
        let server = FakeCollection()
        server.deltas = true
        server.paging = .header(2)
        for index in 1...6 { server.seed("r\(index)", [("n", .integer(Int64(index)))]) }
        server.beforeAnswer = { [unowned server] request in
            guard request.url.hasSuffix("?page=2") else { return }
            server.edit("r1", "n", .string("changed after page 1"))
            server.remove("r2")
            server.edit("r5", "n", .string("changed later, read on page 3"))
        }
        let rig = try EngineRig(DeltaTests.watermark + "\nPagination=header", server: server)
        #expect(rig.refresh().isSuccess)
        server.beforeAnswer = nil
        // The listing's three pages, then at once the delta from its first page's highest stamp (paged too).
        let requests = rig.requests()
        #expect(requests.count == 6 && requests[3] == "GET http://api.test/posts/?since=2", "\(requests)")
        try expectCacheEqualsServer(rig)
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=9"])
    }

    /// A listing of one page is one answer: nothing to catch up; one of several pages is followed by a delta.
    @Test func aListingOfOnePageIsNotCaughtUpOneOfSeveralIs() throws {
        #expect(try synced(records: 5).requests() == ["GET http://api.test/posts/"])
        #expect(try synced(DeltaTests.watermark + "\nPagination=header", records: 3, paging: .header(2)).requests()
                == ["GET http://api.test/posts/", "GET http://api.test/posts/?page=2", "GET http://api.test/posts/?since=2"])
    }

    /// The delta right after a listing of several pages fails: the listing stays saved, and the failure says which request it was.
    /// The paged listing is published before the delta that catches it up: the daemon is told its state then.
    @Test func aPagedListingIsReportedBeforeItsCatchUpDelta() throws {
        let server = FakeCollection()
        server.deltas = true
        server.paging = .header(2)
        for index in 1...3 { server.seed("r\(index)", [("n", .integer(Int64(index)))]) }
        let told = Mutex<[(records: Int, requests: Int)]>([])
        let transport = Mutex<ScriptedTransport?>(nil)
        let shared = EngineShared(outboxObserver: nil, publishObserver: { _, stamped in
            let requests = transport.withLock { $0?.requests.count ?? 0 }
            told.withLock { $0.append((stamped.state.cachedRecordCount, requests)) }
        })
        let rig = try EngineRig(DeltaTests.watermark + "\nPagination=header", server: server, shared: shared)
        transport.withLock { $0 = rig.transport }
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/", "GET http://api.test/posts/?page=2", "GET http://api.test/posts/?since=2"])
        let reports = told.withLock { $0 }
        #expect(reports.count == 1 && reports.first?.records == 3 && reports.first?.requests == 2)
        // A delta is not caught up, and says nothing before it ends.
        rig.server.edit("r1", "n", .integer(100))
        #expect(rig.refresh().isSuccess)
        #expect(told.withLock { $0.count } == 1)
    }

    @Test func aFailedCatchUpSaysTheListingWasSavedAndWhichRequestFailed() throws {
        let server = FakeCollection()
        server.deltas = true
        server.paging = .header(2)
        for index in 1...3 { server.seed("r\(index)") }
        let rig = try EngineRig(DeltaTests.watermark + "\nPagination=header", server: server)
        rig.transport.then("GET", "http://api.test/posts/?since=2", .json(#"{"detail": "bad parameter"}"#, status: 400))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.hasPrefix("HTTP 400 from http://api.test/posts/?since=2"), "\(failure.message)")
        #expect(failure.message.hasSuffix("(the whole listing was saved; this was the delta asked for right after it, for the changes "
                                          + "made while it was paged: check DeltaQuery=, which 'syncd --probe posts' tries)"), "\(failure.message)")
        try expectCacheEqualsServer(rig)
    }

    /// `syncctl refresh --full`: the next refresh lists whole, once, and says why; the one after asks for changes again.
    @Test func aFullListingAskedForIsFetchedOnceInsteadOfADelta() throws {
        let rig = try synced()
        _ = rig.requests()
        rig.engine.shared.askFullListing(of: ["posts", "other"])
        rig.server.edit("r3", "n", .integer(30))
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/"])
        try expectCacheEqualsServer(rig)
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=6"])
        #expect(DeltaPlan.FullListingReason.asked.text == "asked for (syncctl refresh --full)")
    }

    @Test func aDeltaWithNothingChangedLeavesTheFileInPlace() throws {
        let rig = try synced()
        let before = try inode(rig)
        let result = rig.refresh()
        guard case .unchanged(let count) = result else {
            Issue.record("expected unchanged, got \(result)")
            return
        }
        #expect(count == 5)
        #expect(try inode(rig) == before)
        try expectCacheEqualsServer(rig)
    }

    @Test func aCheckpointTheServerForgotLeadsToExactlyOneFullListing() throws {
        let rig = try synced()
        _ = rig.requests()
        rig.server.edit("r1", "n", .integer(10))
        rig.server.forgottenBefore = 6
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=5", "GET http://api.test/posts/"])
        try expectCacheEqualsServer(rig)
        // The full listing's checkpoint is accepted: the next refresh is a delta again.
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=6"])
    }

    @Test func aRecordWithoutItsStampFailsTheDeltaNamingItAndChangesNothing() throws {
        let rig = try synced()
        _ = rig.requests()
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.transport.then("GET", "http://api.test/posts/?since=5", .json(#"[{"id": "r1", "modified": 6}, {"id": "r2", "n": 3}]"#))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message == "response rejected: the delta's record 1 (counted from 0; ID \"r2\") has no change stamp at "
                + "DeltaField=/modified; Delta=watermark needs a number or a string in every record there: give the record a stamp on the "
                + "server, point DeltaField= at the records' change stamp, or set Delta=none")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
        // The checkpoint did not move: the next refresh asks from the same place.
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=5"])
    }

    @Test func changedSettingsAndTheResyncIntervalEachBringOneFullListing() throws {
        let rig = try synced(DeltaTests.watermark + "\nFullResyncIntervalSec=1h")
        _ = rig.requests()
        rig.clock.advance(seconds: 3_600)
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/"])
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?since=5"])
        // Without tombstones, a removal is seen only by the full listing.
        try rig.configure(DeltaTests.watermark.replacingOccurrences(of: "since=", with: "after=") + "\nFullResyncIntervalSec=1h")
        rig.server.remove("r3")
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/"])
        try expectCacheEqualsServer(rig)
    }

    @Test func tokenModeTakesTheLastPagesTokenAndPagesThroughAChangeSet() throws {
        let rig = try synced(DeltaTests.token, records: 5, tokens: true, paging: .header(2))
        #expect(rig.requests() == ["GET http://api.test/posts/", "GET http://api.test/posts/?page=2", "GET http://api.test/posts/?page=3"])
        for index in 1...3 { rig.server.edit("r\(index)", "n", .integer(Int64(index * 100))) }
        rig.server.remove("r5")
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?syncToken=5", "GET http://api.test/posts/?syncToken=5&page=2"])
        try expectCacheEqualsServer(rig)
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/?syncToken=9"])
    }

    @Test func aLocalEditStaysInTheFileWhileADeltaBringsTheServersNewerCopy() throws {
        let rig = try synced(DeltaTests.watermark + "\nWritable=yes\nVersionField=version")
        // Queued while the server cannot be reached: the push fails, the delta is not asked for.
        rig.transport.then("PUT", "http://api.test/posts/r1/", .status(503))
        rig.transport.then("GET", "http://api.test/posts/r1/", .status(503))
        try rig.put("r1", [("n", .string("mine"))])
        rig.server.edit("r2", "n", .integer(22))
        _ = rig.refresh()
        #expect(try rig.cachedRecords()["r1"]?["n"] == .string("mine"))
        #expect(try rig.outbox().count == 1)
    }

    @Test func aRecordTwiceInOneDeltaCountsAsItsLastWordAndATombstoneOfAnUnknownRecordIsIgnored() throws {
        let rig = try synced()
        _ = rig.requests()
        rig.transport.then("GET", "http://api.test/posts/?since=5", .json("""
            [{"id": "r1", "n": "first", "modified": 6}, {"id": "zz", "modified": 7, "deleted": true},
             {"id": "r1", "n": "second", "modified": 8}, {"id": "r2", "modified": 9, "deleted": true},
             {"id": "r2", "n": "back", "modified": 10}]
            """))
        #expect(rig.refresh().isSuccess)
        let cached = try rig.cachedRecords()
        #expect(cached["r1"]?["n"] == .string("second"))
        #expect(cached["r2"]?["n"] == .string("back"))
        #expect(cached["zz"] == nil)
        #expect(cached.count == 5)
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().last == "GET http://api.test/posts/?since=10")
    }

    @Test func aDeltaLargerThanMaxBytesFailsAndKeepsTheFile() throws {
        let rig = try synced(DeltaTests.watermark + "\nMaxBytes=2K")
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.transport.then("GET", "http://api.test/posts/?since=5",
                           .json("[" + (1...40).map { #"{"id": "x\#($0)", "pad": "0123456789012345678901234567890123456789", "modified": \#($0 + 5)}"# }.joined(separator: ",") + "]"))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("MaxBytes=2048"), "\(failure.message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
    }
}

extension DeltaTests {
    @Test func localChangesArePushedBeforeTheDeltaWhichThenShowsThemTaken() throws {
        let rig = try synced(DeltaTests.watermark + "\nWritable=yes\nVersionField=version")
        _ = rig.requests()
        try rig.put("r1", [("n", .string("mine"))])
        #expect(rig.refresh().isSuccess)
        let requests = rig.requests()
        #expect(requests.last == "GET http://api.test/posts/?since=5", "\(requests)")
        #expect(requests.contains("PUT http://api.test/posts/r1/"), "\(requests)")
        #expect(rig.server.record("r1")?["n"] == .string("mine"))
        #expect(try rig.outbox().isEmpty)
        try expectCacheEqualsServer(rig)
    }

    @Test func aServerEditOfARecordWithALocalChangeIsSettledByTheConflictPolicyBeforeTheDelta() throws {
        let rig = try synced(DeltaTests.watermark + "\nWritable=yes\nVersionField=version\nConflictPolicy=server-wins")
        rig.transport.then("PUT", "http://api.test/posts/r1/", .status(503))
        rig.transport.then("GET", "http://api.test/posts/r1/", .status(503))
        try rig.put("r1", [("n", .string("mine"))])
        _ = rig.refresh()
        rig.server.edit("r1", "n", .string("theirs"))
        #expect(rig.refresh().isSuccess)
        // Server wins: the local change is discarded (restorable), the delta's copy is shown.
        #expect(try rig.outbox().isEmpty)
        #expect(try rig.cachedRecords()["r1"]?["n"] == .string("theirs"))
        #expect(try rig.engine.store.discarded(source: "posts").count == 1)
        try expectCacheEqualsServer(rig)
    }

    /// A delta's pages pass the listing's guards: a next page on another origin, one already fetched, more than MaxPages=.
    @Test(arguments: [
        ("http://elsewhere.test/posts/?since=5&page=2", "", "page 2: refusing to request"),
        ("http://api.test/posts/?since=5", "", "page 2 links back to http://api.test/posts/?since=5"),
        ("http://api.test/posts/?since=5&page=2", "\nMaxPages=1", "the listing has more than MaxPages=1 pages"),
    ])
    func aDeltaPageTheGuardsRefuseFailsTheRefreshAndKeepsTheFile(next: String, settings: String, message: String) throws {
        let rig = try synced(DeltaTests.watermark + "\nPagination=header" + settings)
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.transport.then("GET", "http://api.test/posts/?since=5", .json(#"[{"id": "r1", "modified": 9}]"#, headers: [("Next-Page", next)]))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains(message), "\(failure.message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
    }
}

extension FakeCollection {
    /// The server's records by ID.
    var recordsByID: [(String, JSONObject)] { records.map { ($0.id, $0.body) } }
}
