import Testing
import SyncCore

/// The change feed's paging, de-duplication, expiry and event lists (docs/control-api.md, "Changes").
@Suite("ChangeFeed")
struct ChangeFeedTests {
    func row(_ seq: Int64, _ id: String?, removed: Bool = false) -> ChangeLogRow { ChangeLogRow(seq: seq, id: id, removed: removed) }

    @Test func anIDAppearsOnceInItsLatestStateInTheOrderOfItsLatestChange() throws {
        let rows = [row(4, "a"), row(4, "b"), row(5, "a", removed: true), row(6, "c"), row(7, "b")]
        let page = try ChangeFeed.page(rows: rows, since: 3, limit: 100, current: 7, floor: 0).get()
        #expect(page == ChangePage(changed: ["c", "b"], removed: ["a"], next: nil, seq: 7))
        // Removed, then created again: changed.
        let again = try ChangeFeed.page(rows: [row(2, "x", removed: true), row(3, "x")], since: 1, limit: 10, current: 3, floor: 0).get()
        #expect(again.changed == ["x"] && again.removed.isEmpty)
    }

    @Test func idsAreComparedByTheirBytesSoNFCAndNFDAreTwoRecords() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let page = try ChangeFeed.page(rows: [row(1, nfc), row(2, nfd, removed: true)], since: 0, limit: 10, current: 2, floor: 0).get()
        #expect(page.changed.map { Array($0.utf8) } == [Array(nfc.utf8)])
        #expect(page.removed.map { Array($0.utf8) } == [Array(nfd.utf8)])
    }

    @Test func aPageEndsAfterTheChangeThatReachesTheLimitAndNextResumesIt() throws {
        let rows = [row(1, "a"), row(2, "b"), row(2, "c"), row(3, "d"), row(4, "e")]
        let first = try ChangeFeed.page(rows: rows, since: 0, limit: 2, current: 4, floor: 0).get()
        #expect(first == ChangePage(changed: ["a", "b", "c"], removed: [], next: 2, seq: 4))
        let rest = rows.filter { $0.seq > 2 }
        let second = try ChangeFeed.page(rows: rest, since: 2, limit: 2, current: 4, floor: 0).get()
        #expect(second == ChangePage(changed: ["d", "e"], removed: [], next: nil, seq: 4))
        // Nothing since the current seq: an empty last page.
        #expect(try ChangeFeed.page(rows: [], since: 4, limit: 2, current: 4, floor: 0).get() == ChangePage(changed: [], removed: [], next: nil, seq: 4))
    }

    @Test(arguments: [(Int64(2), Int64(3)), (Int64(9), Int64(3))])
    func aSinceTheLogCannotAnswerExpiresWithTheOldestItCan(since: Int64, floor: Int64) {
        // Below the trimmed part, or above the current seq (the account's data was erased since).
        #expect(ChangeFeed.page(rows: [], since: since, limit: 10, current: 5, floor: floor) == .failure(ChangeFeed.Expired(oldest: floor)))
    }

    @Test func aChangeLoggedWithoutIDsExpiresEverySinceBeforeIt() {
        let rows = [row(3, "a"), row(4, nil), row(5, "b")]
        #expect(ChangeFeed.page(rows: rows, since: 2, limit: 10, current: 5, floor: 0) == .failure(ChangeFeed.Expired(oldest: 4)))
    }

    @Test func anEventNamesAtMostTheLimitOfEachListElseItIsTruncated() throws {
        let limit = ChangeFeed.eventListLimit
        let full = (1...limit).map { row(1, "r\($0)") } + (1...limit).map { row(1, "g\($0)", removed: true) }
        let lists = try #require(ChangeFeed.eventLists(rows: full, since: 0, current: 1, floor: 0))
        #expect(lists.changed.count == limit && lists.removed.count == limit)
        #expect(ChangeFeed.eventLists(rows: full + [row(1, "one more")], since: 0, current: 1, floor: 0) == nil)
        #expect(ChangeFeed.eventLists(rows: [], since: 0, current: 1, floor: 1) == nil, "the log no longer reaches the last event")
    }
}
