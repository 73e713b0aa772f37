import Foundation
import SyncStore
import Testing
@testable import SyncEngine

/// A store that cannot be read is reported as a storage failure, never as "not found" (which would turn an
/// update into a create, or tell a person their outbox entry does not exist).
@Suite("SyncEngine store errors")
struct SyncEngineStoreErrorTests {
    let directory = NSTemporaryDirectory() + "syncengine-" + UUID().uuidString
    let source = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", writable: true,
                                     location: SourceLocation(file: "posts.source", line: 1))

    /// An engine whose store holds one queued change and then fails every operation.
    func brokenEngine() throws -> (SyncEngine, String) {
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        let path = directory + "/state.db"
        let store = try StateStore(path: path)
        let engine = try SyncEngine(store: store, snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                                    logger: Logger(journal: false, threshold: .error), environment: [:])
        _ = try engine.put(JSONObject([("id", .string("a")), ("title", .string("x"))]), into: source)
        store.close()
        return (engine, path)
    }

    func queuedChanges(_ path: String) throws -> Int {
        try StateStore(readingFrom: path).outbox(source: nil).count
    }

    /// The reason of the `.storageFailure` error `body` throws; nil (and a recorded issue) for anything else.
    func storageReason(_ body: () throws(ManagerError) -> Void) -> String? {
        do {
            try body()
            Issue.record("a closed store answered")
        } catch {
            if case .storageFailure(let reason) = error { return reason }
            Issue.record("reported as \(error)")
        }
        return nil
    }

    @Test("outbox --drop and --retry say the store failed, and the change stays")
    func outboxCommands() throws {
        let (engine, path) = try brokenEngine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let drop = storageReason { () throws(ManagerError) in _ = try engine.dropOutboxEntry(1) }
        let retry = storageReason { () throws(ManagerError) in _ = try engine.retryOutboxEntry(1) }
        for reason in [drop, retry] {
            #expect(reason?.hasPrefix("Failed to read the outbox: ") == true)
            #expect(reason?.hasSuffix("; nothing was changed") == true)
        }
        #expect(try queuedChanges(path) == 1)
    }

    @Test("resolve says the store failed, not that the record is not in conflict")
    func resolve() throws {
        let (engine, path) = try brokenEngine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reason = storageReason { () throws(ManagerError) in try engine.resolve(source: source, id: "a", keepLocal: true) }
        #expect(reason?.hasPrefix("Failed to read the outbox: ") == true)
        #expect(try queuedChanges(path) == 1)
    }

    @Test("put fails before deciding create or update when the stored record cannot be read")
    func put() throws {
        let (engine, path) = try brokenEngine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reason = storageReason { () throws(ManagerError) in _ = try engine.put(JSONObject([("id", .string("a")), ("title", .string("y"))]), into: source) }
        #expect(reason?.hasPrefix("Failed to read the stored record: ") == true)
        #expect(try queuedChanges(path) == 1)
    }
}
