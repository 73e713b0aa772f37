import Foundation
import SyncStore
import Testing
@testable import SyncEngine

/// Listings over several pages, in each `Pagination=` mode: every page is fetched, the cache file holds the
/// whole listing, and a listing cut short or looping fails while the previous file stays byte for byte.
@Suite("Engine: pagination")
struct PaginationTests {
    /// A server of 7 records paged as `paging`, and the source's settings for it.
    static let modes: [(FakeCollection.Paging, String, Int)] = [
        (.link(3), "Pagination=link", 3),
        (.body(3), "Pagination=body\nRecordsPath=/results\nNextPath=/next", 3),
        (.cursor(3), "Pagination=cursor\nRecordsPath=/results\nCursorPath=/cursor\nCursorParameter=cursor", 3),
        (.page(3), "Pagination=page\nPageParameter=page", 3),
        (.offset(3), "Pagination=offset\nOffsetParameter=offset", 3),
        (.header(3), "Pagination=header", 3),
    ]

    func rig(_ paging: FakeCollection.Paging, _ settings: String, records: Int = 7) throws -> EngineRig {
        let server = FakeCollection()
        server.paging = paging
        for index in 1...records { server.seed("r\(index)", [("n", .integer(Int64(index)))]) }
        return try EngineRig(settings, server: server)
    }

    @Test(arguments: 0..<6)
    func everyModeFetchesEveryPage(_ index: Int) throws {
        let (paging, settings, requests) = Self.modes[index]
        let rig = try rig(paging, settings)
        #expect(rig.refresh().isSuccess)
        #expect(try rig.cachedRecords().keys.sorted() == (1...7).map { "r\($0)" }.sorted())
        #expect(rig.transport.requests.count == requests, "\(rig.transport.log)")
    }

    @Test(arguments: 0..<6)
    func aListingOnOnePageEndsAtItsFirstShortOrEmptyPage(_ index: Int) throws {
        let (paging, settings, _) = Self.modes[index]
        let rig = try rig(paging, settings, records: 2)
        #expect(rig.refresh().isSuccess)
        #expect(try rig.cachedRecords().count == 2)
        // Numbered pages learn the page size from the first page: an empty second page ends them.
        let numbered = paging == .page(3) || paging == .offset(3)
        #expect(rig.transport.requests.count == (numbered ? 2 : 1), "\(rig.transport.log)")
    }

