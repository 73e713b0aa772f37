/// A record of the server's listing as the store serves it: its body comes from the cache file, or,
/// for a record with a local change, from the index entry that keeps the server's copy.
public struct StoredRecord {
    /// The record's ID (canonical text).
    public let id: String
    /// True when the server wrote the ID as a JSON number.
    public let idIsInteger: Bool
    /// The `VersionField` value, if any.
    public let version: String?
    /// The server's JSON bytes, exactly as received; valid only during the callback.
    public let body: UnsafeRawBufferPointer
}

/// One entry of a listing's index (docs/architecture.md, "Storing listings"), as decoded from a chunk.
struct IndexEntry {
    /// The record's ID (canonical text).
    let id: String
    /// True when the server wrote the ID as a JSON number.
    let idIsInteger: Bool
    /// The `VersionField` value, if any.
    let version: String?
    /// Bytes the record occupies in the cache file (its separator apart); nil when it is not in the file
    /// (a local removal).
    let fileLength: Int?
    /// The server's body, kept in the index when the record has a local change (the file holds the
    /// local body, or nothing); nil otherwise: the file holds the server's body.
    let serverBody: UnsafeRawBufferPointer?
}

/// One entry of a chunk as stored, framed but not decoded (`RecordChunk.forEachRaw`): what a delta copies
/// unchanged for a record it does not name.
struct RawIndexEntry {
    /// The whole entry, as `RecordChunk.append` wrote it.
    let bytes: UnsafeRawBufferPointer
    /// The ID's UTF-8 bytes.
    let id: UnsafeRawBufferPointer
    /// `RecordChunk.integerID`, `hasVersion`, `overlaid`, `inFile`.
    let flags: UInt8
    let version: UnsafeRawBufferPointer?
    let fileLength: Int?
    let serverBody: UnsafeRawBufferPointer?

    /// The entry with its ID and version as strings.
    var decoded: IndexEntry {
        IndexEntry(id: String(decoding: id, as: UTF8.self), idIsInteger: flags & RecordChunk.integerID != 0,
                   version: version.map { String(decoding: $0, as: UTF8.self) }, fileLength: fileLength, serverBody: serverBody)
    }
}

/// The framing of index entries inside one chunk blob: for each record
///
///     varint idLength, id bytes, u8 flags (bit 0: integer ID, bit 1: has version, bit 2: overlaid,
///     bit 3: in file), [varint versionLength, version bytes], [varint fileLength if bit 3],
///     [varint serverBodyLength, server body if bit 2]
///
/// Varints are unsigned LEB128. A chunk holds `RecordChunk.capacity` records (the last one of a listing
/// fewer), so two listings that agree on their first N records produce identical first N/capacity chunks.
/// A delta removes records from the chunks holding them and keeps the chunks' numbers (the ID index names
/// chunks), so after one a chunk may hold fewer, even none; positions are found by summing `chunks.records`.
/// Bodies are not here: they are in the cache file (`chunks.file_bytes` bytes per chunk, separators and the
/// spaces that pad the chunk to whole blocks included, `BlockAlignment`), except the server's copy of a record
/// with a local change.
enum RecordChunk {
    /// Records per chunk: about 100 KiB of cache file for typical 200-byte records.
    static let capacity = 512

    static let integerID: UInt8 = 1
    static let hasVersion: UInt8 = 2
    static let overlaid: UInt8 = 4
    static let inFile: UInt8 = 8

    /// Appends one entry. `fileLength` nil: not in the file; `serverBody` non-nil: overlaid.
    static func append(id: String, idIsInteger: Bool, version: String?, fileLength: Int?, serverBody: UnsafeRawBufferPointer?,
                       to buffer: inout [UInt8]) {
        var id = id
        id.withUTF8 { idBytes in
            guard var version else {
                return append(id: UnsafeRawBufferPointer(idBytes), idIsInteger: idIsInteger, version: nil,
                              fileLength: fileLength, serverBody: serverBody, to: &buffer)
            }
            version.withUTF8 { versionBytes in
                append(id: UnsafeRawBufferPointer(idBytes), idIsInteger: idIsInteger, version: UnsafeRawBufferPointer(versionBytes),
                       fileLength: fileLength, serverBody: serverBody, to: &buffer)
            }
        }
    }

    /// Appends one entry from the UTF-8 bytes of its ID and version (nil: no version).
    static func append(id: UnsafeRawBufferPointer, idIsInteger: Bool, version: UnsafeRawBufferPointer?, fileLength: Int?,
                       serverBody: UnsafeRawBufferPointer?, to buffer: inout [UInt8]) {
        appendVarint(id.count, to: &buffer)
        buffer.append(contentsOf: id)
        var flags: UInt8 = idIsInteger ? integerID : 0
        if version != nil { flags |= hasVersion }
        if serverBody != nil { flags |= overlaid }
        if fileLength != nil { flags |= inFile }
        buffer.append(flags)
        if let version {
            appendVarint(version.count, to: &buffer)
            buffer.append(contentsOf: version)
        }
        if let fileLength { appendVarint(fileLength, to: &buffer) }
        if let serverBody {
            appendVarint(serverBody.count, to: &buffer)
            buffer.append(contentsOf: serverBody)
        }
    }

