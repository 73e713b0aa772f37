import Dispatch
import Foundation
import SyncStore
import Testing
@testable import SyncEngine

/// Engines of one daemon share `EngineShared` (docs/architecture.md, "Concurrency"): what one learns the
/// others see, a database one of them replaced is followed by the others, and per-source locks are
/// reentrant and apart from each other.
@Suite("EngineShared")
struct EngineSharedTests {
    let directory = NSTemporaryDirectory() + "engineshared-" + UUID().uuidString
    let source = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", writable: true,
                                     location: SourceLocation(file: "posts.source", line: 1))

    func engine(_ shared: EngineShared) throws -> SyncEngine {
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        return try SyncEngine(store: StateStore(path: directory + "/state.db"),
                              snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                              logger: Logger(journal: false, threshold: .error), environment: [:], shared: shared)
    }

    @Test("an engine reopens the database another engine replaced, and only then")
    func followsAReplacedDatabase() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shared = EngineShared()
        let local = try engine(shared)
        let lane = try engine(shared)
        _ = try local.put(JSONObject([("id", .string("a")), ("title", .string("x"))]), into: source)
        lane.followReplacedStore()
        #expect(try lane.store.outbox(source: nil).count == 1, "nothing was replaced: the same file")
        // What `recoverDamagedStore` does on another engine: the file moves aside, an empty one takes its place.
        local.store.close()
        let path = directory + "/state.db"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: path + ".corrupt-test" + suffix)
        }
        _ = try StateStore(path: path)
        shared.storeGeneration.withLock { $0 += 1 }
        #expect(try lane.store.outbox(source: nil).count == 1, "still reading the file moved aside")
        lane.followReplacedStore()
        #expect(try lane.store.outbox(source: nil).isEmpty)
        #expect(lane.store.path == path)
    }

    @Test("a listing's notices noted by one engine are seen by the others")
    func noticesAreShared() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shared = EngineShared()
        let lane = try engine(shared)
        let local = try engine(shared)
        lane.note(["the next page was not followed", "the next page was not followed"], of: source)
        #expect(local.notices == ["posts": ["the next page was not followed"]])
        lane.note([], of: source)
        #expect(local.notices.isEmpty)
    }

    @Test("a notice is kept with the source's token redacted, in both of its forms")
    func noticesAreRedacted() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shared = EngineShared()
        let lane = try engine(shared)
        shared.memory.withLock { $0.tokens["posts"] = "tkn_S3cr3t/Ab+Cd=Ef9xyz" }
        lane.note([SourceNotice("carry cid=\"c-tkn_S3cr3t/Ab+Cd=Ef9xyz\" (1, 2)", publicText: "carry c-tkn_S3cr3t/Ab+Cd=Ef9xyz")],
                  of: source)
        #expect(lane.notices["posts"] == [SourceNotice("carry cid=\"c-[redacted]\" (1, 2)", publicText: "carry c-[redacted]")])
    }

    @Test("a source's lock is reentrant, and another source's lock is free meanwhile")
    func sourceLocks() {
        let shared = EngineShared()
        let otherSource = DispatchSemaphore(value: 0)
        let value = shared.withSourceLock("a") { () -> Int in
            // A put publishes from inside its own lock: the same thread takes it again.
            let inner = shared.withSourceLock("a") { () -> Int in 41 }
            DispatchQueue.global().async {
                shared.withSourceLock("b") { () -> Void in _ = otherSource.signal() }
            }
            #expect(otherSource.wait(timeout: .now() + 10) == .success, "b waited for a")
            return inner + 1
        }
        #expect(value == 42)
    }

    @Test("state reads are numbered across engines: the later read has the larger stamp and the newer state")
    func stampedStates() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shared = EngineShared()
        let lane = try engine(shared)
        let local = try engine(shared)
        let before = try #require(shared.stampedState(of: "posts", from: lane.store))
        _ = try local.put(JSONObject([("id", .string("a")), ("title", .string("x"))]), into: source)
        let after = try #require(shared.stampedState(of: "posts", from: local.store))
        #expect(after.stamp > before.stamp)
        #expect((before.state.pendingCount, after.state.pendingCount) == (0, 1))
    }
}
