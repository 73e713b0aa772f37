import Testing
@testable import SyncCore

/// `ListingResume` and `AscendingStamps` (syncd.conf(5), "RESUMING A FIRST SYNC"): which listings resume and how,
/// what staged pages are bound to, and where a listing in ascending stamp order resumes.
@Suite("ListingResume: which listings resume, from where")
struct ListingResumeTests {
    func source(_ lines: String) throws -> SourceConfiguration {
        try #require(ConfigurationSourceTests.source("[Source]\nURL=https://h/items?_sort=updated\n" + lines + "\n"))
    }

    static let watermark = "Delta=watermark\nDeltaField=/updated\nDeltaQuery=updated__gt={checkpoint}\n"

    @Test("the server's next-page position resumes; pages by number, offset, link or body URL only with a watermark")
    func methods() throws {
        #expect(ListingResume.method(for: try source("")) == nil)
        #expect(ListingResume.method(for: try source(ListingResumeTests.watermark)) == nil)
        #expect(ListingResume.method(for: try source("Pagination=header")) == .nextPage)
        #expect(ListingResume.method(for: try source("Pagination=cursor\nCursorPath=/next_cursor")) == .nextPage)
        #expect(ListingResume.method(for: try source("Pagination=header\n" + ListingResumeTests.watermark)) == .nextPage)
        for paging in ["link", "body", "page", "offset"] {
            #expect(ListingResume.method(for: try source("Pagination=\(paging)")) == nil, "\(paging)")
            #expect(ListingResume.method(for: try source("Pagination=\(paging)\n" + ListingResumeTests.watermark)) == .watermark, "\(paging)")
        }
    }

    @Test("pages are held until StagePagesAfterSec= has passed, then staged; more than 8 MiB before then stops the staging")
    func pageEnds() throws {
        let from = Duration.seconds(101)
        #expect(ListingResume.pageEnd(held: 1, now: .seconds(100), stagesFrom: from) == .hold)
        #expect(ListingResume.pageEnd(held: ListingResume.heldBeforeStaging, now: .seconds(100), stagesFrom: from) == .hold)
        #expect(ListingResume.pageEnd(held: ListingResume.heldBeforeStaging + 1, now: .seconds(100), stagesFrom: from) == .stopStaging)
        #expect(ListingResume.pageEnd(held: ListingResume.heldBeforeStaging + 1, now: from, stagesFrom: from) == .stage)
        #expect(ListingResume.pageEnd(held: 0, now: .seconds(500), stagesFrom: from) == .stage)
        // The default is 1 s; 0 stages every page; the key takes any time span, not a negative or a word.
        #expect(try source("").stagePagesAfter == .seconds(1))
        #expect(try source("StagePagesAfterSec=0").stagePagesAfter == .zero)
        #expect(try source("StagePagesAfterSec=2min").stagePagesAfter == .seconds(120))
        let problems = ConfigurationSourceTests.problems("[Source]\nURL=https://h/items\nStagePagesAfterSec=soon\n")
        #expect(problems == ["posts.source:3: StagePagesAfterSec: invalid time span \"soon\": expected a number at \"soon\""])
    }

    @Test("the binding follows the settings that decide what the pages hold, and the account")
    func binding() throws {
        let base = try source("Pagination=header")
        let same = ListingResume.binding(of: base, account: "alice")
        #expect(same == ListingResume.binding(of: try source("Pagination=header"), account: "alice"))
        #expect(same != ListingResume.binding(of: base, account: "bob"))
        for other in ["Pagination=header\nNextHeader=X-Next", "Pagination=header\nIDField=key", "Pagination=header\nVersionField=v",
                      "Pagination=header\nRecordsPath=/data", "Pagination=header\nHeader=Accept-Language: de"] {
            #expect(same != ListingResume.binding(of: try source(other), account: "alice"), "\(other)")
        }
        // Settings that do not change what a page holds keep it.
        #expect(same == ListingResume.binding(of: try source("Pagination=header\nTimeoutSec=10s"), account: "alice"))
    }

    @Test("syncd --check-config --verbose says whether an interrupted listing resumes")
    func explanation() throws {
        #expect(try source("").explanation.allSatisfy { !$0.hasPrefix("interrupted:") })
        #expect(try source("Pagination=header").explanation.contains(
            "interrupted: the first sync resumes at the next page the server named (Pagination=header); its pages are staged once it "
            + "has run 1s (StagePagesAfterSec=)"))
        #expect(try source("Pagination=header\nStagePagesAfterSec=0").explanation.contains(
            "interrupted: the first sync resumes at the next page the server named (Pagination=header); every page is staged "
            + "(StagePagesAfterSec=0)"))
        #expect(try source("Pagination=link\n" + ListingResumeTests.watermark).explanation.contains(
            "interrupted: a full listing resumes from the highest /updated below the last received, with the delta request, "
            + "while the pages come in ascending order of it (ask for that order in URL=); its pages are staged once it has run 1s "
            + "(StagePagesAfterSec=)"))
        #expect(try source("Pagination=page").explanation.contains(
            "interrupted: a listing cut short starts over from its first page (Pagination=page without Delta=watermark: "
            + "see RESUMING A FIRST SYNC in syncd.conf(5))"))
    }

    func stamps(_ values: [JSONValue?]) -> AscendingStamps {
        var stamps = AscendingStamps()
        for value in values { stamps.see(value) }
        return stamps
    }

    @Test("ascending stamps resume after the highest stamp below the last, keeping the records up to it")
    func resumePoint() {
        #expect(stamps([.integer(1), .integer(2), .integer(3), .integer(4)]).resumePoint! == (3, "3"))
        // Equal stamps at the end: all of them come again.
        #expect(stamps([.integer(1), .integer(2), .integer(2), .integer(5), .integer(5)]).resumePoint! == (3, "2"))
        #expect(stamps([.string("2026-01-01"), .string("2026-01-02")]).resumePoint! == (1, "2026-01-01"))
        // Exact decimal order, the stamp's own text.
        #expect(stamps([.number(JSONNumber(literal: "1.50")!), .number(JSONNumber(literal: "1.6")!)]).resumePoint! == (1, "1.50"))
        // One record: nothing below it.
        #expect(stamps([.integer(7)]).resumePoint == nil)
    }

    @Test("no resume point while every stamp is one, nor once the order breaks or a stamp is missing")
    func noResumePoint() {
        #expect(stamps([]).resumePoint == nil)
        #expect(stamps([.integer(4), .integer(4)]).resumePoint == nil)
        let mixed = stamps([.integer(1), .integer(3), .integer(2), .integer(9)])
        #expect(!mixed.ascending && !mixed.descending && mixed.resumePoint == nil && mixed.count == 4)
        // Newest first is an order (the recipes'): not ascending, but not out of order either.
        let newestFirst = stamps([.integer(9), .integer(9), .integer(4), .integer(1)])
        #expect(!newestFirst.ascending && newestFirst.descending && newestFirst.resumePoint == nil)
        #expect(stamps([.integer(1), .integer(2)]).ascending && !stamps([.integer(1), .integer(2)]).descending)
        #expect(stamps([.integer(1), nil, .integer(2)]).resumePoint == nil)
        #expect(stamps([.integer(1), .null, .integer(2)]).resumePoint == nil)
        #expect(stamps([.integer(1), .string("2")]).resumePoint == nil)
        #expect(stamps([.integer(1), .bool(true)]).resumePoint == nil)
    }
}
