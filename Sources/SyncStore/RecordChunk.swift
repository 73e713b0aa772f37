/// A record as the store keeps it.
public struct StoredRecord {
    /// The record's ID (canonical text).
    public let id: String
    /// True when the server wrote the ID as a JSON number.
    public let idIsInteger: Bool
    /// The `VersionField` value, if any.
    public let version: String?
    /// The record's JSON bytes, exactly as received; valid only during the callback.
    public let body: UnsafeRawBufferPointer
}

/// The framing of records inside one chunk blob: for each record, little-endian
///
///     u32 idLength, id bytes, u8 flags (bit 0: integer ID, bit 1: has version),
///     [u32 versionLength, version bytes], u32 bodyLength, body bytes
///
/// A chunk holds `RecordChunk.capacity` records (the last one of a listing fewer), so two listings
/// that agree on their first N records produce identical first N/capacity chunks.
enum RecordChunk {
    /// Records per chunk: about 100 KiB for typical 200-byte records.
    static let capacity = 512

    static func append(id: String, idIsInteger: Bool, version: String?, body: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        var id = id
        id.withUTF8 { bytes in
            appendLength(bytes.count, to: &buffer)
            buffer.append(contentsOf: bytes)
        }
        buffer.append((idIsInteger ? 1 : 0) | (version != nil ? 2 : 0))
        if var version {
            version.withUTF8 { bytes in
                appendLength(bytes.count, to: &buffer)
                buffer.append(contentsOf: bytes)
            }
        }
        appendLength(body.count, to: &buffer)
        buffer.append(contentsOf: body)
    }

    /// Decodes every record of `chunk`. A damaged chunk throws rather than reading out of bounds.
    static func forEach(in chunk: UnsafeRawBufferPointer, _ body: (StoredRecord) throws -> Void) throws {
        var offset = 0
        func length() throws -> Int {
            guard offset + 4 <= chunk.count else { throw StoreError.corrupt(path: "chunk", reason: "record framing is truncated") }
            let value = Int(chunk[offset]) | Int(chunk[offset + 1]) << 8 | Int(chunk[offset + 2]) << 16 | Int(chunk[offset + 3]) << 24
            offset += 4
            guard offset + value <= chunk.count else { throw StoreError.corrupt(path: "chunk", reason: "record framing is truncated") }
            return value
        }
        func slice(_ count: Int) -> UnsafeRawBufferPointer {
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + count])
        }
        while offset < chunk.count {
            let id = String(decoding: slice(try length()), as: UTF8.self)
            guard offset < chunk.count else { throw StoreError.corrupt(path: "chunk", reason: "record framing is truncated") }
            let flags = chunk[offset]
            offset += 1
            let version = flags & 2 != 0 ? String(decoding: slice(try length()), as: UTF8.self) : nil
            let bytes = slice(try length())
            try body(StoredRecord(id: id, idIsInteger: flags & 1 != 0, version: version, body: bytes))
        }
    }

    private static func appendLength(_ value: Int, to buffer: inout [UInt8]) {
        let v = UInt32(truncatingIfNeeded: value)
        buffer.append(UInt8(v & 0xff))
        buffer.append(UInt8(v >> 8 & 0xff))
        buffer.append(UInt8(v >> 16 & 0xff))
        buffer.append(UInt8(v >> 24))
    }

    /// A 64-bit hash of an ID's bytes (FNV-1a, then a SplitMix64 finaliser to spread the bits).
    /// Used only to find candidate duplicates, which are then compared exactly.
    static func hash(_ id: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 30
        hash &*= 0xbf58_476d_1ce4_e5b9
        hash ^= hash >> 27
        hash &*= 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}

/// The hashes of a listing's IDs with the chunk each record is in: the duplicate check's candidates and,
/// stored, the ID index (`StateStore.record(source:id:)`; docs/architecture.md, "Storing listings").
///
/// An entry is 8 bytes: bits 63–24 are bits 55–16 of the ID's `RecordChunk.hash`, bits 23–0 the chunk's
/// `seq`; bits 63–56 of the hash choose one of 256 buckets. So 48 bits of the hash tell IDs apart (a
/// million records give a false candidate about once in 500 listings, confirmed or cleared by comparing
/// IDs), and 2^24 chunks of 512 records are addressable. Buckets grow and sort one by one: one flat array
/// of a million entries briefly needs 12 MiB while it grows and 4 more while the standard sort merges.
struct IDHashes {
    /// Chunks addressable in an entry.
    static let maxChunks = 1 << 24
    private(set) var buckets = [[UInt64]](repeating: [], count: 256)
    private var sorted = false

    /// The bucket of `hash` and its entry for chunk `seq`.
    static func entry(_ hash: UInt64, seq: Int) -> (bucket: Int, entry: UInt64) {
        (Int(truncatingIfNeeded: hash >> 56), (hash << 8) & ~UInt64(0xff_ffff) | UInt64(truncatingIfNeeded: seq) & 0xff_ffff)
    }

    /// The part of an entry that comes from the hash.
    static func key(_ entry: UInt64) -> UInt64 { entry >> 24 }

    /// Adds the record whose ID hashes to `hash`, in chunk `seq`.
    mutating func insert(_ hash: UInt64, seq: Int) {
        let (bucket, entry) = IDHashes.entry(hash, seq: seq)
        buckets[bucket].append(entry)
        sorted = false
    }

    /// Sorts every bucket (once).
    mutating func sort() {
        guard !sorted else { return }
        for index in buckets.indices { buckets[index].sort() }
        sorted = true
    }

    /// The hashes (`RecordChunk.hash(id) >> 16`) added more than once.
    mutating func repeated() -> Set<UInt64> {
        sort()
        var suspects: Set<UInt64> = []
        for (number, bucket) in buckets.enumerated() {
            var position = 1
            while position < bucket.count {
                if IDHashes.key(bucket[position]) == IDHashes.key(bucket[position - 1]) {
                    suspects.insert(UInt64(number) << 40 | IDHashes.key(bucket[position]))
                }
                position += 1
            }
        }
        return suspects
    }
}
