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
        // The hashes of 20,000 IDs (spread over every bucket), every 97th ID repeated.
        var all: [UInt64] = []
        for index in 0..<20_000 {
            all.append(RecordChunk.hash(String(index % 97 == 0 && index > 0 ? index / 2 : index)))
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
