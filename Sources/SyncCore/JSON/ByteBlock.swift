// ByteBlock: 64 bytes of a listing classified at once with SIMD compares, as a bit mask
// (bit k stands for byte k), so that the scanner can jump from one byte that needs
// attention to the next instead of testing each byte (RecordScanner+Lexer.swift).
//
// Code generation (Swift 6.3.1, x86-64 baseline SSE2, checked with objdump on `-O` builds):
// - Every SIMD operand carries an explicit type. Written as `v .== SIMD64(repeating: 0x22)`,
//   the protocol's generic `.==` is chosen and each lane is compared in a scalar loop through
//   the stack (the scanner became ten times slower); with `let quote: Vector = ...` the
//   concrete overloads are chosen: four `pcmpeqb` (or `pminub` + `pcmpeqb`, `pcmpgtb`) per
//   compare, `por` per `.|`.
// - `&` and `^` on `SIMD64<UInt8>` stayed scalar loops even so; on `SIMD8<UInt64>` they are
//   `pand`/`por`/`psrlq`.
// - Swift has no movemask. `bits(_:)` reads the lane mask as eight `UInt64`s, keeps bit k of
//   byte k (an AND with 0x8040201008040201), folds each word's bytes into its low byte with
//   three shift-ORs, and gathers the eight low bytes, which LLVM lowers to `packuswb`: about
//   fifty vector instructions and no multiply. (Multiplying each word by 0x0102040810204080
//   instead was lowered to emulated 64-bit vector multiplies, three times the instructions.)

/// Bit masks of the bytes of a 64-byte block that the scanner stops at.
enum ByteBlock {
    /// The number of bytes in a block.
    static let size = 64

    /// A block's bytes as one SIMD value.
    typealias Vector = SIMD64<UInt8>
    /// The lane mask of `Vector` comparisons.
    typealias Lanes = SIMDMask<SIMD64<Int8>>

    /// The first byte from `start` on that a string scan stops at, looking at whole blocks only: where
    /// there is none before the last partial block of `base[0..<n]`, where to go on byte by byte.
    /// Not inlined: the scanner's string loop stays small enough to be inlined itself.
    @inline(never)
    static func skipString(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var i = start
        while i &+ size <= n {
            let stops = stringStops(UnsafeRawPointer(base + i))
            if stops != 0 { return i &+ stops.trailingZeroBitCount }
            i &+= size
        }
        return i
    }

    /// The bytes of the block at `pointer` (no alignment needed) that a string scan stops at:
    /// `"`, `\`, a control byte (below 0x20: an error in a string) or a byte of at least 0x80
    /// (a UTF-8 sequence to validate).
    @inline(__always)
    static func stringStops(_ pointer: UnsafeRawPointer) -> UInt64 {
        let v: Vector = pointer.loadUnaligned(as: Vector.self)
        let quote: Vector = Vector(repeating: UInt8(ascii: "\""))
        let backslash: Vector = Vector(repeating: UInt8(ascii: "\\"))
        let controlLimit: Vector = Vector(repeating: 0x1F)
        let zero: SIMD64<Int8> = SIMD64<Int8>(repeating: 0)
        let signed: SIMD64<Int8> = unsafeBitCast(v, to: SIMD64<Int8>.self)
        let quotes: Lanes = v .== quote
        let backslashes: Lanes = v .== backslash
        let control: Lanes = v .<= controlLimit
        let nonASCII: Lanes = signed .< zero
        let stops: Lanes = quotes .| backslashes .| control .| nonASCII
        return bits(stops)
    }

    /// The lanes of `mask` as bits, lane k at bit k.
    @inline(__always)
    static func bits(_ mask: Lanes) -> UInt64 {
        let weights: SIMD8<UInt64> = SIMD8<UInt64>(repeating: 0x8040_2010_0804_0201)
        var words: SIMD8<UInt64> = unsafeBitCast(mask, to: SIMD8<UInt64>.self)
        words = words & weights
        let by32: SIMD8<UInt64> = words &>> 32
        words = words | by32
        let by16: SIMD8<UInt64> = words &>> 16
        words = words | by16
        let by8: SIMD8<UInt64> = words &>> 8
        words = words | by8
        let bytes: Vector = unsafeBitCast(words, to: Vector.self)
        let gathered = SIMD8<UInt8>(
            bytes[0], bytes[8], bytes[16], bytes[24], bytes[32], bytes[40], bytes[48], bytes[56]
        )
        return UInt64(littleEndian: unsafeBitCast(gathered, to: UInt64.self))
    }
}
