import Testing
@testable import SyncCore

@Suite("sources.d: pagination, item URLs and origins")
struct ConfigurationPaginationTests {
    @Test("the defaults")
    func defaults() throws {
        let source = try #require(ConfigurationSourceTests.source("[Source]\nURL=http://localhost:3000/posts\n"))
        #expect(source.nextPath == ["next"] && source.nextPathText == "/next")
        #expect(source.cursorPath.isEmpty && source.cursorParameter == "cursor")
        #expect(source.maxPages == 10_000 && source.listingTimeout == .seconds(600))
        #expect(source.itemURLTemplate == nil && source.clientIDField == nil && source.allowedOrigins.isEmpty)
        #expect(source.nextHeader == "Next-Page" && source.recordEnvelope.isEmpty && source.recordEnvelopeText.isEmpty)
    }

    @Test("Pagination=header, NextHeader= and RecordEnvelope= (Kinto)")
    func headerPagesAndEnvelope() throws {
        let text = """
            [Source]
            URL=http://127.0.0.1:8888/v1/buckets/b/collections/c/records
            RecordsPath=/data
            Pagination=header
            NextHeader=X-Next
            RecordEnvelope=/data
            VersionField=last_modified
            Writable=yes
            """
        let source = try #require(ConfigurationSourceTests.source(text))
        #expect(source.pagination == .header && source.nextHeader == "X-Next")
        #expect(source.recordEnvelope == ["data"] && source.recordEnvelopeText == "/data")
        #expect(source.explanation.contains("pages: the next page's URL in each response's X-Next header, at most 10000 pages within 10min (Pagination=header)"))
        #expect(source.explanation.contains("one record: at /data in the item GET and the write answers; writes send it there (RecordEnvelope=)"))
        // The empty pointer is the default: the record is the whole body.
        let reset = try #require(ConfigurationSourceTests.source(text + "\nRecordEnvelope=\nNextHeader=\n"))
        #expect(reset.recordEnvelope.isEmpty && reset.recordEnvelopeText.isEmpty && reset.nextHeader == "Next-Page")
    }

