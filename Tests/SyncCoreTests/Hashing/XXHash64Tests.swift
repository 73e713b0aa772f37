import Testing
import SyncCore

@Suite("XXHash64")
struct XXHash64Tests {
    /// Reference values from the xxHash project (xxhsum, python-xxhash), seed 0.
    @Test(arguments: [
        ("", 0xEF46_DB37_51D8_E999 as UInt64),
        ("a", 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0x44BC_2CF5_AD77_0999),
        ("Nobody inspects the spammish repetition", 0xFBCE_A83C_8A37_8BF1),
    ])
    func matchesReferenceValues(text: String, expected: UInt64) {
        #expect(XXHash64.hash(Array(text.utf8)) == expected)
    }

    @Test func incrementalUpdatesMatchOneCall() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = XXHash64.hash(bytes)
        for split in [1, 7, 31, 32, 33, 64, 999] {
            var hasher = XXHash64()
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + split)
                bytes[offset..<end].withUnsafeBytes { hasher.update($0) }
                offset = end
            }
            #expect(hasher.finalize() == whole, "pieces of \(split)")
            #expect(hasher.count == bytes.count)
        }
    }

    @Test func oneChangedByteChangesTheHash() {
        var bytes = Array(repeating: UInt8(ascii: "x"), count: 4096)
        let before = XXHash64.hash(bytes)
        bytes[2048] = 0
        #expect(XXHash64.hash(bytes) != before)
    }
}
