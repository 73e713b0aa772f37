import Foundation
import Synchronization
import SyncCore
import SyncStore
import Testing
@testable import SyncEngine

/// A cache file changed outside syncd while the daemon runs (docs/syncd.8.md, "FILES"): `recoverCacheFile`
/// sets it aside and forgets the listing as at start, keeps the outbox, and tells the daemon once.
@Suite("SyncEngine cache file recovery")
struct SyncEngineCacheFileRecoveryTests {
    let directory = NSTemporaryDirectory() + "syncengine-recovery-" + UUID().uuidString

    /// An engine that refreshed `posts` from a `file:` listing of two records; `lost` collects the reports.
    func engine(_ lost: Reports) throws -> (SyncEngine, SourceConfiguration) {
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        let listing = directory + "/listing.json"
        try Data(#"[{"id":1,"title":"Post 1"},{"id":2,"title":"Post 2"}]"#.utf8).write(to: URL(fileURLWithPath: listing))
        let source = SourceConfiguration(name: "posts", url: "file://" + listing, writable: true,
                                         location: SourceLocation(file: "posts.source", line: 1))
        let shared = EngineShared(outboxObserver: nil, cacheFileObserver: { name, _ in lost.names.withLock { $0.append(name) } })
        let engine = try SyncEngine(store: StateStore(path: directory + "/state.db"),
                                    snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                                    logger: Logger(journal: false, threshold: .error), environment: [:], shared: shared)
        guard case .updated = engine.refresh(source) else {
            Issue.record("the first refresh did not store the listing")
            return (engine, source)
        }
        return (engine, source)
    }

    @Test("a changed byte: the file is moved aside, the listing and validators forgotten, the outbox kept, reported once")
    func changedFileIsSetAside() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lost = Reports()
        let (engine, source) = try engine(lost)
        _ = try engine.store.enqueue(source: "posts", recordID: "9", idIsInteger: true, operation: OutboxRecord.Operation.create, body: Array(#"{"id":9}"#.utf8),
                                     baseVersion: String?.none, at: "2026-12-01T00:00:00Z", idempotencyKey: "k")
        let path = engine.snapshots.path(of: "posts")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let at = try #require(bytes.firstIndex(of: UInt8(ascii: "P")))
        bytes[at] = UInt8(ascii: "X")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // A read of the bodies fails; the recovery sets the file aside.
        #expect(throws: StoreError.self) { _ = try engine.store.record(source: "posts", id: "1") { _ in } }
        #expect(engine.recoverCacheFile("posts"))
        #expect(!FileManager.default.fileExists(atPath: path))
        let aside = try FileManager.default.contentsOfDirectory(atPath: engine.snapshots.directory).filter { $0.hasPrefix("posts.json.corrupt-") }
        #expect(aside.count == 1)
        let state = try engine.store.state(of: "posts")
        #expect(state.snapshotFingerprint == nil && state.etag == nil && state.recordCount == 0)
        #expect(try engine.store.outbox(source: "posts").map { $0.recordID } == ["9"])
        #expect(lost.names.withLock { $0 } == ["posts"])
        // Found again (another read, another engine): nothing more to do, nothing reported twice.
        #expect(!engine.recoverCacheFile("posts"))
        #expect(lost.names.withLock { $0 } == ["posts"])
        _ = source
    }

    @Test("a file that is the one syncd wrote (a read that raced a commit) is left alone and nothing is reported")
    func validFileIsKept() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lost = Reports()
        let (engine, _) = try engine(lost)
        let before = try Data(contentsOf: URL(fileURLWithPath: engine.snapshots.path(of: "posts")))
        #expect(!engine.recoverCacheFile("posts"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: engine.snapshots.path(of: "posts"))) == before)
        #expect(try engine.store.state(of: "posts").snapshotFingerprint != nil)
        #expect(lost.names.withLock { $0 }.isEmpty)
    }
}

/// The sources the engines reported lost, in order.
final class Reports: Sendable {
    let names = Mutex<[String]>([])
}