    /// Decodes every entry of `chunk`. A damaged chunk throws rather than reading out of bounds.
    static func forEach(in chunk: UnsafeRawBufferPointer, _ body: (IndexEntry) throws -> Void) throws {
        try forEachRaw(in: chunk) { try body($0.decoded) }
    }

    /// Frames every entry of `chunk` without decoding it (no string is made). A damaged chunk throws rather
    /// than reading out of bounds.
    static func forEachRaw(in chunk: UnsafeRawBufferPointer, _ body: (RawIndexEntry) throws -> Void) throws {
        var reader = ChunkReader(chunk: chunk)
        while !reader.atEnd {
            let start = reader.position
            let id = try reader.slice(try reader.varint())
            let flags = try reader.slice(1)[0]
            let version = flags & hasVersion != 0 ? try reader.slice(try reader.varint()) : nil
            let fileLength = flags & inFile != 0 ? try reader.varint() : nil
            let serverBody = flags & overlaid != 0 ? try reader.slice(try reader.varint()) : nil
            if fileLength == nil && serverBody == nil {
                throw StoreError.corrupt(path: "chunk", reason: "index entry \"\(String(decoding: id, as: UTF8.self))\" is neither in the cache file nor overlaid")
            }
            try body(RawIndexEntry(bytes: UnsafeRawBufferPointer(rebasing: chunk[start..<reader.position]), id: id, flags: flags,
                                   version: version, fileLength: fileLength, serverBody: serverBody))
        }
    }

    /// Appends `value` as an unsigned LEB128 varint.
    static func appendVarint(_ value: Int, to buffer: inout [UInt8]) {
        var v = UInt64(max(0, value))
        while v >= 0x80 {
            buffer.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        buffer.append(UInt8(v))
    }

    /// A 64-bit hash of an ID's bytes (FNV-1a, then a SplitMix64 finaliser to spread the bits).
    /// Used only to find candidate duplicates, which are then compared exactly.
    static func hash(_ id: String) -> UInt64 {
        var id = id
        return id.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// `hash(_:)` of an ID's UTF-8 bytes.
    static func hash(_ id: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id {
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

/// Reads the framing of one chunk blob; throws rather than reading out of bounds.
struct ChunkReader {
    let chunk: UnsafeRawBufferPointer
    private var offset = 0
    private let truncated = StoreError.corrupt(path: "chunk", reason: "index framing is truncated")

    init(chunk: UnsafeRawBufferPointer) { self.chunk = chunk }

    /// Whether every byte was read.
    var atEnd: Bool { offset >= chunk.count }

    /// The offset of the next byte to read.
    var position: Int { offset }

    /// The next unsigned LEB128 varint.
    @inline(__always)
    mutating func varint() throws -> Int {
        var value = 0
        var shift = 0
        while true {
            guard offset < chunk.count, shift < 63 else { throw truncated }
            let byte = chunk[offset]
            offset += 1
            value |= Int(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// The next `count` bytes.
    @inline(__always)
    mutating func slice(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= chunk.count - offset else { throw truncated }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + count])
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
        var scratch: [UInt64] = []
        for index in buckets.indices { IDHashes.sortEntries(&buckets[index], scratch: &scratch) }
        sorted = true
    }

    /// The longest run of entries with the same top byte that is sorted by insertion.
    static let insertionRun = 32

    /// Sorts `entries` ascending, as `sort()` would, in about a third of the time on a first sync's commit
    /// (docs/benchmarks.md, "Third pass"): one counting pass on the entries' top byte into `scratch` (hash
    /// bits 55–48, evenly spread), then an insertion sort of each run sharing it, a few entries long.
    /// A run longer than `insertionRun` (IDs chosen to collide) gets the standard sort, so no listing can
    /// make it quadratic. `scratch` is reused from bucket to bucket.
    static func sortEntries(_ entries: inout [UInt64], scratch: inout [UInt64]) {
        let count = entries.count
        guard count > insertionRun else {
            entries.sort()
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: repeatElement(0, count: count))
        entries.withUnsafeBufferPointer { source in
            scratch.withUnsafeMutableBufferPointer { target in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: 257) { ends in
                    ends.initialize(repeating: 0)
                    // ends[d + 1] counts the entries of top byte d; summed, ends[d] is where byte d's run starts.
                    for entry in source { ends[Int(entry >> 56) &+ 1] &+= 1 }
                    for digit in 1...256 { ends[digit] &+= ends[digit &- 1] }
                    for entry in source {
                        let digit = Int(entry >> 56)
                        target[ends[digit]] = entry
                        ends[digit] &+= 1
                    }
                    // Now ends[d] is where byte d's run ends.
                    var start = 0
                    for digit in 0..<256 {
                        let end = ends[digit]
                        if end &- start > insertionRun {
                            var run = UnsafeMutableBufferPointer(rebasing: target[start..<end])
                            run.sort()
                        } else {
                            insertionSort(target, from: start, to: end)
                        }
                        start = end
                    }
                }
            }
        }
        swap(&entries, &scratch)
    }

    /// Sorts `buffer[start..<end]` by insertion.
    private static func insertionSort(_ buffer: UnsafeMutableBufferPointer<UInt64>, from start: Int, to end: Int) {
        var next = start &+ 1
        while next < end {
            let entry = buffer[next]
            var position = next
            while position > start && buffer[position &- 1] > entry {
                buffer[position] = buffer[position &- 1]
                position &-= 1
            }
            buffer[position] = entry
            next &+= 1
        }
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
