import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// `CacheFileOutput`: small writes are buffered, runs of 64 KiB or more go to the file directly, writeback
/// is started every 4 MiB; whatever the mix, the file holds the bytes in order, and its fingerprint carries
/// the hash the writer composed (docs/architecture.md, "The cache file").
@Suite("CacheFileOutput")
struct CacheFileOutputTests {
    /// Deterministic bytes (a linear congruential sequence), so a reordering or a lost run shows.
    func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    @Test func mixedWritesKeepTheirOrderAndTheFingerprintCarriesTheGivenHash() throws {
        let temporary = try TemporaryStore()
        let output = try CacheFileOutput(folder: temporary.folder, source: "mixed")
        // Sizes around the buffer (256 KiB) and the direct threshold (64 KiB), crossing 4 MiB of writeback steps.
        let sizes = [10, 65_535, 65_536, 3, 200_000, 262_144, 262_145, 1, 5_000_000, 70_000, 12]
        var expected: [UInt8] = []
        for (index, size) in sizes.enumerated() {
            let part = bytes(size, seed: UInt64(index + 1))
            try output.write(part)
            expected += part
        }
        let written = try output.finish(hash: 0x5eed)
        #expect(try output.install() == nil)
        let file = try #require(FileManager.default.contents(atPath: temporary.folder.path(of: "mixed")))
        #expect(file.count == expected.count && written.size == Int64(expected.count))
        #expect(Array(file) == expected, "the file holds every write, in order")
        #expect(written.hash == 0x5eed, "the writer's hash (CacheFileDigest), not one computed here")
        #expect(temporary.leftovers().isEmpty)
    }

    @Test func aDiscardedOutputLeavesNoFile() throws {
        let temporary = try TemporaryStore()
        let output = try CacheFileOutput(folder: temporary.folder, source: "gone")
        try output.write(bytes(300_000, seed: 9))
        output.discard()
        #expect(temporary.leftovers().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: temporary.folder.path(of: "gone")))
    }

    /// `finishFlushing`: the same file and fingerprint as `finish`, the flush on a descriptor of its own (none
    /// of the process's descriptors names the file once the flush is waited for and the file installed), and a
    /// `discard` while it runs harmless.
    @Test func aFlushInBackgroundGivesTheSameFileAndClosesItsDescriptor() throws {
        let temporary = try TemporaryStore()
        /// The files the process's descriptors name under the store's folder (other tests run meanwhile).
        let openHere = {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
            }.filter { $0.hasPrefix(temporary.folder.directory + "/") }
        }
        let output = try CacheFileOutput(folder: temporary.folder, source: "flushed")
        let expected = bytes(700_000, seed: 3)
        try output.write(expected)
        let (written, flush) = try output.finishFlushing(hash: 0xF1)
        try flush.wait()
        #expect(try output.install() == nil)
        #expect(openHere().isEmpty, "the output's and the flush's descriptors are closed")
        let file = try #require(FileManager.default.contents(atPath: temporary.folder.path(of: "flushed")))
        #expect(Array(file) == expected)
        #expect(written.size == Int64(expected.count) && written.hash == 0xF1)

        let dropped = try CacheFileOutput(folder: temporary.folder, source: "dropped")
        try dropped.write(bytes(300_000, seed: 4))
        let (_, pending) = try dropped.finishFlushing(hash: 1)
        dropped.discard()
        try pending.wait()
        #expect(!FileManager.default.fileExists(atPath: temporary.folder.path(of: "dropped")))
        #expect(temporary.leftovers().isEmpty)
        #expect(openHere().isEmpty)
    }

    /// A flush that fails is reported when waited for, with the file's path and the system's reason: here
    /// `fsync` of a pipe (EINVAL), standing in for a disk that refuses the data.
    @Test func aFailedFlushIsReportedWhenWaitedFor() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[1]) }
        let outcome = DiskFlush.Outcome()
        outcome.flush(ends[0])
        let flush = DiskFlush(path: "/var/cache/syncd/default/posts.json", outcome: outcome, thread: nil)
        let error = #expect(throws: StoreError.self) { try flush.wait() }
        guard case .cacheFileWrite(let path, let reason, let code) = error else {
            Issue.record("not a cache file error: \(String(describing: error))")
            return
        }
        #expect(path == "/var/cache/syncd/default/posts.json")
        #expect(reason == "flush /var/cache/syncd/default/posts.json to disk: Invalid argument")
        #expect(code == EINVAL)
    }
}
