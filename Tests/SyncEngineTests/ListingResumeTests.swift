import Foundation
import Synchronization
import SyncStore
import Testing
@testable import SyncEngine

/// Resuming an interrupted full listing (syncd.conf(5), "RESUMING A FIRST SYNC") against a `FakeCollection`: a
/// listing whose page fails keeps the pages before it staged; the next refresh replays them and asks only for the
/// rest, at the server's next page (`Pagination=header`/`cursor`) or from the watermark (`Delta=watermark` over pages
/// in ascending stamp order). Where resuming is unsafe, or the settings changed, the listing starts over.
@Suite("Engine: resuming an interrupted listing")
struct ListingResumeTests {
    static let watermark = "Delta=watermark\nDeltaField=/modified\nDeltaQuery=since={checkpoint}\nDeletedPath=/deleted"

    /// A server of `records` records (stamped 1…`records` in listing order), the rig set up with `settings`.
    /// Pages are staged from the first (`StagePagesAfterSec=0`) unless `settings` says otherwise: answers take no time
    /// on the test's clock.
    func rig(_ settings: String, records: Int = 10, paging: FakeCollection.Paging, shared: EngineShared = EngineShared()) throws -> EngineRig {
        let server = FakeCollection()
        server.deltas = true
        server.paging = paging
        for index in 1...records { server.seed("r\(index)", [("n", .integer(Int64(index)))]) }
        return try EngineRig((settings.contains("StagePagesAfterSec=") ? "" : "StagePagesAfterSec=0\n") + settings, server: server,
                             shared: shared)
    }

    func expectCacheEqualsServer(_ rig: EngineRig, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        #expect(try rig.cachedRecords() == Dictionary(uniqueKeysWithValues: rig.server.recordsByID), sourceLocation: sourceLocation)
    }

    func staged(_ rig: EngineRig) throws -> ListingResumePoint? { try rig.engine.store.listingResumePoint(source: "posts") }

    func cacheFileExists(_ rig: EngineRig) -> Bool { FileManager.default.fileExists(atPath: rig.directory + "/cache/posts.json") }

