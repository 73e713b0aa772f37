import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// The staged pages of an interrupted full listing (docs/architecture.md, "Resuming an interrupted listing"): each
/// page committed with its resume point in one transaction, read back in order, cut for a watermark resume, and gone
/// once a whole listing commits.
@Suite("StateStore staged listings")
struct StateStoreListingResumeTests {
    func point(next: String, keep: Int, pages: Int) -> ListingResumePoint {
        ListingResumePoint(binding: "resume-binding-1:ab", method: "next-page", next: next, keep: keep, pages: pages, records: keep,
                           bytes: Int64(pages * 100), firstPageStamp: "7", highestStamp: "9", startedAt: "2026-12-02T10:00:00Z")
    }

    func pages(_ store: StateStore) throws -> [String] {
        var out: [String] = []
        try store.forEachStagedPage(source: "posts") { bytes in
            out.append(String(decoding: bytes, as: UTF8.self))
            return true
        }
        return out
    }

    @Test func pagesAreStagedWithTheirResumePointAndReadBackInOrder() throws {
        let t = try TemporaryStore()
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":1},{"id":2}"#.utf8), point: point(next: "u2", keep: 2, pages: 1))
        try t.store.stageListingPage(source: "posts", page: 2, records: Array(#"{"id":3}"#.utf8), point: point(next: "u3", keep: 3, pages: 2))
        #expect(try pages(t.store) == [#"{"id":1},{"id":2}"#, #"{"id":3}"#])
        #expect(try t.store.listingResumePoint(source: "posts") == point(next: "u3", keep: 3, pages: 2))
        #expect(try t.store.state(of: "posts").listingResume == point(next: "u3", keep: 3, pages: 2))
        // Another source's staging is its own.
        #expect(try t.store.listingResumePoint(source: "other") == nil)
        // A new listing's page 1 starts the staging afresh.
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":9}"#.utf8), point: point(next: "v2", keep: 1, pages: 1))
        #expect(try pages(t.store) == [#"{"id":9}"#])
    }

    /// A page and its point are one transaction: a failure leaves the earlier page and point as they were.
    @Test func aPageThatFailsToStageLeavesTheEarlierOnesAndTheirPoint() throws {
        let t = try TemporaryStore()
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":1}"#.utf8), point: point(next: "u2", keep: 1, pages: 1))
        try t.store.database.execute("CREATE TRIGGER no_more BEFORE INSERT ON listing_resume_pages WHEN NEW.page > 1 BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        #expect(throws: StoreError.self) {
            try t.store.stageListingPage(source: "posts", page: 2, records: Array(#"{"id":2}"#.utf8), point: point(next: "u3", keep: 2, pages: 2))
        }
        #expect(try pages(t.store) == [#"{"id":1}"#])
        #expect(try t.store.listingResumePoint(source: "posts")?.next == "u2")
    }

    @Test func cuttingKeepsTheRecordsBeforeTheCutOnly() throws {
        let t = try TemporaryStore()
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":1},{"id":2}"#.utf8), point: point(next: "u2", keep: 2, pages: 1))
        try t.store.stageListingPage(source: "posts", page: 2, records: Array(#"{"id":3},{"id":4}"#.utf8), point: point(next: "u3", keep: 4, pages: 2))
        try t.store.stageListingPage(source: "posts", page: 3, records: Array(#"{"id":5}"#.utf8), point: point(next: "u4", keep: 5, pages: 3))
        try t.store.cutStagedPages(source: "posts", lastPage: 2, bytes: 8)
        #expect(try pages(t.store) == [#"{"id":1},{"id":2}"#, #"{"id":3}"#])
    }

    @Test func aWholeListingCommittedEndsTheStaging() throws {
        let t = try TemporaryStore()
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":1}"#.utf8), point: point(next: "u2", keep: 1, pages: 1))
        let writer = try t.store.beginListing(source: "posts")
        try Array(#"{"id":1}"#.utf8).withUnsafeBytes { try writer.add(id: "1", idIsInteger: true, version: nil, body: $0) }
        // A listing that fails to commit keeps it: the next try resumes.
        writer.rollback()
        #expect(try t.store.listingResumePoint(source: "posts") != nil)
        let second = try t.store.beginListing(source: "posts")
        try Array(#"{"id":1}"#.utf8).withUnsafeBytes { try second.add(id: "1", idIsInteger: true, version: nil, body: $0) }
        _ = try second.commit(ListingMetadata(url: "http://h/posts", etag: nil, lastModified: nil, time: "2026-12-02T10:05:00Z", allowEmpty: false,
                                              checkpoint: nil))
        #expect(try t.store.listingResumePoint(source: "posts") == nil)
        #expect(try pages(t.store).isEmpty)
    }

    @Test func discardingDropsPagesAndPoint() throws {
        let t = try TemporaryStore()
        try t.store.stageListingPage(source: "posts", page: 1, records: Array(#"{"id":1}"#.utf8), point: point(next: "u2", keep: 1, pages: 1))
        try t.store.discardListingResume(source: "posts")
        #expect(try t.store.listingResumePoint(source: "posts") == nil)
        #expect(try pages(t.store).isEmpty)
    }
}
