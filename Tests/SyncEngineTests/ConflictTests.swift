import SyncStore
import Testing
@testable import SyncEngine

/// A local edit made against version 1 while someone else moved the server's record on: what each
/// `ConflictPolicy=` does, checked on the server's own record, the outbox and the cache file.
@Suite("Engine: conflicts")
struct ConflictTests {
    /// A rig whose record "a" is at version 2 on the server while the local edit was made against version 1.
    func conflicted(_ policy: String, versionField: String = "version") throws -> EngineRig {
        let rig = try EngineRig("Writable=yes\nVersionField=\(versionField)\nConflictPolicy=\(policy)")
        rig.server.seed("a", [("title", "first")])
        rig.refresh()
        try rig.put("a", [("title", "mine"), ("version", 1)])
        rig.server.edit("a", "title", "theirs")
        _ = rig.requests()
        return rig
    }

    @Test func serverWinsDropsTheLocalEditAndKeepsItForRestore() throws {
        let rig = try conflicted("server-wins")
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/a/", "GET http://api.test/posts/"])
        #expect(rig.server.record("a")?["title"] == "theirs")
        #expect(try rig.outbox().isEmpty)
        #expect(try rig.engine.store.discarded(source: "posts").map(\.recordID) == ["a"])
        #expect(try rig.cachedRecords()["a"]?["title"] == "theirs")
    }

    @Test func clientWinsPushesTheLocalEditOverTheServers() throws {
        let rig = try conflicted("client-wins")
        #expect(rig.refresh().isSuccess)
        // client-wins does not look first: the PUT goes out unguarded.
        #expect(rig.requests() == ["PUT http://api.test/posts/a/", "GET http://api.test/posts/"])
        #expect(rig.server.record("a")?["title"] == "mine")
        #expect(try rig.outbox().isEmpty)
    }

    @Test func manualKeepsBothSidesUntilResolved() throws {
        let rig = try conflicted("manual")
        rig.refresh()
        #expect(rig.server.record("a")?["title"] == "theirs")
        let conflict = try #require(try rig.engine.store.conflicts(source: "posts").first)
        #expect(conflict.recordID == "a")
        #expect(try rig.outbox().map(\.state) == [.conflict])
        try rig.engine.resolve(source: rig.source, id: "a", keepLocal: true)
        #expect(rig.refresh().isSuccess)
        #expect(rig.server.record("a")?["title"] == "mine")
        #expect(rig.server.record("a")?["version"] == .integer(3))
        #expect(try rig.outbox().isEmpty)
    }

    @Test func manualResolvedForTheServerDropsTheLocalEdit() throws {
        let rig = try conflicted("manual")
        rig.refresh()
        try rig.engine.resolve(source: rig.source, id: "a", keepLocal: false)
        #expect(rig.refresh().isSuccess)
        #expect(rig.server.record("a")?["title"] == "theirs")
        #expect(try rig.outbox().isEmpty)
        #expect(try rig.cachedRecords()["a"]?["title"] == "theirs")
    }

    /// A local edit made under last-write-wins (the manual clock is in 2026-12) while someone else wrote the
    /// record at `theirs` (its `updated`), then a refresh.
    func lastWriteWins(serverWroteAt theirs: String) throws -> EngineRig {
        let rig = try EngineRig("Writable=yes\nVersionField=updated\nConflictPolicy=last-write-wins")
        rig.server.seed("a", [("updated", "2026-01-01T00:00:00Z")])
        rig.refresh()
        try rig.put("a", [("title", "mine"), ("updated", "2026-01-01T00:00:00Z")])
        rig.server.seed("a", [("updated", .string(theirs)), ("title", "theirs")], version: 2)
        #expect(rig.refresh().isSuccess)
        #expect(try rig.outbox().isEmpty)
        return rig
    }

    @Test func lastWriteWinsKeepsTheNewerLocalChange() throws {
        let rig = try lastWriteWins(serverWroteAt: "2026-06-01T00:00:00Z")
        #expect(rig.server.record("a")?["title"] == "mine")
    }

    @Test func lastWriteWinsDropsTheOlderLocalChange() throws {
        let rig = try lastWriteWins(serverWroteAt: "2027-06-01T00:00:00Z")
        #expect(rig.server.record("a")?["title"] == "theirs")
        #expect(try rig.engine.store.discarded(source: "posts").count == 1)
    }

