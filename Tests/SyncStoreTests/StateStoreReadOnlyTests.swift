import Foundation
import Testing
@testable import SyncStore

/// Control reads (`List`, `Get`, outbox, conflicts) open the daemon's database read-only.
@Suite("StateStore read-only")
struct StateStoreReadOnlyTests {
    @Test("reads what the daemon's connection stored")
    func readsStoredRecords() throws {
        let temporary = try TemporaryStore()
        try store(records(3), into: temporary.store)
        let reader = try StateStore(readingFrom: temporary.path, cacheFolder: temporary.folder)
        var ids: [String] = []
        let total = try reader.localRecords(source: "posts", offset: 0, limit: 10) { id, _ in ids.append(id) }
        #expect(total == 3)
        #expect(ids == ["1", "2", "3"])
    }

    @Test("cannot write: a write through it fails and the data stays")
    func refusesWrites() throws {
        let temporary = try TemporaryStore()
        try store(records(2), into: temporary.store)
        let reader = try StateStore(readingFrom: temporary.path)
        #expect(throws: StoreError.self) { try reader.saveRetryState(source: "posts", "{}") }
        #expect(try temporary.store.state(of: "posts").recordCount == 2)
        #expect(try temporary.store.state(of: "posts").retryState == nil)
    }

    @Test("a missing database is an error, and no file is created")
    func missingFileIsNotCreated() throws {
        let directory = NSTemporaryDirectory() + "syncstore-ro-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: StoreError.self) { try StateStore(readingFrom: directory + "/state.db") }
        #expect(!FileManager.default.fileExists(atPath: directory + "/state.db"))
    }
}
