/// XXH64, Yann Collet's fast non-cryptographic 64-bit hash (xxHash specification, "XXH64 algorithm"),
/// fed incrementally. syncd uses it to recognise its own cache files (docs/architecture.md, "The cache
/// file"): it detects accidental damage, not a deliberate forgery. Seed 0 throughout.
public struct XXHash64: Sendable {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var v1 = XXHash64.prime1 &+ XXHash64.prime2
    private var v2 = XXHash64.prime2
    private var v3: UInt64 = 0
    private var v4 = 0 &- XXHash64.prime1
    /// Bytes of an incomplete 32-byte stripe, waiting for the next `update`.
    private var pending: [UInt8] = []
    /// Bytes hashed so far.
    public private(set) var count: Int = 0

    /// A hasher that has seen no bytes.
    public init() {
        pending.reserveCapacity(32)
    }

    /// The hash of `bytes` in one call.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = XXHash64()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The hash of `bytes` in one call.
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// Adds `bytes` to the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        count += bytes.count
        var offset = 0
        if !pending.isEmpty {
            let take = min(32 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            offset = take
            guard pending.count == 32 else { return }
            pending.withUnsafeBytes { consumeStripe($0, at: 0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= 32 {
            consumeStripe(bytes, at: offset)
            offset += 32
        }
        if offset < bytes.count {
            pending.append(contentsOf: bytes[offset...])
        }
    }

    /// The hash of everything added so far.
    public func finalize() -> UInt64 {
        var hash: UInt64
        if count >= 32 {
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = XXHash64.prime5
        }
        hash &+= UInt64(count)
        pending.withUnsafeBytes { tail in
            var offset = 0
            while tail.count - offset >= 8 {
                hash ^= round(0, tail.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                hash = rotate(hash, 27) &* XXHash64.prime1 &+ XXHash64.prime4
                offset += 8
            }
            if tail.count - offset >= 4 {
                hash ^= UInt64(tail.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian) &* XXHash64.prime1
                hash = rotate(hash, 23) &* XXHash64.prime2 &+ XXHash64.prime3
                offset += 4
            }
            while offset < tail.count {
                hash ^= UInt64(tail[offset]) &* XXHash64.prime5
                hash = rotate(hash, 11) &* XXHash64.prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= XXHash64.prime2
        hash ^= hash >> 29
        hash &*= XXHash64.prime3
        hash ^= hash >> 32
        return hash
    }

    private mutating func consumeStripe(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        v1 = round(v1, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
        v2 = round(v2, bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian)
        v3 = round(v3, bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self).littleEndian)
        v4 = round(v4, bytes.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self).littleEndian)
    }

    private func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* XXHash64.prime2, 31) &* XXHash64.prime1
    }

    private func merge(_ hash: UInt64, _ value: UInt64) -> UInt64 {
        (hash ^ round(0, value)) &* XXHash64.prime1 &+ XXHash64.prime4
    }

    private func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }
}