    @Test func aFirstSyncByNextPageHeaderResumesAtTheStagedPage() throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure()?.message.hasPrefix("page 3: HTTP 503") == true)
        // Nothing is published: apps never see part of a collection.
        #expect(!cacheFileExists(rig))
        let point = try #require(try staged(rig))
        #expect(point.method == "next-page" && point.next == "http://api.test/posts/?page=3")
        #expect(point.keep == 4 && point.pages == 2 && point.records == 4)
        #expect(try rig.engine.store.state(of: "posts").listingResume == point)
        // Meanwhile a staged record changes on the server: the resumed listing cannot see it.
        rig.server.edit("r1", "n", .string("changed while interrupted"))
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        // Pages 1 and 2 are not asked for again; without a delta to catch up, the listing is fetched again at once,
        // whole, for what changed while it was interrupted (over a held copy, unstaged).
        let pages = (1...5).map { "GET http://api.test/posts/" + ($0 == 1 ? "" : "?page=\($0)") }
        #expect(rig.requests() == Array(pages[2...]) + pages)
        try expectCacheEqualsServer(rig)
        let order = try #require(rig.cacheFile()["records"]?.arrayValue).compactMap { $0.objectValue?["id"]?.stringValue }
        #expect(order == (1...10).map { "r\($0)" })
        // The whole listing ends the staging.
        #expect(try staged(rig) == nil)
    }

    /// The resumed listing is published before the listing again: the daemon is told its state then (records,
    /// no staged listing), and not only when the second listing ends, so the status describes the file apps read.
    @Test func theResumedListingIsReportedBeforeItIsListedAgain() throws {
        let told = Mutex<[(state: SourceState, requests: Int)]>([])
        let transport = Mutex<ScriptedTransport?>(nil)
        let shared = EngineShared(outboxObserver: nil, publishObserver: { _, stamped in
            let requests = transport.withLock { $0?.requests.count ?? 0 }
            told.withLock { $0.append((stamped.state, requests)) }
        })
        let rig = try rig("Pagination=header", paging: .header(2), shared: shared)
        transport.withLock { $0 = rig.transport }
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        _ = rig.refreshFailure()
        let before = rig.transport.requests.count
        #expect(told.withLock { $0.isEmpty })
        #expect(rig.refresh().isSuccess)
        let reports = told.withLock { $0 }
        try #require(reports.count == 1)
        // Told after pages 3 to 5 and before the second listing's five requests.
        #expect(reports[0].requests == before + 3)
        #expect(reports[0].state.cachedRecordCount == 10 && reports[0].state.listingResume == nil && reports[0].state.savedAt != nil)
        #expect(rig.transport.requests.count == before + 8)
    }

    /// A listing cut short before `StagePagesAfterSec=` (1 s by default) passed staged nothing: the next one starts over.
    @Test func aListingCutShortWithinItsFirstSecondStagesNothing() throws {
        let rig = try rig("Pagination=header\nStagePagesAfterSec=1s", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure()?.message.hasPrefix("page 3: HTTP 503") == true)
        #expect(try staged(rig) == nil)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/")
        try expectCacheEqualsServer(rig)
    }

    /// Pages that take 400 ms each (on the test's clock): pages 1 and 2 are held, and staged with page 3, the first to
    /// end after StagePagesAfterSec= (1 s); page 4 fails, and the next refresh resumes there.
    @Test func thePagesHeldBeforeStagePagesAfterSecAreStagedWithTheFirstPageAfterIt() throws {
        let rig = try rig("Pagination=header\nStagePagesAfterSec=1s", paging: .header(2))
        let server = rig.transport.server
        rig.transport.server = { request in
            var answer = server(request)
            answer.delay = .milliseconds(400)
            return answer
        }
        rig.transport.then("GET", "http://api.test/posts/?page=4", .status(503))
        #expect(rig.refreshFailure()?.message.hasPrefix("page 4: HTTP 503") == true)
        let point = try #require(try staged(rig))
        #expect(point.keep == 6 && point.pages == 3 && point.records == 6 && point.next == "http://api.test/posts/?page=4")
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/?page=4")
        try expectCacheEqualsServer(rig)
    }

    /// The server refuses where the listing stopped (a cursor it forgot): the staged pages go and the same refresh
    /// starts the listing over, rather than leave a source without a copy until the next trigger.
    @Test func aRefusedResumeStartsTheListingOverInTheSameRefresh() throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503), .json(#"{"detail": "invalid page token"}"#, status: 400))
        #expect(rig.refreshFailure()?.message.hasPrefix("page 3: HTTP 503") == true)
        #expect(try staged(rig) != nil)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        let pages = (1...5).map { "GET http://api.test/posts/" + ($0 == 1 ? "" : "?page=\($0)") }
        #expect(rig.requests() == ["GET http://api.test/posts/?page=3"] + pages)
        #expect(try staged(rig) == nil)
        try expectCacheEqualsServer(rig)
    }

    /// The listing started over after a refused resume fails too: that failure is the refresh's, and nothing is staged
    /// of the old listing.
    @Test func aStartOverThatFailsToo() throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503), .json(#"{"detail": "invalid page token"}"#, status: 400))
        #expect(rig.refreshFailure() != nil)
        rig.transport.then("GET", "http://api.test/posts/?page=2", .status(503))
        _ = rig.requests()
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.hasPrefix("page 2: HTTP 503"), "\(failure.message)")
        #expect(rig.requests() == ["GET http://api.test/posts/?page=3", "GET http://api.test/posts/", "GET http://api.test/posts/?page=2"])
        let point = try #require(try staged(rig))
        #expect(point.keep == 2 && point.pages == 1, "the new listing's first page, staged")
    }

    /// Credentials refused, a missing resource or a rate limit at the resume say nothing about the position: the
    /// staged pages stay.
    @Test(arguments: [401, 403, 404, 429])
    func answersThatSayNothingOfThePositionKeepTheStagedPages(status: Int) throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503), .status(status))
        #expect(rig.refreshFailure() != nil)
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("HTTP \(status)") && !failure.message.contains("starts it over"), "\(failure.message)")
        #expect(try staged(rig)?.keep == 4)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/?page=3")
    }

    /// A full listing asked for (`syncctl refresh --full`) and cut short is finished by the next refresh, not left
    /// staged while deltas go on from the older checkpoint.
    @Test func aFullListingAskedForAndCutShortResumesBeforeAnyDelta() throws {
        let rig = try rig(ListingResumeTests.watermark + "\nPagination=header", paging: .header(2))
        #expect(rig.refresh().isSuccess)
        rig.engine.shared.askFullListing(of: ["posts"])
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig)?.keep == 4)
        rig.server.edit("r9", "n", .integer(90))
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        let requests = rig.requests()
        #expect(requests.first == "GET http://api.test/posts/?page=3", "\(requests)")
        #expect(try staged(rig) == nil)
        try expectCacheEqualsServer(rig)
        #expect(DeltaPlan.FullListingReason.resuming.text == "a full listing was cut short: it resumes")
    }

    @Test func aCursorListingResumesTwiceAndCountsItsPagesAcrossTheResumes() throws {
        let rig = try rig("Pagination=cursor\nRecordsPath=/results\nCursorPath=/cursor\nMaxPages=5", paging: .cursor(2))
        rig.transport.then("GET", "http://api.test/posts/?cursor=c4", .status(503))
        #expect(rig.refreshFailure() != nil)
        rig.transport.then("GET", "http://api.test/posts/?cursor=c6", .status(503))
        _ = rig.requests()
        #expect(rig.refreshFailure() != nil)
        #expect(rig.requests() == ["GET http://api.test/posts/?cursor=c4", "GET http://api.test/posts/?cursor=c6"])
        #expect(try staged(rig)?.keep == 6)
        #expect(rig.refresh().isSuccess)
        // The rest, then the listing again, whole (no delta catches up what changed while it was interrupted).
        let pages = ["GET http://api.test/posts/"] + (1...4).map { "GET http://api.test/posts/?cursor=c\($0 * 2)" }
        #expect(rig.requests() == Array(pages[3...]) + pages)
        try expectCacheEqualsServer(rig)
    }

    /// MaxPages= bounds the whole listing, its resumed pages counted with the staged ones.
    @Test func maxPagesCountsTheStagedPages() throws {
        let rig = try rig("Pagination=header\nMaxPages=4", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message == "the listing has more than MaxPages=4 pages; raise MaxPages= if that is right")
        #expect(!cacheFileExists(rig))
    }

    /// Ascending stamps over numbered links: the listing resumes with the delta request from the highest stamp below
    /// the last one staged; a staged record changed meanwhile is left out of the resumed pages and comes with the
    /// delta that follows the listing (from its first page's highest stamp).
    @Test func aWatermarkListingInAscendingOrderResumesFromTheStampBelowItsLast() throws {
        let rig = try rig(ListingResumeTests.watermark + "\nPagination=link", paging: .link(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        let point = try #require(try staged(rig))
        // Pages 1 and 2 held stamps 1–4: records to stamp 3 are kept, the listing resumes after stamp 3.
        #expect(point.method == "watermark" && point.next == "3" && point.keep == 3 && point.records == 4 && point.firstPageStamp == "2")
        rig.server.edit("r2", "n", .string("changed while interrupted"))
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        let requests = rig.requests()
        #expect(Array(requests.prefix(4)) == ["GET http://api.test/posts/?since=3", "GET http://api.test/posts/?since=3&page=2",
                                               "GET http://api.test/posts/?since=3&page=3", "GET http://api.test/posts/?since=3&page=4"], "\(requests)")
        // The catch-up delta from the first page's highest stamp.
        #expect(requests.dropFirst(4).first == "GET http://api.test/posts/?since=2", "\(requests)")
        try expectCacheEqualsServer(rig)
        #expect(try rig.cachedRecords()["r2"]?["n"] == .string("changed while interrupted"))
        #expect(try staged(rig) == nil)
    }

    /// A second interruption of a resumed watermark listing resumes right: the staged pages were cut to the
    /// records kept, so none is replayed twice and none is lost.
    @Test func aResumedWatermarkListingInterruptedAgainResumesRight() throws {
        let rig = try rig(ListingResumeTests.watermark + "\nPagination=link", records: 12, paging: .link(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        rig.transport.then("GET", "http://api.test/posts/?since=3&page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        // Stamps 4–7 came in the resumed pages: kept to 6, resuming after it.
        let point = try #require(try staged(rig))
        #expect(point.next == "6" && point.keep == 6)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/?since=6")
        try expectCacheEqualsServer(rig)
        #expect(try rig.cachedRecords().count == 12)
    }

    /// Stamps out of order: any resume point could skip records still to come, so nothing stays staged and the
    /// listing starts over, with a warning that says how to let it resume.
    @Test func aWatermarkListingOutOfOrderStartsOver() throws {
        let rig = try rig(ListingResumeTests.watermark + "\nPagination=link", paging: .link(2))
        rig.server.edit("r1", "n", .integer(100))
        rig.transport.then("GET", "http://api.test/posts/?page=4", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig) == nil)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/")
        try expectCacheEqualsServer(rig)
        let warnings = rig.engine.notices["posts"]?.map(\.text) ?? []
        #expect(warnings.contains { $0.contains("the listing's records are in no order of DeltaField=/modified, so an interrupted listing "
                                                + "starts over: sort the listing by it in URL=, oldest first, to let it resume") }, "\(warnings)")
    }

    /// Pages by number without `Delta=watermark` shift when records are added or removed: such a listing starts over.
    @Test func pagesByNumberWithoutAWatermarkStartOver() throws {
        let rig = try rig("Pagination=link", paging: .link(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig) == nil)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/")
    }

    /// Staged pages are bound to the settings that decide what they hold: other settings start the listing over.
    @Test func changedSettingsDropTheStagedPages() throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig) != nil)
        try rig.configure("Pagination=header\nIDField=n")
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/")
        #expect(try staged(rig) == nil)
    }

    /// A source listed whole at every refresh (no `Delta=`) stages only its first sync: later listings do not pay
    /// for staging, and one interrupted starts over while the held copy stays.
    @Test func aListingOverAHeldOneWithoutDeltaIsNotStaged() throws {
        let rig = try rig("Pagination=header", paging: .header(2))
        #expect(rig.refresh().isSuccess)
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig) == nil)
        try expectCacheEqualsServer(rig)
    }

    /// Under `Delta=`, a full listing over a held copy (after expiry, the resync interval, a changed setting) is
    /// staged too: it is rare and may be large.
    @Test func aFullListingUnderDeltaOverAHeldCopyResumes() throws {
        let rig = try rig(ListingResumeTests.watermark + "\nPagination=header\nFullResyncIntervalSec=1h", paging: .header(2))
        #expect(rig.refresh().isSuccess)
        rig.clock.advance(seconds: 3_600)
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(503))
        #expect(rig.refreshFailure() != nil)
        #expect(try staged(rig)?.keep == 4)
        // The held copy stays whole meanwhile.
        try expectCacheEqualsServer(rig)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests().first == "GET http://api.test/posts/?page=3")
        try expectCacheEqualsServer(rig)
    }
}
