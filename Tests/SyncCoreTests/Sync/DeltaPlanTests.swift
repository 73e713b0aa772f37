import Testing
@testable import SyncCore

/// `DeltaPlan` (syncd.conf(5), "Incremental pull"): whether a refresh is a full listing or a delta, the delta
/// request's URL, what a checkpoint is bound to, and which records are tombstones. Times are plain numbers.
@Suite("DeltaPlan: full listing or delta, the delta URL, the binding, tombstones")
struct DeltaPlanTests {
    static let kinto = """
        [Source]
        URL=https://kinto.example.com/v1/buckets/b/collections/c/records?_sort=id
        RecordsPath=/data
        Pagination=header
        Delta=watermark
        DeltaField=/last_modified
        DeltaQuery=_since={checkpoint}&_sort=last_modified
        DeletedPath=/deleted

        """

    func source(_ text: String = kinto, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> SourceConfiguration {
        try #require(ConfigurationSourceTests.source(text), sourceLocation: sourceLocation)
    }

    func record(_ json: String) throws -> JSONValue { try JSONValue(parsing: json) }

    // fetch

    @Test("Delta=none: no plan, every refresh is the listing it always was")
    func noneHasNoPlan() throws {
        let plain = try source("[Source]\nURL=https://h/items\n")
        #expect(DeltaPlan.fetch(plain, account: "alice", held: true, stored: ("5", "b", 0), now: 10) == nil)
    }

    @Test("a full listing when nothing is held, whatever is stored")
    func noListing() throws {
        let source = try source()
        let binding = DeltaPlan.binding(of: source, account: "alice")
        #expect(DeltaPlan.fetch(source, account: "alice", held: false, stored: nil, now: 1_000) == .full(.noListing))
        #expect(DeltaPlan.fetch(source, account: "alice", held: false, stored: ("5", binding, 1_000), now: 1_001) == .full(.noListing))
    }

    @Test("a full listing when a listing is held without a checkpoint")
    func noCheckpoint() throws {
        #expect(DeltaPlan.fetch(try source(), account: "alice", held: true, stored: nil, now: 1_000) == .full(.noCheckpoint))
    }

    @Test("a full listing when the checkpoint was taken for other settings or another account")
    func settingsChanged() throws {
        let source = try source()
        let binding = DeltaPlan.binding(of: source, account: "alice")
        #expect(DeltaPlan.fetch(source, account: "bob", held: true, stored: ("5", binding, 1_000), now: 1_001) == .full(.settingsChanged))
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: ("5", "delta-binding-1:0", 1_000), now: 1_001)
                == .full(.settingsChanged))
    }

    @Test("a delta until FullResyncIntervalSec= has passed since the last full listing, a full listing from then on")
    func resyncBoundary() throws {
        let source = try source(Self.kinto + "FullResyncIntervalSec=1h\n")
        let binding = DeltaPlan.binding(of: source, account: "alice")
        let stored = (value: "1796200917394", binding: binding, fullListingAt: Int64(1_764_662_400))
        let delta = DeltaPlan.Fetch.delta(
            url: "https://kinto.example.com/v1/buckets/b/collections/c/records?_sort=last_modified&_since=1796200917394",
            checkpoint: "1796200917394")
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: stored, now: 1_764_662_400) == delta)
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: stored, now: 1_764_665_999) == delta)
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: stored, now: 1_764_666_000) == .full(.resyncDue))
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: stored, now: 1_764_700_000) == .full(.resyncDue))
        // A wall clock set back before the last full listing cannot say how old it is: a full listing.
        #expect(DeltaPlan.fetch(source, account: "alice", held: true, stored: stored, now: 1_764_662_399) == .full(.resyncDue))
    }

    @Test("the default interval is one day")
    func defaultInterval() throws {
        let source = try source()
        let stored = (value: "7", binding: DeltaPlan.binding(of: source, account: "a"), fullListingAt: Int64(0))
        #expect(DeltaPlan.fetch(source, account: "a", held: true, stored: stored, now: 86_399) != .full(.resyncDue))
        #expect(DeltaPlan.fetch(source, account: "a", held: true, stored: stored, now: 86_400) == .full(.resyncDue))
    }

    @Test("each reason as the log and the status say it")
    func reasons() {
        #expect(DeltaPlan.FullListingReason.noListing.text == "no listing held yet")
        #expect(DeltaPlan.FullListingReason.noCheckpoint.text == "no checkpoint yet")
        #expect(DeltaPlan.FullListingReason.settingsChanged.text == "the source's settings changed since the checkpoint")
        #expect(DeltaPlan.FullListingReason.resyncDue.text == "FullResyncIntervalSec= passed since the last full listing")
        #expect(DeltaPlan.FullListingReason.expired(status: 410).text == "the server answered HTTP 410: the checkpoint is too old")
    }

    // requestURL

    @Test("DeltaQuery='s parameters replace those of URL= with the same name; the others stay in order")
    func replacesParameters() throws {
        let fields = try source(Self.kinto + "URL=https://h/records?_sort=id&_fields=title#top\n")
        #expect(DeltaPlan.requestURL(fields, checkpoint: "17") == "https://h/records?_sort=last_modified&_fields=title&_since=17")
        let twice = try source(Self.kinto + "URL=https://h/records?since=1&since=2\nDeltaQuery=since={checkpoint}&to={checkpoint}\n")
        #expect(DeltaPlan.requestURL(twice, checkpoint: "9") == "https://h/records?since=9&to=9")
        let plain = try source(Self.kinto + "URL=https://h/records\nDeltaQuery=?filter=a%20b&gt={checkpoint}\n")
        #expect(DeltaPlan.requestURL(plain, checkpoint: "9") == "https://h/records?filter=a%20b&gt=9")
    }

    @Test("the checkpoint is percent-encoded as one query value", arguments: [
        ("2026-12-02T08:03:00Z", "2026-12-02T08%3A03%3A00Z"),
        ("a b&c=d+e", "a%20b%26c%3Dd%2Be"),
        ("é/ü?#", "%C3%A9%2F%C3%BC%3F%23"),
        ("-._~09AZaz", "-._~09AZaz"),
        ("%41", "%2541"),
    ])
    func encodesCheckpoint(checkpoint: String, encoded: String) throws {
        let source = try source(Self.kinto + "URL=https://h/items?_shape=objects\nDeltaQuery=updated__gt={checkpoint}&_sort=updated\n")
        #expect(DeltaPlan.requestURL(source, checkpoint: checkpoint) == "https://h/items?_shape=objects&updated__gt=\(encoded)&_sort=updated")
    }

    @Test("a placeholder inside a value keeps the text around it")
    func placeholderInsideValue() throws {
        let source = try source(Self.kinto + "URL=https://h/rest/items\nDeltaQuery=updated_at=gt.{checkpoint}&order=updated_at.asc\n")
        #expect(DeltaPlan.requestURL(source, checkpoint: "2026-12-02 08:03:00+00")
                == "https://h/rest/items?updated_at=gt.2026-12-02%2008%3A03%3A00%2B00&order=updated_at.asc")
    }

    @Test("Delta=token without DeltaQuery=: the token is the next request's URL, as given")
    func tokenIsTheURL() throws {
        let source = try source("[Source]\nURL=https://graph.example.com/v1.0/me/events/delta\nDelta=token\nDeltaTokenPath=/@odata.deltaLink\n")
        let link = "https://graph.example.com/v1.0/me/events/delta?$deltatoken=R0usmcMz%2Bx&$select=subject"
        #expect(DeltaPlan.requestURL(source, checkpoint: link) == link)
        let stored = (value: link, binding: DeltaPlan.binding(of: source, account: "a"), fullListingAt: Int64(0))
        #expect(DeltaPlan.fetch(source, account: "a", held: true, stored: stored, now: 1) == .delta(url: link, checkpoint: link))
    }

    @Test("Delta=token with DeltaQuery=: the token is a query value")
    func tokenInQuery() throws {
        let source = try source("[Source]\nURL=https://h/calendars/x/events?maxResults=250\nDelta=token\nDeltaTokenPath=/nextSyncToken\n"
                                + "DeltaQuery=syncToken={checkpoint}\n")
        #expect(DeltaPlan.requestURL(source, checkpoint: "CPDAlvWDx70CEPDAlvWDx70CGAU=")
                == "https://h/calendars/x/events?maxResults=250&syncToken=CPDAlvWDx70CEPDAlvWDx70CGAU%3D")
    }

    // isTombstone

    @Test("a tombstone: DeletedPath= holds DeletedValue=")
    func tombstones() throws {
        let kinto = try source().delta
        #expect(DeltaPlan.isTombstone(try record(#"{"id": "b", "last_modified": 5, "deleted": true}"#), kinto))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "b", "last_modified": 5, "deleted": false}"#), kinto))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "b", "last_modified": 5}"#), kinto))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "b", "deleted": "true"}"#), kinto))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "b", "deleted": 1}"#), kinto))
        let google = try source("[Source]\nURL=https://h/events\nDelta=token\nDeltaTokenPath=/nextSyncToken\nDeletedPath=/status\n"
                                + "DeletedValue=\"cancelled\"\n").delta
        #expect(DeltaPlan.isTombstone(try record(#"{"id": "e1", "status": "cancelled"}"#), google))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "e1", "status": "confirmed"}"#), google))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "e1", "status": "Cancelled"}"#), google))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": "e1"}"#), google))
    }

    @Test("a nested DeletedPath=, and a null DeletedValue=")
    func nestedAndNull() throws {
        let nested = try source(Self.kinto + "DeletedPath=/meta/state/removed\n").delta
        #expect(DeltaPlan.isTombstone(try record(#"{"id": 1, "meta": {"state": {"removed": true}}}"#), nested))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "meta": {"state": {}}}"#), nested))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "meta": {"state": "removed"}}"#), nested))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "meta": null}"#), nested))
        let null = try source(Self.kinto + "DeletedPath=/deletedAt\nDeletedValue=null\n").delta
        #expect(DeltaPlan.isTombstone(try record(#"{"id": 1, "deletedAt": null}"#), null))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "deletedAt": "2026-12-02"}"#), null))
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1}"#), null))
    }

    @Test("a number DeletedValue= matches the same number however written; other kinds never match a number")
    func numbers() throws {
        let delta = try source(Self.kinto + "DeletedPath=/state\nDeletedValue=1\n").delta
        for written in ["1", "1.0", "1e0", "10e-1"] {
            #expect(DeltaPlan.isTombstone(try record(#"{"id": 1, "state": \#(written)}"#), delta), "\(written)")
        }
        for written in ["2", "0.1", "\"1\"", "true", "[1]"] {
            #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "state": \#(written)}"#), delta), "\(written)")
        }
        #expect(DeltaPlan.marksDeleted(.integer(1), delta) && !DeltaPlan.marksDeleted(nil, delta))
        let truth = try source().delta
        #expect(!DeltaPlan.marksDeleted(.integer(1), truth) && DeltaPlan.marksDeleted(.bool(true), truth))
    }

    @Test("without DeletedPath= nothing is a tombstone")
    func noDeletedPath() throws {
        let delta = try source("[Source]\nURL=https://h/items\nDelta=watermark\nDeltaField=/updated\nDeltaQuery=updated__gt={checkpoint}\n").delta
        #expect(!DeltaPlan.isTombstone(try record(#"{"id": 1, "deleted": true}"#), delta))
        #expect(!DeltaPlan.isTombstone(.bool(true), delta))
    }

    // binding

    @Test("the binding is stable for the same settings")
    func bindingStable() throws {
        let a = DeltaPlan.binding(of: try source(), account: "alice")
        #expect(a == DeltaPlan.binding(of: try source(), account: "alice"))
        #expect(a.hasPrefix("delta-binding-1:"))
    }

    @Test("the binding changes with each setting the checkpoint depends on", arguments: [
        "URL=https://kinto.example.com/v1/buckets/b/collections/other/records?_sort=id",
        "URL=https://kinto.example.com/v1/buckets/b/collections/c/records?_sort=id&_limit=10",
        "DeltaQuery=_since={checkpoint}",
        "DeltaField=/meta/last_modified",
        "DeletedPath=/removed",
        "DeletedValue=1",
        "RecordsPath=/items",
        "IDField=uid",
        "RecordEnvelope=/data",
        "Pagination=link",
    ])
    func bindingChanges(line: String) throws {
        let before = DeltaPlan.binding(of: try source(), account: "alice")
        #expect(DeltaPlan.binding(of: try source(Self.kinto + line + "\n"), account: "alice") != before)
    }

    @Test("the binding changes with the account and the mode")
    func bindingAccountAndMode() throws {
        let source = try source()
        #expect(DeltaPlan.binding(of: source, account: "alice") != DeltaPlan.binding(of: source, account: "bob"))
        let token = try self.source("[Source]\nURL=https://h/items\nDelta=token\nDeltaTokenPath=/next\n")
        let otherToken = try self.source("[Source]\nURL=https://h/items\nDelta=token\nDeltaTokenPath=/sync/next\n")
        #expect(DeltaPlan.binding(of: token, account: "a") != DeltaPlan.binding(of: otherToken, account: "a"))
        let watermark = try self.source("[Source]\nURL=https://h/items\nDelta=watermark\nDeltaField=/next\nDeltaQuery=a={checkpoint}\n")
        let tokenWithQuery = try self.source("[Source]\nURL=https://h/items\nDelta=token\nDeltaTokenPath=/next\nDeltaQuery=a={checkpoint}\n")
        #expect(DeltaPlan.binding(of: watermark, account: "a") != DeltaPlan.binding(of: tokenWithQuery, account: "a"))
    }

    @Test("the binding does not change with settings the checkpoint does not depend on", arguments: [
        "TimeoutSec=5s", "MaxBytes=1M", "MaxPages=3", "ListingTimeoutSec=1h", "FullResyncIntervalSec=1h", "DeltaExpired=400",
        "Header=X-Client: syncd", "AllowEmpty=yes", "NextHeader=X-Next", "VersionField=last_modified", "Name=other",
        "AllowedOrigins=https://cdn.example.com", "ConflictPolicy=manual",
    ])
    func bindingKeeps(line: String) throws {
        let before = DeltaPlan.binding(of: try source(), account: "alice")
        #expect(DeltaPlan.binding(of: try source(Self.kinto + line + "\n"), account: "alice") == before)
    }
}