    @Test func aPreconditionFailedOnThePutIsAConflict() throws {
        let rig = try EngineRig("Writable=yes\nVersionField=version\nConflictPolicy=manual")
        rig.server.seed("a")
        rig.refresh()
        try rig.put("a", [("title", "mine"), ("version", 1)])
        // The check sees version 1; someone writes between the check and the PUT: the ETag no longer matches.
        rig.transport.then("GET", "http://api.test/posts/a/", .json(#"{"id": "a", "version": 1}"#, headers: [("ETag", "\"v1\"")]))
        rig.server.edit("a", "title", "theirs")
        rig.refresh()
        #expect(rig.transport.requests.contains { $0.method == "PUT" })
        #expect(rig.server.record("a")?["title"] == "theirs")
        #expect(try rig.outbox().map(\.state) == [.conflict])
        #expect(try rig.outbox().first?.lastStatus == 412)
    }

    /// Under ConflictPolicy=manual, a local edit of record "a" that the server removed meanwhile, then a refresh.
    func editOfARecordTheServerRemoved() throws -> EngineRig {
        let rig = try EngineRig("Writable=yes\nVersionField=version\nConflictPolicy=manual")
        rig.server.seed("a")
        rig.server.seed("b")
        rig.refresh()
        try rig.put("a", [("title", "mine"), ("version", 1)])
        rig.server.remove("a")
        rig.refresh()
        return rig
    }

    @Test func aRecordTheServerRemovedIsAConflictForAnEdit() throws {
        let rig = try editOfARecordTheServerRemoved()
        #expect(rig.server.record("a") == nil)
        #expect(try rig.outbox().map(\.state) == [.conflict])
    }

    @Test func keepingTheLocalEditOfARecordTheServerRemovedCreatesItAgain() throws {
        let rig = try editOfARecordTheServerRemoved()
        #expect(try rig.outbox().map(\.state) == [.conflict])
        // The change feed follows the view apps read: the record is still there (in conflict), so it changed.
        let since = try #require(try rig.engine.store.changes(source: "posts", since: 0, limit: 1000).get()).seq
        let feed = try #require(try rig.engine.store.changes(source: "posts", since: since - 1, limit: 1000).get())
        #expect(feed.removed.isEmpty && feed.changed == ["a"])
        #expect(try rig.cachedRecords()["a"] != nil)
        try rig.engine.resolve(source: rig.source, id: "a", keepLocal: true)
        #expect(try rig.outbox().map(\.operation) == [.create])
        #expect(rig.refresh().isSuccess)
        // Sent once as a create, not as an update that meets the removal and the same conflict again.
        #expect(rig.transport.log.filter { $0 == "POST http://api.test/posts/" }.count == 1)
        #expect(rig.server.record("a")?["title"] == "mine")
        #expect(try rig.outbox().isEmpty)
        #expect(try rig.engine.store.conflicts(source: "posts").isEmpty)
        #expect(try rig.cachedRecords()["a"]?["title"] == "mine")
    }

    @Test func anEditOnTopOfTheEnginesOwnPushIsNotAConflict() throws {
        let rig = try EngineRig("Writable=yes\nVersionField=version\nConflictPolicy=manual")
        rig.server.seed("a")
        rig.refresh()
        try rig.put("a", [("n", 1), ("version", 1)])
        rig.refresh()
        // Made against version 1 again (the app did not reread): the server's version 2 is syncd's own push.
        try rig.put("a", [("n", 2), ("version", 1)])
        #expect(rig.refresh().isSuccess)
        #expect(rig.server.record("a")?["n"] == .integer(2))
        #expect(try rig.outbox().isEmpty)
    }

    @Test func anEditAlreadyOnTheServerIsSettledWithoutSending() throws {
        let rig = try EngineRig("Writable=yes\nVersionField=version\nConflictPolicy=manual")
        rig.server.seed("a", [("title", "x")])
        rig.refresh()
        try rig.put("a", [("title", "y"), ("version", 1)])
        // Its earlier PUT landed though the answer was lost: the server holds exactly the change.
        rig.server.seed("a", [("title", "y")], version: 2)
        _ = rig.requests()
        #expect(rig.refresh().isSuccess)
        #expect(rig.requests() == ["GET http://api.test/posts/a/", "GET http://api.test/posts/"])
        #expect(try rig.outbox().isEmpty)
    }
}
