import Testing
@testable import SyncStore
import SyncCore

/// `List` pages of the local view with local changes pending: each page reads only the chunks holding it
/// (the ID index places each changed record), so paging through a listing costs the listing once, not once
/// per page.
extension StateStoreLocalViewTests {
    @Test func aPageWithPendingChangesIsThePageWithoutThemWithTheChangesApplied() throws {
        let t = try TemporaryStore()
        try store(records(3000), into: t.store)
        let before = try page(t.store, offset: 2000, limit: 100)
        #expect(before.total == 3000)
        try queue(t.store, "2050", .update, #"{"id":2050,"v":"local"}"#)
        // A removal before the page moves it by one record; a creation adds one at the end of the view.
        try queue(t.store, "10", .delete)
        try queue(t.store, "new", .create, #"{"id":"new"}"#)
        var expected = before.bodies
        expected[49] = #"{"id":2050,"v":"local"}"#
        #expect(try page(t.store, offset: 1999, limit: 100) == (expected, 3000))
        #expect(try page(t.store, offset: 2997, limit: 100) == ([#"{"id":2999,"v":0}"#, #"{"id":3000,"v":0}"#, #"{"id":"new"}"#], 3000))
        #expect(try page(t.store, offset: 9, limit: 2) == ([#"{"id":11,"v":0}"#, #"{"id":12,"v":0}"#], 3000))
        #expect(try page(t.store, offset: 2999, limit: 5) == ([#"{"id":"new"}"#], 3000))
    }

    /// Removals in a row, at the listing's start and end, and a record changed then removed: every page of
    /// every size agrees with the whole view.
    @Test(arguments: [1, 3, 511, 512, 513])
    func pagesAgreeWithTheWholeViewAroundRemovals(limit: Int) throws {
        let t = try TemporaryStore()
        try store(records(1500), into: t.store)
        for id in ["1", "2", "3", "512", "513", "1500"] { try queue(t.store, id, .delete) }
        try queue(t.store, "700", .update, #"{"id":700,"v":"local"}"#)
        try queue(t.store, "700", .delete)
        try queue(t.store, "a", .create, #"{"id":"a"}"#)
        var whole: [String] = []
        try t.store.forEachLocalRecord(source: "posts") { _, json in whole.append(String(decoding: json, as: UTF8.self)) }
        #expect(whole.count == 1500 - 7 + 1)
        var offset = 0
        var paged: [String] = []
        while offset < whole.count {
            let next = try page(t.store, offset: offset, limit: limit)
            #expect(next.total == whole.count)
            #expect(next.bodies == Array(whole[offset..<min(whole.count, offset + limit)]))
            paged += next.bodies
            offset += limit
        }
        #expect(paged == whole)
    }

    /// The work of one page with one change pending: the index entries of the chunk holding the page and of
    /// the chunk holding the changed record, the same for a listing twice as long.
    @Test func aPageWithAPendingChangeReadsItsOwnChunksWhateverTheListingsLength() throws {
        var visited: [Int] = []
        for length in [3000, 6000] {
            let t = try TemporaryStore()
            try store(records(length), into: t.store)
            try queue(t.store, "20", .update, #"{"id":20,"v":"local"}"#)
            let counter = StoreWorkCounter()
            t.store.workCounter = counter
            let result = try page(t.store, offset: 2048, limit: 100)
            #expect(result.bodies.first == #"{"id":2049,"v":0}"#)
            #expect(counter.outboxEntriesRead == 1)
            visited.append(counter.indexEntriesVisited)
        }
        #expect(visited[0] == visited[1])
        #expect(visited[0] <= RecordChunk.capacity + 100, "the changed record's chunk, then the page's records")
    }
}
