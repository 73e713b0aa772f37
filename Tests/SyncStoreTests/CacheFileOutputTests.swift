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
}
