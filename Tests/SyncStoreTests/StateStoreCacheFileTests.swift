import Testing
@testable import SyncStore

/// The cache truth rule (docs/architecture.md, "The cache file"): what the store says the file apps read holds.
@Suite("StateStore cache file counts")
struct StateStoreCacheFileTests {
    let fingerprint = SnapshotFingerprint(size: 10, inode: 7, changeTime: 1, hash: 2)

    @Test func aCurrentFileHoldsTheLocalView() throws {
        let temporary = try TemporaryStore()
        try store(records(2), into: temporary.store)
        try temporary.store.recordSnapshot(source: "posts", fingerprint, records: 2)
        let state = try temporary.store.state(of: "posts")
        #expect((state.snapshotDirty, state.snapshotRecordCount, state.cachedRecordCount) == (false, 2, 2))
        #expect(state.unwrittenRecordCount == nil)
        #expect(state.cacheFileSummary == "2 cached records")
    }

    func create(_ store: StateStore, _ id: Int) throws {
        try store.enqueue(source: "posts", recordID: String(id), idIsInteger: true, operation: .create, body: Array("{\"id\":\(id)}".utf8),
                          baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "k\(id)")
    }

    /// A listing's commit writes the file with it, so only local changes can be ahead of the file: the engine
    /// marks it dirty when writing them fails.
    @Test func aFailedWriteOfLocalChangesLeavesTheFileCountUntilTheNextWrite() throws {
        let temporary = try TemporaryStore()
        try store(records(2), into: temporary.store)
        for id in 3...5 { try create(temporary.store, id) }
        try temporary.store.setSnapshotDirty(source: "posts", true)
        var state = try temporary.store.state(of: "posts", countingLocalView: true)
        #expect((state.recordCount, state.localRecordCount, state.cachedRecordCount, state.unwrittenRecordCount) == (2, 5, 2, 3))
        #expect(state.cacheFileSummary == "2 cached records; 3 records not yet written to the cache file")
        // A confirmation (no count) keeps the count; a write records the new one and clears the mark.
        try temporary.store.recordUnchanged(source: "posts", at: "2026-11-29T11:00:00Z", snapshot: nil)
        #expect(try temporary.store.state(of: "posts").snapshotRecordCount == 2)
        try temporary.store.rebuildCacheFile(source: "posts")
        state = try temporary.store.state(of: "posts", countingLocalView: true)
        #expect((state.snapshotDirty, state.cachedRecordCount, state.unwrittenRecordCount, state.snapshotRecordCount) == (false, 5, nil, 5))
    }

    /// Only records changed since the file was last written are missing from it, each once however often it changed.
    @Test func onlyRecordsChangedSinceTheLastWriteAreUnwritten() throws {
        let temporary = try TemporaryStore()
        try store(records(2), into: temporary.store)
        try create(temporary.store, 3)
        // Stored, its rewrite following: the file is behind for the moment, which is no failure.
        var behind = try temporary.store.state(of: "posts")
        #expect(behind.snapshotDirty && behind.cacheFileWriteScheduled && behind.unwrittenRecordCount == nil)
        // The engine marks a failed write.
        try temporary.store.setSnapshotDirty(source: "posts", true)
        behind = try temporary.store.state(of: "posts")
        #expect(!behind.cacheFileWriteScheduled && behind.unwrittenRecordCount == 1)
        try temporary.store.rebuildCacheFile(source: "posts")
        #expect(try temporary.store.state(of: "posts").unwrittenRecordCount == nil)
        // The write of the next change fails (the engine leaves the mark set): the file lacks 4 and holds 1 differently.
        try create(temporary.store, 4)
        try temporary.store.enqueue(source: "posts", recordID: "1", idIsInteger: true, operation: .update, body: Array("{\"id\":1,\"x\":1}".utf8),
                                    baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: "u1")
        try temporary.store.enqueue(source: "posts", recordID: "1", idIsInteger: true, operation: .update, body: Array("{\"id\":1,\"x\":2}".utf8),
                                    baseVersion: nil, at: "2026-11-29T10:00:01Z", idempotencyKey: "u2")
        try temporary.store.setSnapshotDirty(source: "posts", true)
        let state = try temporary.store.state(of: "posts", countingLocalView: true)
        #expect((state.localRecordCount, state.cachedRecordCount, state.unwrittenRecordCount) == (4, 3, 2))
        #expect(state.cacheFileSummary == "3 cached records; 2 records not yet written to the cache file")
    }

    @Test func aFileNeverWrittenHoldsNothing() throws {
        let temporary = try TemporaryStore()
        try create(temporary.store, 1)
        try temporary.store.saveRetryState(source: "posts", nil)    // the source's row, as a first refresh attempt makes it
        try temporary.store.setSnapshotDirty(source: "posts", true)
        let state = try temporary.store.state(of: "posts", countingLocalView: true)
        #expect(state.cachedRecordCount == 0)
        #expect(state.cacheFileSummary == "0 cached records; 1 record not yet written to the cache file")
    }
}
