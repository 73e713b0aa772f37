import Foundation
import SyncStore
import Testing
@testable import SyncEngine
@testable import SyncRemote

/// `Pagination=header` (syncd.conf(5)): the next page's URL is the value of the response header `NextHeader=`,
/// as Kinto sends it in `Next-Page:`. The loop guard, `MaxPages=` and the origin rules apply to what this
/// returns the same way as to a `Link:` target (`ListingFetcher.fetch`).
@Suite("ListingFetcher: pages named in a response header")
struct ListingFetcherHeaderPagesTests {
    let directory = NSTemporaryDirectory() + "headerpages-" + UUID().uuidString
    static let page1 = "http://127.0.0.1:8888/v1/buckets/b/collections/c/records"

    private func nextPage(_ headers: [(String, String)], nextHeader: String = "Next-Page", pageURL: String = page1) throws -> String? {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var source = SourceConfiguration(name: "kinto", url: Self.page1, pagination: .header,
                                         location: SourceLocation(file: "kinto.source", line: 1))
        source.nextHeader = nextHeader
        let fetcher = ListingFetcher(source: source, client: HTTPClient(), clocks: ManualClock().engineClock, store: try StateStore(path: directory + "/state.db"),
                                     environment: [:], token: nil)
        var head = HTTPResponseHead()
        head.status = 200
        head.headers = headers.map { (name: $0.0.lowercased(), value: $0.1) }
        return try fetcher.nextPage(head: head, document: nil, pageURL: pageURL, page: 1, records: 100)
    }

    @Test("an absolute URL is taken as it is; a relative one is resolved against the page")
    func resolves() throws {
        let absolute = Self.page1 + "?_limit=100&_token=eyJsYXN0X29iamVjdCI6"
        #expect(try nextPage([("Next-Page", absolute)]) == absolute)
        #expect(try nextPage([("Next-Page", " ?_token=abc ")]) == Self.page1 + "?_token=abc")
        #expect(try nextPage([("Next-Page", "/v1/other?_token=abc")]) == "http://127.0.0.1:8888/v1/other?_token=abc")
    }

    @Test("no header, or an empty one, ends the listing; a Link header is not what Pagination=header follows")
    func lastPage() throws {
        #expect(try nextPage([]) == nil)
        #expect(try nextPage([("Next-Page", "")]) == nil)
        #expect(try nextPage([("Link", "<http://127.0.0.1:8888/p2>; rel=\"next\"")]) == nil)
    }

    @Test("NextHeader= names the header, matched without regard to case")
    func otherHeader() throws {
        #expect(try nextPage([("x-next-url", "p2")], nextHeader: "X-Next-URL", pageURL: "http://h/list/p1") == "http://h/list/p2")
        #expect(try nextPage([("Next-Page", "p2")], nextHeader: "X-Next-URL") == nil)
    }

    @Test("a value that is no URL fails the listing, naming the header")
    func invalid() {
        #expect {
            _ = try nextPage([("Next-Page", "http://[::1")])
        } throws: { error in
            (error as? RefreshFailure)?.message == "page 1 has an invalid Next-Page header: <http://[::1>"
        }
    }
}
