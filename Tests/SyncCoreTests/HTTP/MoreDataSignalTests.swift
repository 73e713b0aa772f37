import Testing
@testable import SyncCore

@Suite("MoreDataSignal: a last page that names more data than syncd received")
struct MoreDataSignalTests {
    static func source(_ pagination: PaginationMode = .none, configure: (inout SourceConfiguration) -> Void = { _ in }) -> SourceConfiguration {
        var source = SourceConfiguration(name: "items", url: "https://h/items", recordsPath: ["results"], recordsPathText: "/results",
                                         pagination: pagination, location: SourceLocation(file: "items.source", line: 1))
        configure(&source)
        return source
    }

    static func document(_ json: String) throws -> JSONValue { try JSONValue(parsing: Array(json.utf8)) }

    @Test("each kind of signal is found under Pagination=none", arguments: [
        (PageSignals(linkHeaders: ["<https://h/items?page=2>; rel=\"next\""]), MoreDataSignal.Kind.linkHeader),
        (PageSignals(nextPageHeader: "https://h/items?_token=x"), .nextPageHeader),
        (PageSignals(contentRange: "items 0-99/2000"), .contentRange(first: 0, last: 99, total: 2000)),
    ])
    func headers(signals: PageSignals, kind: MoreDataSignal.Kind) {
        #expect(signals.unfollowed(by: Self.source(), received: 100) == [MoreDataSignal(kind)])
    }

    @Test("each body member is found under Pagination=none", arguments: [
        (#"{"next": "https://h/items?page=2", "results": []}"#, MoreDataSignal.Kind.nextMember("/next")),
        (#"{"next_url": "/items?_next=5", "results": []}"#, .nextMember("/next_url")),
        (#"{"links": {"next": "/items?page=2"}, "results": []}"#, .nextMember("/links/next")),
        (#"{"meta": {"next_cursor": "abc"}, "results": []}"#, .cursorMember("/meta/next_cursor")),
        (#"{"next_cursor": 17, "results": []}"#, .cursorMember("/next_cursor")),
        (#"{"has_more": true, "results": []}"#, .hasMore("/has_more")),
        (#"{"count": 2000, "results": []}"#, .total("/count", count: 2000)),
        (#"{"meta": {"total": 101}, "results": []}"#, .total("/meta/total", count: 101)),
    ])
    func members(json: String, kind: MoreDataSignal.Kind) throws {
        let signals = PageSignals(document: try Self.document(json))
        #expect(signals.unfollowed(by: Self.source(), received: 100) == [MoreDataSignal(kind)])
    }

    @Test("members that name nothing are no signal", arguments: [
        #"{"next": null, "next_url": "", "has_more": false, "count": 100, "total": 3, "results": []}"#,
        #"{"links": {"next": null}, "meta": {"next_cursor": null, "has_more": false}, "results": []}"#,
        #"{"count": "2000", "results": []}"#,
    ])
    func nothing(json: String) throws {
        let signals = PageSignals(linkHeaders: ["<https://h/items?page=1>; rel=\"first\""], nextPageHeader: " ",
                                  contentRange: "items 0-99/100", document: try Self.document(json))
        #expect(signals.unfollowed(by: Self.source(), received: 100).isEmpty)
    }

    @Test("the source's own mode is left out on its last page; signals of other kinds count")
    func ownMode() throws {
        let link = PageSignals(linkHeaders: ["<https://h/items?page=9>; rel=\"next\""], document: try Self.document(#"{"next": "/p9", "results": []}"#))
        #expect(link.unfollowed(by: Self.source(.link), received: 10) == [MoreDataSignal(.nextMember("/next"))])
        #expect(link.unfollowed(by: Self.source(.body), received: 10) == [MoreDataSignal(.linkHeader)])
        let cursor = PageSignals(document: try Self.document(#"{"meta": {"next_cursor": "c"}, "results": []}"#))
        #expect(cursor.unfollowed(by: Self.source(.cursor) { $0.cursorPath = ["meta", "next_cursor"] }, received: 10).isEmpty)
        #expect(cursor.unfollowed(by: Self.source(.body), received: 10) == [MoreDataSignal(.cursorMember("/meta/next_cursor"))])
    }

    @Test("HasMorePath= false ends the listing: members naming a next page on it are not signals; a total still is")
    func hasMoreFalse() throws {
        let page = PageSignals(document: try Self.document(#"{"more": false, "links": {"next": "/again"}, "count": 12, "results": []}"#))
        let source = Self.source(.body) { $0.hasMorePath = ["more"]; $0.nextPath = ["links", "next"] }
        #expect(page.unfollowed(by: source, received: 12).isEmpty)
        #expect(page.unfollowed(by: source, received: 10) == [MoreDataSignal(.total("/count", count: 12))])
        let more = PageSignals(document: try Self.document(#"{"more": true, "results": []}"#))
        #expect(more.unfollowed(by: source, received: 10) == [MoreDataSignal(.hasMore("/more"))])
    }

    @Test("TotalPath= is read before the common total members")
    func totalPath() throws {
        let page = PageSignals(document: try Self.document(#"{"stats": {"rows": 40}, "count": 10, "results": []}"#))
        #expect(page.unfollowed(by: Self.source(.page) { $0.totalPath = ["stats", "rows"] }, received: 10)
                == [MoreDataSignal(.total("/stats/rows", count: 40))])
    }

    @Test("Content-Range: first-last/total of any unit; unknown or malformed totals are not read", arguments: [
        ("items 0-99/2000", true), ("records 1900-1999/2000", false), ("items 0-99/*", false), ("items */2000", false),
        ("items 99-0/2000", false), ("garbage", false), ("bytes 0-9/10", false),
    ])
    func contentRange(value: String, more: Bool) {
        let found = PageSignals(contentRange: value).unfollowed(by: Self.source(), received: 100)
        #expect(found.isEmpty == !more)
    }

    @Test("the message names the signal and the key to set")
    func messages() {
        #expect(MoreDataSignal(.nextPageHeader).message(source: Self.source(), page: 1, received: 10)
                == "the response has a Next-Page header but Pagination=none: only the first page was received; set Pagination=header")
        #expect(MoreDataSignal(.nextMember("/next")).message(source: Self.source(), page: 1, received: 10)
                == "the response has a next page at /next but Pagination=none: only the first page was received; set Pagination=body and NextPath=/next")
        #expect(MoreDataSignal(.total("/count", count: 2000)).message(source: Self.source(), page: 1, received: 100)
                == "the response has a total of 2000 at /count but Pagination=none: only the first page was received (100 records); "
                + "set Pagination=page or Pagination=offset, with TotalPath=/count")
        #expect(MoreDataSignal(.linkHeader).message(source: Self.source(.body), page: 3, received: 30)
                == "page 3, the last one Pagination=body found, has a Link: rel=\"next\" header: only part of the listing was received "
                + "(30 records in 3 pages); set Pagination=link")
        #expect(MoreDataSignal(.total("/count", count: 31)).message(source: Self.source(.offset), page: 3, received: 30)
                == "the listing ended after 3 pages with 30 records, but its last page has a total of 31 at /count: the collection "
                + "most likely changed on the server while it was paged; retrying")
        #expect(MoreDataSignal(.contentRange(first: 0, last: 99, total: 2000)).message(source: Self.source(), page: 1, received: 100)
                == "the response has a Content-Range of items 0-99 of 2000 but Pagination=none: only the first page was received "
                + "(100 records); set Pagination=offset")
    }
}
