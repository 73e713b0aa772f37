import Foundation
import Synchronization
import SyncCore
import SyncStore
import Testing
@testable import SyncEngine

/// Local changes to a large cache file are written once for a burst (docs/syncd.8.md, "Local changes and the
/// cache file"): the change is stored at once, the file is rewritten when the scheduled rewrite runs (the test
/// runs it by hand: no timer, no sleep), and a small file is rewritten before the change returns.
@Suite("SyncEngine coalesced cache file writes")
struct SyncEngineCoalescedWritesTests {
    let directory = NSTemporaryDirectory() + "syncengine-coalesce-" + UUID().uuidString
    let writable = SourceConfiguration(name: "posts", url: "http://127.0.0.1:9/posts", writable: true,
                                       location: SourceLocation(file: "posts.source", line: 1))
    /// Files over 1 KiB are coalesced here; each record put is over 1 KiB.
    let rule = CacheFileCoalescing(immediateBytes: 1024, delay: .milliseconds(250))

    func record(_ id: String) -> JSONObject { JSONObject([("id", .string(id)), ("text", .string(String(repeating: "x", count: 1100)))]) }

    func file(_ engine: SyncEngine) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: engine.snapshots.path(of: "posts")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func pending(_ engine: SyncEngine) throws -> [String] { try file(engine)["pending"] as? [String] ?? [] }

    func inode(_ engine: SyncEngine) throws -> UInt64 {
        try #require(try FileManager.default.attributesOfItem(atPath: engine.snapshots.path(of: "posts"))[.systemFileNumber] as? UInt64)
    }

    /// What the scheduler was asked to schedule.
    final class Requests: Sendable {
        let delays = Mutex<[Duration]>([])
        func withLock<T>(_ body: ([Duration]) -> T) -> T { delays.withLock { body($0) } }
    }

    /// An engine whose scheduler only notes what it was asked to schedule.
    func engine() throws -> (SyncEngine, Requests) {
        let (engine, _) = try temporaryEngine(in: directory)
        let scheduled = Requests()
        engine.shared.setWriteScheduler(rule) { name, delay in
            #expect(name == "posts")
            scheduled.delays.withLock { $0.append(delay) }
        }
        return (engine, scheduled)
    }

    @Test func aBurstOnALargeFileIsWrittenOnceWhenTheScheduledRewriteRuns() throws {
        let (engine, scheduled) = try engine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // No file yet: the first change is written at once.
        _ = try engine.put(record("a"), into: writable)
        #expect(try pending(engine) == ["a"])
        #expect(scheduled.withLock { $0 }.isEmpty)
        let first = try inode(engine)

        // The file is now over the limit: the next change is stored, its rewrite scheduled once, the file untouched.
        _ = try engine.put(record("b"), into: writable)
        _ = try engine.put(record("c"), into: writable)
        try engine.delete(id: "a", from: writable)
        #expect(scheduled.withLock { $0 } == [.milliseconds(250)], "one rewrite for the burst")
        #expect(try inode(engine) == first && pending(engine) == ["a"], "the file waits for the scheduled rewrite")
        let state = try engine.store.state(of: "posts", countingLocalView: true)
        #expect(state.cacheFileWriteScheduled && state.snapshotDirty)
        #expect(state.unwrittenRecordCount == nil, "a scheduled rewrite is not a failed write: put answers no 'unwritten'")
        #expect(state.pendingCount == 2, "the store has every change at once")

        // The scheduled rewrite shows every change made meanwhile, in one replacement.
        #expect(engine.writeScheduledCacheFile("posts"))
        #expect(try pending(engine) == ["b", "c"])
        #expect(try !engine.store.state(of: "posts").snapshotDirty)
        #expect(!engine.writeScheduledCacheFile("posts"), "nothing scheduled any more")

        // The next change after the rewrite schedules a new one.
        _ = try engine.put(record("d"), into: writable)
        #expect(scheduled.withLock { $0 }.count == 2)
    }

    @Test func aRewriteScheduledForAFileWrittenMeanwhileWritesNothing() throws {
        let (engine, scheduled) = try engine()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try engine.put(record("a"), into: writable)
        _ = try engine.put(record("b"), into: writable)
        #expect(scheduled.withLock { $0 }.count == 1)
        // A refresh publishes the file first (its listing commit, or the push's settling).
        try engine.publish("posts")
        let written = try inode(engine)
        #expect(try pending(engine) == ["a", "b"])
        #expect(!engine.writeScheduledCacheFile("posts"), "the file already shows everything")
        #expect(try inode(engine) == written)
    }

    @Test func withoutASchedulerEveryChangeIsWrittenAtOnce() throws {
        let (engine, _) = try temporaryEngine(in: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for id in ["a", "b", "c"] { _ = try engine.put(record(id), into: writable) }
        #expect(try pending(engine) == ["a", "b", "c"])
        #expect(try !engine.store.state(of: "posts").snapshotDirty)
    }
}
