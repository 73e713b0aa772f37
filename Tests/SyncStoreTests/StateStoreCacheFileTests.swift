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

    @Test func aFailedWriteLeavesTheFileCountUntilTheNextWrite() throws {
        let temporary = try TemporaryStore()
        try store(records(2), into: temporary.store)
        try temporary.store.recordSnapshot(source: "posts", fingerprint, records: 2)
        // A new listing the file did not get (the engine marks it dirty when the write fails).
        try store(records(5), into: temporary.store)
        try temporary.store.setSnapshotDirty(source: "posts", true)
        var state = try temporary.store.state(of: "posts")
        #expect((state.recordCount, state.cachedRecordCount, state.unwrittenRecordCount) == (5, 2, 5))
        #expect(state.cacheFileSummary == "2 cached records; 5 records not yet written to the cache file")
        // A confirmation (no count) keeps the count; a write records the new one and clears the mark.
        try temporary.store.recordUnchanged(source: "posts", at: "2026-11-29T11:00:00Z", snapshot: fingerprint)
        #expect(try temporary.store.state(of: "posts").snapshotRecordCount == 2)
        try temporary.store.recordSnapshot(source: "posts", fingerprint, records: 5)
        state = try temporary.store.state(of: "posts")
        #expect((state.snapshotDirty, state.cachedRecordCount, state.unwrittenRecordCount) == (false, 5, nil))
    }

    @Test func aFileNeverWrittenHoldsNothing() throws {
        let temporary = try TemporaryStore()
        try store(records(1), into: temporary.store)
        try temporary.store.setSnapshotDirty(source: "posts", true)
        let state = try temporary.store.state(of: "posts")
        #expect(state.cachedRecordCount == 0)
        #expect(state.cacheFileSummary == "0 cached records; 1 record not yet written to the cache file")
    }
}