    @Test func aNextPageHeaderUnderPaginationNoneFailsAndKeepsThePreviousFile() throws {
        let rig = try rig(.none, "Pagination=none", records: 2)
        rig.refresh()
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.server.paging = .header(1)
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("Next-Page header but Pagination=none: only the first page was received; set Pagination=header"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
    }

    @Test func aPageLinkingBackFailsAsALoop() throws {
        let rig = try rig(.none, "Pagination=link", records: 2)
        rig.transport.then("GET", rig.server.url, .json(#"[{"id": "r1"}]"#, headers: [("Link", "<http://api.test/posts/?page=2>; rel=\"next\"")]))
        rig.transport.then("GET", "http://api.test/posts/?page=2",
                           .json(#"[{"id": "r2"}]"#, headers: [("Link", "<http://api.test/posts/>; rel=\"next\"")]))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message == "page 3 links back to http://api.test/posts/, which was already fetched; the listing never ends")
        #expect(!FileManager.default.fileExists(atPath: rig.directory + "/cache/posts.json"))
    }

    @Test func moreThanMaxPagesFails() throws {
        let rig = try rig(.link(2), "Pagination=link\nMaxPages=3", records: 7)
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("MaxPages=3"), "\(failure.message)")
        #expect(rig.transport.requests.count == 3)
    }

    @Test func aRecordOnTwoPagesFailsTheListing() throws {
        let rig = try rig(.none, "Pagination=link", records: 2)
        rig.transport.then("GET", rig.server.url, .json(#"[{"id": "r1"}]"#, headers: [("Link", "<http://api.test/posts/?page=2>; rel=\"next\"")]))
        rig.transport.then("GET", "http://api.test/posts/?page=2", .json(#"[{"id": "r1"}]"#))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message == "record 1 repeats ID \"r1\" (2 pages): the collection most likely changed on the server "
                + "while it was being paged; retrying")
        #expect(failure.kind == .transient)
    }

    @Test func aTotalLargerThanTheRecordsReceivedFails() throws {
        let rig = try rig(.none, "Pagination=page\nPageParameter=page\nRecordsPath=/results\nTotalPath=/count", records: 1)
        rig.transport.then("GET", rig.server.url, .json(#"{"count": 5, "results": [{"id": "r1"}, {"id": "r2"}]}"#))
        rig.transport.then("GET", "http://api.test/posts/?page=2", .json(#"{"count": 5, "results": []}"#))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("5"), "\(failure.message)")
        #expect(!FileManager.default.fileExists(atPath: rig.directory + "/cache/posts.json"))
    }

    @Test func aNextPageOutsideTheAllowedOriginsIsNotRequested() throws {
        let rig = try rig(.none, "Pagination=link", records: 1)
        rig.transport.then("GET", rig.server.url, .json(#"[{"id": "r1"}]"#, headers: [("Link", "<http://evil.test/steal>; rel=\"next\"")]))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.hasPrefix("page 2: refusing to request"), "\(failure.message)")
        #expect(!rig.transport.log.contains { $0.contains("evil.test") })
    }

    @Test func aPageTheServerFailsKeepsThePreviousFile() throws {
        let rig = try rig(.link(3), "Pagination=link")
        rig.refresh()
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.server.edit("r1", "n", 100)
        rig.transport.then("GET", "http://api.test/posts/?page=3", .status(500))
        #expect(rig.refreshFailure()?.kind == .transient)
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
    }

    @Test func anUnchangedListingIsAskedForConditionallyAndA304KeepsTheFile() throws {
        let rig = try rig(.none, "Pagination=none", records: 2)
        rig.transport.then("GET", rig.server.url, .json(#"[{"id": "r1"}, {"id": "r2"}]"#, headers: [("ETag", "\"list-1\"")]))
        #expect(rig.refresh().isSuccess)
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
        rig.transport.then("GET", rig.server.url, .status(304))
        guard case .unchanged(let count) = rig.refresh() else {
            Issue.record("a 304 did not leave the listing unchanged")
            return
        }
        #expect(count == 2)
        let conditional = try #require(rig.transport.requests.last)
        #expect(conditional.headers.contains { $0.name == "If-None-Match" && $0.value == "\"list-1\"" })
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json")) == before)
    }

    @Test func aPagedListingIsNeverAskedForConditionally() throws {
        let rig = try rig(.link(3), "Pagination=link")
        rig.refresh()
        rig.refresh()
        #expect(rig.transport.requests.allSatisfy { request in !request.headers.contains { $0.name == "If-None-Match" } })
    }

    @Test func aRelativeNextLinkIsResolvedAgainstThePageThatAnsweredIt() throws {
        let rig = try rig(.none, "Pagination=link\nAllowedOrigins=http://mirror.test", records: 1)
        var moved = ScriptedAnswer.json(#"[{"id": "r1"}]"#, headers: [("Link", "<page2>; rel=\"next\"")])
        moved.redirects = ["http://mirror.test/v2/posts"]
        rig.transport.then("GET", rig.server.url, moved)
        rig.transport.then("GET", "http://mirror.test/v2/page2", .json(#"[{"id": "r2"}]"#))
        #expect(rig.refresh().isSuccess)
        #expect(rig.transport.log == ["GET http://api.test/posts/", "GET http://mirror.test/v2/page2"])
        #expect(try rig.cachedRecords().keys.sorted() == ["r1", "r2"])
    }
}
