// ByteBlock: 64 bytes of a listing classified at once with SIMD compares, so that a long string is
// skipped a block at a time; the word loops of the scanner (RecordScanner+Lexer.swift,
// RecordScanner+Members.swift) find the byte that needs attention within the block.
//
// Code generation (Swift 6.3.1, x86-64 baseline SSE2, checked with objdump on `-O` builds):
// - Every SIMD operand carries an explicit type. Written as `v .== SIMD64(repeating: 0x22)`,
//   the protocol's generic `.==` is chosen and each lane is compared in a scalar loop through
//   the stack (the scanner became ten times slower); with `let quote: Vector = ...` the
//   concrete overloads are chosen: four `pcmpeqb` (or `pminub` + `pcmpeqb`, `pcmpgtb`) per
//   compare, `por` per `.|`.
// - `&` and `^` on `SIMD64<UInt8>` stayed scalar loops even so; on `SIMD8<UInt64>` they are
//   `pand`/`por`.
// - Swift has no movemask. Gathering the 64 lanes into a bit mask took about fifty vector
//   instructions (shift-ORs and `packuswb`), as many as the compares; so a block only says whether
//   it holds a stop (the lane words ORed together), and the word loop that follows finds it
//   (docs/benchmarks.md, "First sync against the transfer floor: what changed").

/// Which 64-byte blocks of a listing hold a byte that a string scan stops at.
enum ByteBlock {
    /// The number of bytes in a block.
    static let size = 64

    /// A block's bytes as one SIMD value.
    typealias Vector = SIMD64<UInt8>
    /// The lane mask of `Vector` comparisons.
    typealias Lanes = SIMDMask<SIMD64<Int8>>

    /// The start of the first whole block from `start` on that holds a byte a string scan stops at (the
    /// stop lies in the 64 bytes from there), or, where there is none before the last partial block of
    /// `base[0..<n]`, where that block begins. Not inlined: the scanner's string loop stays small enough to
    /// be inlined itself.
    @inline(never)
    static func skipString(_ base: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var i = start
        while i &+ size <= n {
            if hasStringStop(UnsafeRawPointer(base + i)) { return i }
            i &+= size
        }
        return i
    }

    /// Whether the block at `pointer` (no alignment needed) holds a byte that a string scan stops at: the
    /// lanes of `stringStopLanes` ORed together as words.
    @inline(__always)
    static func hasStringStop(_ pointer: UnsafeRawPointer) -> Bool {
        let words: SIMD8<UInt64> = unsafeBitCast(stringStopLanes(pointer), to: SIMD8<UInt64>.self)
        let half: SIMD4<UInt64> = words.lowHalf | words.highHalf
        let quarter: SIMD2<UInt64> = half.lowHalf | half.highHalf
        return quarter[0] | quarter[1] != 0
    }

    /// The lanes of the block at `pointer` that a string scan stops at: `"`, `\`, a control byte (below
    /// 0x20: an error in a string) or a byte of at least 0x80 (a UTF-8 sequence to validate).
    @inline(__always)
    static func stringStopLanes(_ pointer: UnsafeRawPointer) -> Lanes {
        let v: Vector = pointer.loadUnaligned(as: Vector.self)
        let quote: Vector = Vector(repeating: UInt8(ascii: "\""))
        let backslash: Vector = Vector(repeating: UInt8(ascii: "\\"))
        // Read as signed, bytes of at least 0x80 are negative: one compare finds them and the control bytes.
        let space: SIMD64<Int8> = SIMD64<Int8>(repeating: 0x20)
        let signed: SIMD64<Int8> = unsafeBitCast(v, to: SIMD64<Int8>.self)
        let quotes: Lanes = v .== quote
        let backslashes: Lanes = v .== backslash
        let controlOrNonASCII: Lanes = signed .< space
        return quotes .| backslashes .| controlOrNonASCII
    }
}
