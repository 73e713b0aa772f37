import Foundation
import SyncStore
import SyncRemote
import Testing
@testable import SyncEngine

/// What the engine does with each kind of refusal, of the listing and of a push: how the refresh fails, what the
/// outbox keeps, and that the previous cache file stays byte for byte.
@Suite("Engine: refusals")
struct RefusalTests {
    func cacheBytes(_ rig: EngineRig) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: rig.directory + "/cache/posts.json"))
    }

    /// A rig whose listing of records "a" and "b" is cached.
    func cached(_ settings: String = "Writable=yes\nVersionField=version") throws -> EngineRig {
        let rig = try EngineRig(settings)
        rig.server.seed("a")
        rig.server.seed("b")
        #expect(rig.refresh().isSuccess)
        _ = rig.requests()
        return rig
    }

    @Test(arguments: [401, 403])
    func aListingRefusingTheCredentialFailsForGood(_ status: Int) throws {
        let rig = try cached()
        let before = try cacheBytes(rig)
        rig.transport.then("GET", rig.server.url, .status(status))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.kind == .permanent)
        #expect(failure.message.contains("HTTP \(status)") && failure.message.contains("BearerTokenCredential="), "\(failure.message)")
        #expect(try cacheBytes(rig) == before)
    }

    @Test(arguments: [408, 500, 502, 503, 504])
    func aListingTheServerFailsIsRetried(_ status: Int) throws {
        let rig = try cached()
        let before = try cacheBytes(rig)
        rig.transport.then("GET", rig.server.url, .status(status))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.kind == .transient)
        #expect(failure.status == status)
        #expect(try cacheBytes(rig) == before)
    }

    @Test func aListingOf429CarriesItsRetryAfter() throws {
        let rig = try cached()
        rig.transport.then("GET", rig.server.url, .status(429, headers: [("Retry-After", "120")]))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.kind == .transient && failure.retryAfter == "120")
    }

    @Test func aListingURLThatIsGoneFailsForGood() throws {
        let rig = try cached()
        rig.transport.then("GET", rig.server.url, .json(#"{"detail": "Not found."}"#, status: 404))
        #expect(rig.refreshFailure()?.kind == .permanent)
        #expect(try rig.cachedRecords().count == 2)
    }

    @Test func aListingLargerThanMaxBytesIsRefused() throws {
        let rig = try cached("Writable=yes\nMaxBytes=64")
        let before = try cacheBytes(rig)
        rig.server.seed("c", [("text", .string(String(repeating: "x", count: 100)))])
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("MaxBytes=64"), "\(failure.message)")
        #expect(try cacheBytes(rig) == before)
    }

    @Test func aListingThatIsNotJSONKeepsThePreviousFile() throws {
        let rig = try cached()
        let before = try cacheBytes(rig)
        rig.transport.then("GET", rig.server.url, ScriptedAnswer(status: 200, body: Array("<html>maintenance</html>".utf8)))
        #expect(rig.refreshFailure() != nil)
        #expect(try cacheBytes(rig) == before)
    }

    @Test func aWriteTheServerRefusesIsParkedWithItsWordsAndTheOthersGoOn() throws {
        let rig = try cached()
        try rig.put("a", [("title", ""), ("version", 1)])
        try rig.put("b", [("title", "fine"), ("version", 1)])
        rig.transport.then("PUT", "http://api.test/posts/a/", .json(#"{"title": ["This field may not be blank."]}"#, status: 400))
        rig.refresh()
        let outbox = try rig.outbox()
        #expect(outbox.map(\.recordID) == ["a"])
        #expect(outbox.first?.state == .parked)
        #expect(outbox.first?.lastError == #"HTTP 400 from PUT http://api.test/posts/a/: {"title": ["This field may not be blank."]}"#)
        #expect(rig.server.record("b")?["title"] == "fine")
        #expect(rig.server.record("a")?["title"] == nil)
    }

    @Test(arguments: [401, 403])
    func aWriteRefusingTheCredentialStopsThePushAndKeepsTheChanges(_ status: Int) throws {
        let rig = try cached("Writable=yes")
        try rig.put("a", [("n", 1)])
        try rig.put("b", [("n", 1)])
        rig.transport.then("PUT", "http://api.test/posts/a/", .status(status))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("check the credentials (BearerTokenCredential=)"), "\(failure.message)")
        #expect(!rig.transport.log.contains("PUT http://api.test/posts/b/"))
        // The listing is pulled all the same; both changes stay queued for when the credential is fixed.
        #expect(rig.transport.log.last == "GET http://api.test/posts/")
        #expect(try rig.outbox().map(\.state) == [.queued, .queued])
    }

    @Test func threeRecordsFailingInARowStopThePush() throws {
        let rig = try cached("Writable=yes")
        for id in ["c", "d", "e", "f"] { try rig.put(id, [("n", 1)]) }
        rig.transport.server = { _ in .status(500) }
        rig.refresh()
        #expect(rig.transport.log.filter { $0.hasPrefix("POST") }.count == 3)
        #expect(try rig.outbox().count == 4)
    }

    @Test func aSeeOtherToAWriteParksIt() throws {
        let rig = try cached("Writable=yes")
        try rig.put("a", [("n", 1)])
        rig.transport.then("PUT", "http://api.test/posts/a/", .status(303, headers: [("Location", "http://api.test/elsewhere")]))
        rig.refresh()
        let entry = try #require(try rig.outbox().first)
        #expect(entry.state == .parked)
        #expect(entry.lastError == "HTTP 303 See Other from PUT http://api.test/posts/a/ to http://api.test/elsewhere: the server did not "
                + "take the PUT; check URL= and ItemURL=")
    }

    @Test func aRedirectedWriteThatSucceedsIsDone() throws {
        let rig = try cached("Writable=yes")
        try rig.put("a", [("n", 1)])
        var moved = ScriptedAnswer.json(#"{"id": "a", "n": 1, "version": 2}"#)
        moved.redirects = ["http://api.test/v2/posts/a/"]
        rig.transport.then("PUT", "http://api.test/posts/a/", moved)
        #expect(rig.refresh().isSuccess)
        #expect(try rig.outbox().count <= 1)
        #expect(try rig.outbox().allSatisfy { $0.state == .sent })
    }

    @Test func aNotFoundForAListedRecordParksItAsAWrongItemURL() throws {
        let rig = try cached("Writable=yes\nItemURL=http://api.test/wrong/{id}")
        try rig.put("a", [("n", 1)])
        rig.refresh()
        let entry = try #require(try rig.outbox().first)
        #expect(entry.state == .parked)
        #expect(entry.lastError?.contains("http://api.test/wrong/a") == true, "\(entry.lastError ?? "")")
        #expect(entry.lastError?.contains("ItemURL=") == true)
    }

    @Test func aCheckTheItemURLDoesNotServeParksTheChange() throws {
        let rig = try cached()
        try rig.put("a", [("n", 1), ("version", 1)])
        rig.transport.then("GET", "http://api.test/posts/a/", .json(#"{"detail": "Method \"GET\" not allowed."}"#, status: 405))
        rig.refresh()
        let entry = try #require(try rig.outbox().first)
        #expect(entry.state == .parked)
        #expect(entry.lastError?.hasPrefix("HTTP 405 from GET http://api.test/posts/a/ (the check before the PUT)") == true, "\(entry.lastError ?? "")")
        #expect(rig.server.record("a")?["n"] == nil)
    }

    @Test func thePushStopsAtTheRefreshDeadlineAndTheRestStayQueued() throws {
        let rig = try cached("Writable=yes\nTimeoutSec=10s\nListingTimeoutSec=20s")
        for id in ["c", "d", "e", "f"] { try rig.put(id, [("n", 1)]) }
        rig.transport.server = { [server = rig.server] request in
            var answer = server.answer(request)
            if request.method == "POST" { answer.delay = .seconds(8) }
            return answer
        }
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("ListingTimeoutSec=20"), "\(failure.message)")
        // 8 s + 8 s, then the third POST has 4 s left: the server stores it, its answer comes too late.
        #expect(rig.transport.log.filter { $0.hasPrefix("POST") }.count == 3)
        #expect(rig.server.records.map(\.id) == ["a", "b", "c", "d", "e"])
        let left = try rig.outbox().filter { $0.state == .queued }
        #expect(left.map(\.recordID) == ["e", "f"])
        #expect(left.first?.lastError?.contains("Operation timed out after 4000 milliseconds") == true)
    }

    @Test func aCancelledRefreshStopsBeforeItsNextRequest() throws {
        let rig = try cached("Writable=yes")
        try rig.put("c", [("n", 1)])
        let flag = CancellationFlag()
        flag.cancel()
        guard case .failed(let failure) = rig.engine.refresh(rig.source, cancellation: flag) else {
            Issue.record("a cancelled refresh succeeded")
            return
        }
        #expect(failure.kind == .cancelled)
        #expect(rig.requests().isEmpty)
        #expect(try rig.outbox().map(\.state) == [.queued])
    }

    @Test func aWriteAnsweredWithRetryAfterFailsTheRefreshWithIt() throws {
        let rig = try cached("Writable=yes")
        try rig.put("a", [("n", 1)])
        try rig.put("b", [("n", 1)])
        rig.transport.then("PUT", "http://api.test/posts/a/", .status(503, headers: [("Retry-After", "30")]))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.retryAfter == "30" && failure.status == 503)
        // The server is down, not the record: nothing more is sent.
        #expect(!rig.transport.log.contains("PUT http://api.test/posts/b/"))
        #expect(try rig.outbox().map(\.state) == [.queued, .queued])
        #expect(try rig.outbox().first?.lastStatus == 503)
    }
}
