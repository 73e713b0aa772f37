import Foundation
import Synchronization
import SyncStore
import Testing
@testable import SyncEngine

/// The engine's side of discarded changes (SyncEngine+Discarded): what a policy discards is kept, old ones are
/// forgotten by the source's `DiscardedRetentionSec=` on a manual clock, and a restore queues the change again
/// or is refused with the control path's error, changing nothing.
@Suite("SyncEngine discarded changes")
struct SyncEngineDiscardedTests {
    let directory = NSTemporaryDirectory() + "syncengine-discarded-" + UUID().uuidString
    let now = ManualClock(Timestamp(secondsSinceEpoch: 1_796_000_000))

    func source(_ policy: ConflictPolicy = .serverWins, writable: Bool = true) -> SourceConfiguration {
        var source = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", versionField: "version", writable: writable,
                                         conflictPolicy: policy, location: SourceLocation(file: "posts.source", line: 1))
        source.discardedRetention = .seconds(86_400)
        return source
    }

    /// An engine on the manual clock `now`, whose outbox holds one queued create of record "a".
    func engine() throws -> (SyncEngine, OutboxRecord) {
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        let engine = try SyncEngine(store: StateStore(path: directory + "/state.db"),
                                    snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                                    logger: Logger(journal: false, threshold: .error), environment: [:], clock: now.engineClock)
        _ = try engine.put(JSONObject([("id", .string("a")), ("title", .string("local")), ("version", .string("v1"))]), into: source())
        return (engine, try #require(try engine.store.outbox(source: "posts").first))
    }

    @Test("server-wins and the older side of last-write-wins keep the change with the server's side")
    func policiesKeepWhatTheyDiscard() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, entry) = try engine()
        let server = Array("{\"id\":\"a\",\"title\":\"server\",\"version\":\"2099-01-01T00:00:00Z\"}".utf8)
        #expect(try engine.conflict(entry, source: source(.lastWriteWins), remoteBody: server, remoteVersion: "2099-01-01T00:00:00Z",
                                    reason: "HTTP 409 from POST http://127.0.0.1:9/posts"))
        let kept = try #require(try engine.store.discarded(source: "posts").first)
        #expect(kept.seq == entry.seq && kept.body == entry.body && kept.operation == .create)
        #expect(kept.reason == "HTTP 409 from POST http://127.0.0.1:9/posts; the server's version is newer, "
                + "dropped the local change (ConflictPolicy=last-write-wins)")
        #expect(kept.serverBody == server && kept.serverVersion == "2099-01-01T00:00:00Z")
        #expect(kept.discardedAt == now.wall.rfc3339)
        #expect(try engine.store.outbox(source: "posts") == [])

        _ = try engine.put(JSONObject([("id", .string("b")), ("title", .string("local"))]), into: source())
        let other = try #require(try engine.store.outbox(source: "posts").first)
        #expect(try engine.conflict(other, source: source(.serverWins), remoteBody: nil, remoteVersion: nil, reason: "the server removed it"))
        #expect(try engine.store.discarded(source: "posts").map(\.reason)
                == [kept.reason, "the server removed it; dropped the local create (ConflictPolicy=server-wins)"])
    }

    @Test("DiscardedRetentionSec= counts from the discard on the engine's clock")
    func pruningFollowsTheRetention() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, entry) = try engine()
        _ = try engine.conflict(entry, source: source(), remoteBody: nil, remoteVersion: nil, reason: "r")
        now.advance(seconds: 86_400)
        engine.pruneDiscarded(source())
        #expect(try engine.store.discarded(source: "posts").map(\.seq) == [entry.seq], "kept for exactly the retention")
        now.advance(seconds: 1)
        engine.pruneDiscarded(source())
        #expect(try engine.store.discarded(source: "posts") == [])
    }

    @Test("a restore queues the change again; a bad one is refused and changes nothing")
    func restoreAndItsRefusals() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (engine, entry) = try engine()
        _ = try engine.conflict(entry, source: source(), remoteBody: nil, remoteVersion: nil, reason: "r")
        let before = try engine.store.discarded(source: nil)

        func refusal(_ seq: Int64, _ lookup: @escaping (String) -> SourceConfiguration?) -> ManagerError? {
            do {
                _ = try engine.restoreDiscarded(seq, sources: lookup)
                Issue.record("the engine accepted the restore")
            } catch {
                return error
            }
            return nil
        }
        #expect(refusal(entry.seq + 50) { _ in source() } == .noSuchDiscardedChange(seq: entry.seq + 50))
        #expect(refusal(entry.seq) { _ in nil } == .invalidParameter(
            parameter: "seq", reason: "discarded change \(entry.seq) belongs to source \"posts\", which is not configured; "
                + "add its .source file back (and reload) to restore it"))
        #expect(refusal(entry.seq) { _ in source(writable: false) } == .notWritable(source: "posts"))
        #expect(try engine.store.discarded(source: nil) == before)
        #expect(try engine.store.outbox(source: nil) == [])

        let restored = try engine.restoreDiscarded(entry.seq) { _ in source() }
        let queued = try #require(try engine.store.outbox(source: "posts").first)
        // The listing has no record "a": it is created again, with the body it had.
        #expect(restored == RestoredChange(source: "posts", id: "a", operation: .create, seq: queued.seq))
        #expect(queued.seq > entry.seq && queued.body == entry.body && queued.state == .queued)
        #expect(try engine.store.discarded(source: nil) == [])
        // The cache file shows it pending at once.
        let file = try String(contentsOfFile: engine.snapshots.folder.path(of: "posts"), encoding: .utf8)
        #expect(file.contains("\"pending\":[\"a\"]"))
        #expect(refusal(entry.seq) { _ in source() } == .noSuchDiscardedChange(seq: entry.seq), "restored once only")
    }
}

/// A wall clock the test sets: the engine's `clock`.
