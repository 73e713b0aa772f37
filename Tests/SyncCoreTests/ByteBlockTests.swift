// Tests of ByteBlock: the SIMD masks of 64 bytes at a time against a byte-by-byte reading,
// with the bytes that matter at the edges of lanes, words and blocks.

@testable import SyncCore
import Testing

/// The string stops of `bytes[start..<start + 64]` computed byte by byte.
private func scalarStringStops(_ bytes: [UInt8], from start: Int = 0) -> UInt64 {
    var mask: UInt64 = 0
    for k in 0..<ByteBlock.size {
        let b = bytes[start + k]
        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 || b >= 0x80 {
            mask |= 1 << UInt64(k)
        }
    }
    return mask
}

/// The string stops of `bytes[start..<start + 64]` from `ByteBlock.stringStopLanes`, lane k at bit k; checks
/// that `hasStringStop` agrees.
private func stringStops(_ bytes: [UInt8], from start: Int = 0, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> UInt64 {
    let (lanes, any) = bytes.withUnsafeBytes {
        (ByteBlock.stringStopLanes($0.baseAddress! + start), ByteBlock.hasStringStop($0.baseAddress! + start))
    }
    var mask: UInt64 = 0
    for k in 0..<ByteBlock.size where lanes[k] {
        mask |= 1 << UInt64(k)
    }
    #expect(any == (mask != 0), "hasStringStop", sourceLocation: sourceLocation)
    return mask
}

@Suite("ByteBlock")
struct ByteBlockTests {
    @Test func plainBytesStopNothing() {
        #expect(stringStops(Array(repeating: UInt8(ascii: "a"), count: 64)) == 0)
        // Every byte that needs no attention in a string, over all lanes.
        let plain = (0x20..<0x80).map(UInt8.init).filter { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        for shift in 0..<plain.count {
            let block = (0..<64).map { plain[($0 + shift) % plain.count] }
            #expect(stringStops(block) == 0)
        }
    }

    /// One special byte at each lane, including both lanes of every word edge (7|8, 31|32, 63).
    @Test(arguments: [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x0A, 0x1F, 0x80, 0xC3, 0xFF])
    func oneStopAtEachLane(_ special: UInt8) {
        for lane in 0..<64 {
            var block = Array(repeating: UInt8(ascii: "x"), count: 64)
            block[lane] = special
            #expect(stringStops(block) == 1 << UInt64(lane), "byte 0x\(String(special, radix: 16)) at lane \(lane)")
        }
    }

    /// The neighbours of each class boundary (0x1F|0x20, 0x21|0x22|0x23, 0x5B|0x5C|0x5D, 0x7F|0x80) stop exactly
    /// when a byte-by-byte reading says so, in every lane.
    @Test func everyByteValueInEveryLane() {
        let values = (0..<256).map(UInt8.init)
        for rotation in stride(from: 0, to: 256, by: 5) {
            let bytes = (0..<(256 + 64)).map { values[($0 + rotation) % 256] }
            for start in stride(from: 0, through: 256, by: 64) {
                #expect(stringStops(bytes, from: start) == scalarStringStops(bytes, from: start), "rotation \(rotation), start \(start)")
            }
        }
    }

    /// Lane k stands for byte k in mixed patterns (several stops per word, all of one word).
    @Test func lanesKeepTheirOrder() {
        var random = SplitMix64Jitter(seed: 7)
        let alphabet: [UInt8] = [UInt8(ascii: "a"), UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x09, 0xE2, UInt8(ascii: " ")]
        for _ in 0..<500 {
            let block = (0..<64).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            #expect(stringStops(block) == scalarStringStops(block))
        }
        var allOfWordThree = Array(repeating: UInt8(ascii: "a"), count: 64)
        for lane in 24..<32 { allOfWordThree[lane] = UInt8(ascii: "\"") }
        #expect(stringStops(allOfWordThree) == 0xFF << 24)
    }

    /// `skipString` stops at the first whole block that holds a stop, wherever in it the stop lies.
    @Test func skipStringFindsTheFirstBlockWithAStop() {
        var bytes = Array(repeating: UInt8(ascii: "a"), count: 200)
        bytes[69] = UInt8(ascii: "\"")  // in the second block from 0
        bytes[130] = UInt8(ascii: "\\")
        bytes.withUnsafeBufferPointer { p in
            #expect(ByteBlock.skipString(p.baseAddress!, from: 0, count: 200) == 64)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 69, count: 200) == 69)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 6, count: 200) == 6)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 5, count: 200) == 69)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 70, count: 200) == 70)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 67, count: 200) == 67)
        }
        bytes[69] = UInt8(ascii: "a")
        // The stop is the last byte of the second block from 3, and the first byte of the third block from 2.
        bytes.withUnsafeBufferPointer { p in
            #expect(ByteBlock.skipString(p.baseAddress!, from: 3, count: 200) == 67)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 2, count: 200) == 130)
        }
    }

    /// Where no whole block is left, `skipString` stops at the last partial block and leaves it to the caller.
    @Test func skipStringLeavesTheLastPartialBlock() {
        var bytes = Array(repeating: UInt8(ascii: "a"), count: 100)
        bytes[90] = UInt8(ascii: "\"")
        bytes.withUnsafeBufferPointer { p in
            #expect(ByteBlock.skipString(p.baseAddress!, from: 0, count: 100) == 64)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 40, count: 100) == 40)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 36, count: 100) == 36)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 26, count: 100) == 90)
            #expect(ByteBlock.skipString(p.baseAddress!, from: 0, count: 63) == 0)
        }
    }
}
