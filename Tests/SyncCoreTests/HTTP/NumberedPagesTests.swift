import Testing
@testable import SyncCore

@Suite("NumberedPages: Pagination=page and Pagination=offset")
struct NumberedPagesTests {
    static func paging(_ mode: PaginationMode, _ url: String, configure: (inout SourceConfiguration) -> Void = { _ in }) throws -> NumberedPages {
        var source = SourceConfiguration(name: "items", url: url, pagination: mode, location: SourceLocation(file: "items.source", line: 1))
        configure(&source)
        return try #require(NumberedPages(source: source))
    }

    @Test("only page and offset number their pages")
    func modes() {
        let source = SourceConfiguration(name: "items", url: "https://h/items", pagination: .body, location: SourceLocation(file: "", line: 1))
        #expect(NumberedPages(source: source) == nil)
    }

    @Test("pages count up from 1 until a short page")
    func pageNumbers() throws {
        var pages = try Self.paging(.page, "https://h/items?format=json")
        #expect(pages.next(afterPageWith: 3, total: nil) == "https://h/items?format=json&page=2")
        #expect(pages.next(afterPageWith: 3, total: nil) == "https://h/items?format=json&page=3")
        #expect(pages.next(afterPageWith: 2, total: nil) == nil)
        #expect(pages.received == 8 && pages.pages == 3)
    }

    @Test("a page number in URL= is the first; PageParameter= names it; an empty page ends")
    func startingPage() throws {
        var pages = try Self.paging(.page, "https://h/items?p=5&size=2") { $0.pageParameter = "p" }
        #expect(pages.next(afterPageWith: 2, total: nil) == "https://h/items?p=6&size=2")
        #expect(pages.next(afterPageWith: 0, total: nil) == nil)
    }

    @Test("the total at TotalPath= ends the listing without asking for an empty page")
    func total() throws {
        var pages = try Self.paging(.page, "https://h/items")
        #expect(pages.next(afterPageWith: 2, total: 4) == "https://h/items?page=2")
        #expect(pages.next(afterPageWith: 2, total: 4) == nil)
    }

    @Test("offsets advance by the records received; the page size is the first page's")
    func offsets() throws {
        var pages = try Self.paging(.offset, "https://h/items")
        #expect(pages.next(afterPageWith: 100, total: nil) == "https://h/items?offset=100")
        #expect(pages.next(afterPageWith: 100, total: nil) == "https://h/items?offset=200")
        #expect(pages.next(afterPageWith: 7, total: nil) == nil)
        #expect(pages.pageSize == 100)
    }

    @Test("the limit in URL= is the page size, unless the server caps it; custom parameter names")
    func limit() throws {
        var pages = try Self.paging(.offset, "https://h/items?max=50&skip=10") { $0.limitParameter = "max"; $0.offsetParameter = "skip" }
        #expect(pages.next(afterPageWith: 50, total: nil) == "https://h/items?max=50&skip=60")
        #expect(pages.next(afterPageWith: 49, total: nil) == nil)
        var capped = try Self.paging(.offset, "https://h/items?limit=500")
        #expect(capped.next(afterPageWith: 100, total: 250) == "https://h/items?limit=500&offset=100")
        #expect(capped.next(afterPageWith: 100, total: 250) == "https://h/items?limit=500&offset=200")
        #expect(capped.next(afterPageWith: 50, total: 250) == nil)
        var small = try Self.paging(.offset, "https://h/items?limit=500")
        #expect(small.next(afterPageWith: 30, total: nil) == nil)
    }

    @Test("QueryParameter reads the first value as written")
    func query() {
        #expect(QueryParameter.value(of: "page", in: "https://h/i?a=1&page=3&page=4#page=9") == "3")
        #expect(QueryParameter.value(of: "page", in: "https://h/i?pages=3") == nil)
        #expect(QueryParameter.value(of: "flag", in: "https://h/i?flag") == "")
    }
}
