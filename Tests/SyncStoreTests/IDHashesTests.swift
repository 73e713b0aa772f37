import Testing
@testable import SyncStore

/// The buckets of ID hashes the duplicate check sorts (docs/architecture.md, "Storing listings").
@Suite("IDHashes")
struct IDHashesTests {
    @Test func repeatedHashesAreFoundInAnyBucketAndNoOthers() {
        var hashes = IDHashes()
        let top: UInt64 = 0xff00_0000_0000_0001
        for hash in [top, 1, 0x0100_0000_0000_0005, 3, top, 3, 3, 2, 0x0100_0000_0000_0006] {
            hashes.insert(hash)
        }
        #expect(hashes.repeated() == [top, 3])
        #expect(hashes.repeated().isEmpty, "the buckets are emptied by the check")
    }

    @Test func agreesWithSortingEverythingAtOnce() {
        // A deterministic spread over every bucket, with every 97th value repeated.
        var generator = SplitMix(state: 42)
        var all: [UInt64] = []
        for index in 0..<20_000 {
            all.append(index % 97 == 0 && !all.isEmpty ? all[index / 2] : generator.next())
        }
        var hashes = IDHashes()
        for hash in all { hashes.insert(hash) }
        let sorted = all.sorted()
        var expected: Set<UInt64> = []
        for index in 1..<sorted.count where sorted[index] == sorted[index - 1] { expected.insert(sorted[index]) }
        #expect(!expected.isEmpty)
        #expect(hashes.repeated() == expected)
    }
}

/// SplitMix64: a small deterministic generator for test data.
private struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