    @Test("LostCreateWaitSec=: twice TimeoutSec=, at least a minute, unless set")
    func lostCreateWait() throws {
        let base = "[Source]\nURL=http://localhost:3000/posts\nWritable=yes\n"
        let standard = try #require(ConfigurationSourceTests.source(base))
        #expect(standard.lostCreateWait == .seconds(60))
        #expect(standard.explanation.contains("lost create answers: sent again only if a listing read 1min after the request began "
                                              + "lacks the record (twice TimeoutSec=, at least 1min; LostCreateWaitSec=)"))
        #expect(try #require(ConfigurationSourceTests.source(base + "TimeoutSec=10s\n")).lostCreateWait == .seconds(60))
        #expect(try #require(ConfigurationSourceTests.source(base + "TimeoutSec=45s\n")).lostCreateWait == .seconds(90))
        let set = try #require(ConfigurationSourceTests.source(base + "TimeoutSec=45s\nLostCreateWaitSec=50s\n"))
        #expect(set.lostCreateWait == .seconds(50))
        #expect(set.explanation.contains("lost create answers: sent again only if a listing read 50s after the request began lacks the record (LostCreateWaitSec=)"))
        #expect(ConfigurationSourceTests.problems(base + "LostCreateWaitSec=0\n") == ["posts.source:4: LostCreateWaitSec: must be greater than 0, e.g. 30s"])
        #expect(ConfigurationSourceTests.problems(base + "TimeoutSec=30s\nLostCreateWaitSec=30s\n")
                == ["posts.source:5: LostCreateWaitSec= must be longer than TimeoutSec= (30s): a create whose answer was lost "
                    + "would be sent again while the server may still work on it"])
        #expect(ConfigurationSourceTests.problems(base + "LostCreateWaitSec=soon\n").count == 1)
    }

    @Test("every new key is read")
    func everyKey() throws {
        let text = """
            [Source]
            URL=https://api.example.com/items
            Pagination=cursor
            NextPath=/links/next
            CursorPath=/meta/next_cursor
            CursorParameter=after
            MaxPages=50
            ListingTimeoutSec=2min
            AllowedOrigins=https://cdn.example.com http://127.0.0.2:8080/
            AllowedOrigins=https://b.example.com:8443
            ItemURL=https://api.example.com/item/{id}.json
            ClientIDField=client_id
            Writable=yes
            """
        let source = try #require(ConfigurationSourceTests.source(text))
        #expect(source.pagination == .cursor)
        #expect(source.nextPath == ["links", "next"])
        #expect(source.cursorPath == ["meta", "next_cursor"] && source.cursorPathText == "/meta/next_cursor")
        #expect(source.cursorParameter == "after" && source.maxPages == 50 && source.listingTimeout == .seconds(120))
        #expect(source.allowedOrigins == [
            URLOrigin(scheme: "https", host: "cdn.example.com", port: 443), URLOrigin(scheme: "http", host: "127.0.0.2", port: 8080),
            URLOrigin(scheme: "https", host: "b.example.com", port: 8443),
        ])
        #expect(source.itemURL.url(for: "7") == "https://api.example.com/item/7.json")
        #expect(source.clientIDField == "client_id")
        #expect(source.explanation.contains("change: PUT https://api.example.com/item/{id}.json (ItemURL=)"))
    }

    @Test("SendClientID=: yes by default; no leaves the ID out of creates and out of the lost-create lookup")
    func sendClientID() throws {
        let base = "[Source]\nURL=http://localhost:3000/posts\nWritable=yes\n"
        let standard = try #require(ConfigurationSourceTests.source(base))
        #expect(standard.sendClientID)
        #expect(standard.explanation.contains("create: POST http://localhost:3000/posts"))
        #expect(standard.explanation.contains("lost create answers: looked up by the client's ID, else by every field sent among new records"))
        let off = try #require(ConfigurationSourceTests.source(base + "SendClientID=no\n"))
        #expect(!off.sendClientID)
        #expect(off.explanation.contains("create: POST http://localhost:3000/posts without \"id\": the server assigns the ID (SendClientID=no)"))
        #expect(off.explanation.contains("lost create answers: looked up by every field sent among new records"))
        #expect(ConfigurationSourceTests.problems(base + "SendClientID=maybe\n")
                == ["posts.source:4: SendClientID: invalid boolean \"maybe\"; use yes or no"])
    }

    @Test("Pagination=page and offset: their keys, defaults and what --check-config --verbose says")
    func numbered() throws {
        let page = try #require(ConfigurationSourceTests.source("[Source]\nURL=https://h/items\nPagination=page\nTotalPath=/count\n"))
        #expect(page.pagination == .page && page.pageParameter == "page" && page.totalPath == ["count"])
        #expect(page.explanation[1].hasPrefix("pages: https://h/items with page= counting up, until a short or empty page or once the total "
                                              + "at /count is reached, at most 10000 pages within "))
        let offset = try #require(ConfigurationSourceTests.source(
            "[Source]\nURL=https://h/items?max=20\nPagination=offset\nLimitParameter=max\nOffsetParameter=skip\n"))
        #expect(offset.limitParameter == "max" && offset.offsetParameter == "skip" && offset.totalPath.isEmpty)
        #expect(offset.explanation[1].hasPrefix("pages: https://h/items?max=20 with skip= advanced by the records received, until a short "
                                                + "or empty page, at most 10000 pages within "))
        let body = try #require(ConfigurationSourceTests.source("[Source]\nURL=https://h/items\nPagination=body\nHasMorePath=/meta/more\n"))
        #expect(body.hasMorePath == ["meta", "more"] && body.hasMorePathText == "/meta/more")
        #expect(body.explanation.contains("pages: false at /meta/more ends the listing (HasMorePath=)"))
    }

    @Test("bad values are errors with FILE:LINE", arguments: [
        ("Pagination=pages", "posts.source:3: Pagination: invalid pagination \"pages\"; use none, link, body, cursor, page, offset or header"),
        ("PageParameter=p&x", "posts.source:3: PageParameter: invalid query parameter name \"p&x\"; use letters, digits, \"-\", \"_\", \".\" or \"~\""),
        ("HasMorePath=has_more", "posts.source:3: HasMorePath: invalid JSON pointer \"has_more\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("NextHeader=Next Page", "posts.source:3: NextHeader: invalid header name \"Next Page\"; use letters, digits and \"-\", e.g. Next-Page"),
        ("RecordEnvelope=data", "posts.source:3: RecordEnvelope: invalid JSON pointer \"data\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("NextPath=next", "posts.source:3: NextPath: invalid JSON pointer \"next\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("MaxPages=0", "posts.source:3: MaxPages: invalid page count \"0\"; use a number from 1 to 1000000"),
        ("CursorParameter=a b", "posts.source:3: CursorParameter: invalid query parameter name \"a b\"; use letters, digits, \"-\", \"_\", \".\" or \"~\""),
        ("ItemURL=https://h/items/", "posts.source:3: ItemURL: needs {id} where the record's ID goes, e.g. https://example.com/api/notes/{id}/"),
        ("AllowedOrigins=https://cdn.example.com/path", "posts.source:3: AllowedOrigins: invalid origin \"https://cdn.example.com/path\"; write scheme://host or scheme://host:port, e.g. https://cdn.example.com"),
        ("Pagination=cursor", "posts.source:3: Pagination=cursor needs CursorPath=, the JSON pointer to the next page's token in the response, e.g. CursorPath=/meta/next_cursor"),
    ])
    func bad(line: String, expected: String) {
        let problems = ConfigurationSourceTests.problems("[Source]\nURL=https://h/items\n\(line)\n")
        #expect(problems == [expected])
    }
}
