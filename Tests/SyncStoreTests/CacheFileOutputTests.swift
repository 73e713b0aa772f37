import Foundation
import Synchronization
import Testing
@testable import SyncStore
import SyncCore

/// `CacheFileOutput`: small writes are buffered, runs of 64 KiB or more go to the file directly, the file is
/// flushed in steps every 4 MiB; whatever the mix, the file holds the bytes in order, and its fingerprint carries
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
        // Sizes around the buffer (256 KiB) and the direct threshold (64 KiB), crossing a 4 MiB flush step.
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

    /// A syncer whose `gated` calls (by number, from 1) stop until the test lets them go (`pass`), so that the
    /// test knows a step's flush ran on the flusher's thread without waiting on time; each call records the
    /// file's size then, and `failing` calls fail with EIO.
    final class GatedSyncer: @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let sizes = Mutex<[Int]>([])
        let gated: Set<Int>
        let failing: Set<Int>

        init(gated: Set<Int> = [1, 2], failing: Set<Int> = []) {
            self.gated = gated
            self.failing = failing
        }

        var syncer: FileSyncer {
            FileSyncer { fd in
                var info = stat()
                fstat(fd, &info)
                let call = self.sizes.withLock { sizes in
                    sizes.append(Int(info.st_size))
                    return sizes.count
                }
                if self.gated.contains(call) {
                    self.entered.signal()
                    self.release.wait()
                }
                if self.failing.contains(call) {
                    errno = EIO
                    return -1
                }
                return fsync(fd)
            }
        }

        /// Waits for the next gated call and lets it go. A call that never comes fails the test after a minute
        /// rather than hang it (a bound for a broken build, not a measure of time).
        func pass() throws {
            try #require(entered.wait(timeout: .now() + 60) == .success, "the flush was never made")
            release.signal()
        }
    }

    /// A large file is flushed in steps while it is written, on a thread of its own (so the final flush has only
    /// the last step's bytes left; docs/benchmarks.md, "Flushing the cache file while it arrives"): the first
    /// flush comes once `flushStep` bytes are written, before the file is finished, and the final one after.
    @Test func aLargeFileIsFlushedInStepsWhileItIsWritten() throws {
        let temporary = try TemporaryStore()
        let gate = GatedSyncer()
        let output = try CacheFileOutput(folder: temporary.folder, source: "large")
        output.syncer = gate.syncer
        let step = CacheFileOutput.flushStep
        let first = bytes(step - 1, seed: 5)
        try output.write(first)
        #expect(output.flusher == nil, "no thread for a file below one step")
        let second = bytes(100_000, seed: 6)
        try output.write(second)
        try gate.pass()
        #expect(gate.sizes.withLock { $0 } == [step - 1 + 100_000], "a step flushed the file as written so far")
        let third = bytes(200_000, seed: 7)
        try output.write(third)
        let (written, flush) = try output.finishFlushing(hash: 0x57E9)
        try gate.pass()
        try flush.wait()
        #expect(gate.sizes.withLock { $0 }.count == 2, "the final flush after the step")
        #expect(gate.sizes.withLock { $0 }.last == first.count + second.count + third.count)
        #expect(try output.install() == nil)
        let file = try #require(FileManager.default.contents(atPath: temporary.folder.path(of: "large")))
        #expect(Array(file) == first + second + third)
        #expect(written.size == Int64(file.count))
        #expect(temporary.leftovers().isEmpty)
    }

    /// A step's flush that fails fails the file: the kernel reports a writeback error to one `fsync` only, so the
    /// final flush, waited for or made at once (`finish`), reports the step's; a discarded file is removed.
    @Test func aStepThatFailsFailsTheFile() throws {
        let temporary = try TemporaryStore()
        for waited in [true, false] {
            let gate = GatedSyncer(gated: [1], failing: [1])
            let output = try CacheFileOutput(folder: temporary.folder, source: "failing")
            output.syncer = gate.syncer
            try output.write(bytes(CacheFileOutput.flushStep, seed: 8))
            try gate.pass()
            try output.write(bytes(1_000, seed: 9))
            let failedWithEIO: (any Error) -> Bool = { error in
                guard case StoreError.cacheFileWrite(let path, let reason, let code) = error else { return false }
                return path == temporary.folder.path(of: "failing") && code == EIO
                    && reason == "flush \(path) to disk: Input/output error"
            }
            if waited {
                let (_, flush) = try output.finishFlushing(hash: 1)
                #expect(performing: { try flush.wait() }, throws: failedWithEIO)
            } else {
                #expect(performing: { _ = try output.finish(hash: 1) }, throws: failedWithEIO)
            }
            #expect(gate.sizes.withLock { $0 }.count == 1, "no flush after the failed step")
            output.discard()
            #expect(temporary.leftovers().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: temporary.folder.path(of: "failing")))
        }
    }

    /// A file discarded after a step's flush began: the flush ends, the thread and its descriptor are gone, and
    /// no file is left.
    @Test func aFileDiscardedWhileFlushingInStepsLeavesNothing() throws {
        let temporary = try TemporaryStore()
        let gate = GatedSyncer(gated: [1])
        let output = try CacheFileOutput(folder: temporary.folder, source: "dropped")
        output.syncer = gate.syncer
        try output.write(bytes(CacheFileOutput.flushStep + 10, seed: 10))
        try gate.pass()
        output.discard()
        #expect(output.flusher == nil)
        #expect(temporary.leftovers().isEmpty)
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }.filter { $0.hasPrefix(temporary.folder.directory + "/") }
        #expect(open.isEmpty, "the flusher's descriptor is closed")
    }
}
