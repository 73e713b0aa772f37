import SyncStore
import Testing
@testable import SyncEngine

/// Creates whose outcome is unknown (docs/local-changes.md, "Lost answers"): never POSTed again blindly; the
/// listing decides, and a re-send waits `LostCreateWaitSec=` on the boot clock, moved here by hand.
@Suite("Engine: lost creates")
struct LostCreateTests {
    static let settings = "Writable=yes\nTimeoutSec=10s\nLostCreateWaitSec=60s"

    func posts(_ rig: EngineRig) -> Int { rig.transport.requests.filter { $0.method == "POST" }.count }

    @Test(arguments: [ScriptedAnswer.Fault.lostAfterApplying, .lostBeforeApplying])
    func aCreateWhoseAnswerWasLostIsNotSentAgainInTheSameRefresh(_ fault: ScriptedAnswer.Fault) throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .fault(fault))
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.hasPrefix("pushing create of a: "))
        #expect(posts(rig) == 1)
        #expect(rig.transport.log.last == "GET http://api.test/posts/")
    }

    @Test func theListingShowingTheRecordSettlesTheCreate() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .fault(.lostAfterApplying))
        rig.refresh()
        #expect(rig.server.records.map(\.id) == ["a"])
        #expect(try rig.outbox().isEmpty)
        #expect(posts(rig) == 1)
        #expect(try rig.cachedRecords()["a"]?["title"] == "x")
    }

    @Test func aServerNumberedRecordMatchingWhatWasSentIsAdopted() throws {
        let server = FakeCollection()
        server.takesClientIDs = false
        let rig = try EngineRig(Self.settings, server: server)
        server.seed("7", [("title", "older")])
        rig.refresh()
        try rig.put("tmp-1", [("title", "x")])
        rig.transport.then("POST", server.url, .fault(.lostAfterApplying))
        rig.refresh()
        #expect(server.records.map(\.id) == ["7", "101"])
        #expect(try rig.outbox().isEmpty)
        #expect(try rig.cachedRecords().keys.sorted() == ["101", "7"])
        #expect(posts(rig) == 1)
    }

    @Test func twoMatchingNewRecordsParkTheCreate() throws {
        let server = FakeCollection()
        server.takesClientIDs = false
        let rig = try EngineRig(Self.settings, server: server)
        try rig.put("tmp-1", [("title", "x")])
        rig.transport.then("POST", server.url, .fault(.lostBeforeApplying))
        server.seed("201", [("title", "x")])
        server.seed("202", [("title", "x")])
        rig.refresh()
        let entry = try #require(try rig.outbox().first)
        #expect(entry.state == .parked)
        #expect(entry.lastError?.contains("several new records with every field it sent (201, 202)") == true)
        #expect(server.records.count == 2)
    }

    @Test func notInTheListingItIsSentAgainOnlyAfterTheWait() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .fault(.lostBeforeApplying))
        rig.refresh()
        #expect(rig.server.records.isEmpty)
        // 59 s after the POST: the server may still be working on it.
        rig.clock.advance(seconds: 59)
        rig.refresh()
        #expect(posts(rig) == 1)
        #expect(try rig.outbox().map(\.state) == [.queued])
        // A listing begun after the wait still lacks it: sent again, once.
        rig.clock.advance(seconds: 2)
        rig.refresh()
        rig.refresh()
        #expect(posts(rig) == 2)
        #expect(rig.server.records.map(\.id) == ["a"])
        #expect(try rig.outbox().isEmpty)
    }

    @Test func theWaitCountsFromTheRequestNotFromTheListing() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        // The POST takes 8 s, then the connection breaks.
        var lost = ScriptedAnswer.fault(.lostBeforeApplying)
        lost.delay = .seconds(8)
        rig.transport.then("POST", rig.server.url, lost)
        rig.refresh()
        rig.clock.advance(seconds: 60)
        rig.refresh()   // the listing of this refresh began 60 s after the POST began: re-sent at the next push
        rig.refresh()
        #expect(posts(rig) == 2)
    }

    @Test func sentAgainAndLostAgainItIsParkedNotSentAThirdTime() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .fault(.lostBeforeApplying), .fault(.lostBeforeApplying))
        rig.refresh()
        rig.clock.advance(seconds: 61)
        rig.refresh()
        rig.refresh()   // the re-send, lost too
        rig.clock.advance(seconds: 61)
        rig.refresh()
        rig.refresh()
        #expect(posts(rig) == 2)
        let entry = try #require(try rig.outbox().first)
        #expect(entry.state == .parked)
        #expect(entry.lastError?.hasPrefix("it was sent again after the outcome of its POST was unknown") == true)
    }

    @Test func aCreateThatWasNeverSentGoesOutAtTheNextRefresh() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .fault(.notSent))
        #expect(rig.refreshFailure() != nil)
        let entry = try #require(try rig.outbox().first)
        #expect(entry.notSent && entry.lastError == "Failed to connect to api.test port 80: Connection refused")
        rig.refresh()
        #expect(posts(rig) == 2)
        #expect(rig.server.records.map(\.id) == ["a"])
    }

    @Test(arguments: [500, 502, 503, 504, 522])
    func aFailingServerOrGatewayLeavesTheOutcomeUnknown(_ status: Int) throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .status(status))
        rig.refresh()
        rig.refresh()
        // Held back until the wait ends, not re-sent at the next refresh.
        #expect(posts(rig) == 1)
        #expect(try rig.outbox().first?.lastStatus == status)
    }

    @Test(arguments: [501, 505])
    func aRefusingServerErrorIsRetriedAtTheNextRefresh(_ status: Int) throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        rig.transport.then("POST", rig.server.url, .status(status))
        rig.refresh()
        rig.refresh()
        #expect(posts(rig) == 2)
        #expect(rig.server.records.map(\.id) == ["a"])
    }

    @Test func aTimedOutCreateIsLostNotRetried() throws {
        let rig = try EngineRig(Self.settings)
        try rig.put("a", [("title", "x")])
        var slow = ScriptedAnswer.status(201)
        slow.delay = .seconds(11)
        rig.transport.then("POST", rig.server.url, slow)
        let failure = try #require(rig.refreshFailure())
        #expect(failure.message.contains("Operation timed out after 10000 milliseconds"))
        rig.refresh()
        #expect(posts(rig) == 1)
    }
}
