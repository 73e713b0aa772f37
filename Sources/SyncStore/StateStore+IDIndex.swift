internal import CSQLite

/// The ID index (docs/architecture.md, "Storing listings"): per source, 256 rows of sorted `IDHashes`
/// entries (8 bytes each, little-endian), written with each listing that changed, so that finding one
/// record by ID (`syncctl get`, and every `put` and `delete`, which look up the server's copy) reads one
/// small row and one chunk instead of scanning the listing.
///
/// The index is valid only for the listing it was written with: `sources.id_index_stamp` holds that
/// listing's `saved_at` and record count. A listing committed by a syncd that does not know the index
/// (going back to an older version and forward again) leaves the stamp behind, and lookups fall back to
/// scanning until the next listing rewrites it.
extension StateStore {
    /// The stamp of the listing saved at `savedAt` with `count` records.
    static func idIndexStamp(savedAt: String, count: Int) -> String { "\(savedAt)|\(count)" }

    /// Replaces the ID index of `source` with `hashes` (sorted here), stamped `stamp`; inside the listing's
    /// transaction. An `unchanged` listing whose index already carries `stamp` keeps it. (A changed one is
    /// always indexed: two listings saved in the same second with as many records have the same stamp.)
    func writeIDIndex(source: String, hashes: inout IDHashes, chunks: Int, stamp: String, unchanged: Bool) throws {
        let current = try database.prepare("SELECT id_index_stamp FROM sources WHERE name = ?1")
        try current.bind(1, source)
        if unchanged, try current.step(), current.string(0) == stamp { return }
        let clear = try database.prepare("DELETE FROM id_index WHERE source = ?1")
        try clear.bind(1, source)
        try clear.step()
        let valid = chunks <= IDHashes.maxChunks
        if valid {
            hashes.sort()
            let insert = try database.prepare("INSERT INTO id_index (source, bucket, entries) VALUES (?1, ?2, ?3)")
            for (bucket, entries) in hashes.buckets.enumerated() where !entries.isEmpty {
                insert.reset()
                try insert.bind(1, source)
                try insert.bind(2, Int64(bucket))
                // Stored little-endian, the order of every machine Swift on Linux runs on.
                try entries.withUnsafeBytes { try insert.bind(3, borrowedBlob: $0) }
                try insert.step()
            }
        }
        let mark = try database.prepare("UPDATE sources SET id_index_stamp = ?2 WHERE name = ?1")
        try mark.bind(1, source)
        try mark.bind(2, valid ? stamp : nil)
        try mark.step()
    }

    /// Updates the ID index of `source` for a delta, inside its transaction: the entries of the records it
    /// removed (`removed`: ID hash and chunk) go, those of the records it added (`added`) come, and only the
    /// buckets they fall in are rewritten; the stamp becomes `stamp`. The index must have been the listing's
    /// before (stamped for `previous`); otherwise, or past `IDHashes.maxChunks` chunks, it is dropped and lookups
    /// scan until the next full listing writes it.
    func updateIDIndex(source: String, removing removed: [(hash: UInt64, seq: Int)], adding added: inout IDHashes, chunks: Int,
                       previous: SourceState, stamp: String) throws {
        let current = try database.prepare("SELECT id_index_stamp FROM sources WHERE name = ?1")
        try current.bind(1, source)
        let held = try current.step() ? current.string(0) : nil
        current.reset()
        guard let savedAt = previous.savedAt, held == StateStore.idIndexStamp(savedAt: savedAt, count: previous.recordCount),
              chunks <= IDHashes.maxChunks else {
            try run("DELETE FROM id_index WHERE source = ?1", source)
            try run("UPDATE sources SET id_index_stamp = NULL WHERE name = ?1", source)
            return
        }
        var changes: [Int: (remove: [UInt64], add: [UInt64])] = [:]
        for record in removed {
            let (bucket, entry) = IDHashes.entry(record.hash, seq: record.seq)
            changes[bucket, default: ([], [])].remove.append(entry)
        }
        for (bucket, entries) in added.buckets.enumerated() where !entries.isEmpty {
            changes[bucket, default: ([], [])].add += entries
        }
        let read = try database.prepare("SELECT entries FROM id_index WHERE source = ?1 AND bucket = ?2")
        let write = try database.prepare("INSERT OR REPLACE INTO id_index (source, bucket, entries) VALUES (?1, ?2, ?3)")
        let drop = try database.prepare("DELETE FROM id_index WHERE source = ?1 AND bucket = ?2")
        for (bucket, change) in changes.sorted(by: { $0.key < $1.key }) {
            read.reset()
            try read.bind(1, source)
            try read.bind(2, Int64(bucket))
            var entries: [UInt64] = []
            if try read.step() {
                let bytes = read.bytes(0)
                guard bytes.count % 8 == 0 else {
                    throw StoreError.corrupt(path: path, reason: "ID index row \(bucket) of \(source) is \(bytes.count) bytes, not whole 8-byte entries")
                }
                entries = bytes.withUnsafeBytes { raw in (0..<raw.count / 8).map { StateStore.entry($0, in: raw) } }
            }
            read.reset()
            for entry in change.remove {
                if let index = entries.firstIndex(of: entry) { entries.remove(at: index) }
            }
            entries += change.add
            entries.sort()
            let statement = entries.isEmpty ? drop : write
            statement.reset()
            try statement.bind(1, source)
            try statement.bind(2, Int64(bucket))
            // Stored little-endian, as `writeIDIndex` writes them.
            if !entries.isEmpty {
                let littleEndian = entries.map(\.littleEndian)
                try littleEndian.withUnsafeBytes { try statement.bind(3, borrowedBlob: $0) }
            }
            try statement.step()
        }
        let mark = try database.prepare("UPDATE sources SET id_index_stamp = ?2 WHERE name = ?1")
        try mark.bind(1, source)
        try mark.bind(2, stamp)
        try mark.step()
    }

    /// The chunks that may hold the record of `source` whose ID is `id`, in order; nil when the index
    /// cannot answer (never written, written for another listing, or a file from before the index).
    /// Throws `StoreError.corrupt` for an index row that is not whole entries.
    func chunksHolding(source: String, id: String) throws -> [Int]? {
        let state: Statement
        do {
            state = try database.prepare("SELECT id_index_stamp, saved_at, record_count FROM sources WHERE name = ?1")
        } catch {
            // A file the index was never added to (opened read-only before the daemon opened it).
            if error.isCorruption { throw error }
            return nil
        }
        try state.bind(1, source)
        guard try state.step(), let stamp = state.string(0), let savedAt = state.string(1),
              stamp == StateStore.idIndexStamp(savedAt: savedAt, count: Int(state.int64(2))) else { return nil }
        let (bucket, probe) = IDHashes.entry(RecordChunk.hash(id), seq: 0)
        let row = try database.prepare("SELECT entries FROM id_index WHERE source = ?1 AND bucket = ?2")
        try row.bind(1, source)
        try row.bind(2, Int64(bucket))
        guard try row.step() else { return [] }
        let entries = row.bytes(0)
        guard entries.count % 8 == 0 else {
            throw StoreError.corrupt(path: path, reason: "ID index row \(bucket) of \(source) is \(entries.count) bytes, not whole 8-byte entries")
        }
        return entries.withUnsafeBytes { StateStore.seqs(matching: probe, in: $0) }
    }

    /// The chunk numbers of the entries of one sorted index row whose hash part equals `probe`'s.
    static func seqs(matching probe: UInt64, in raw: UnsafeRawBufferPointer) -> [Int] {
        let count = raw.count / 8
        let key = IDHashes.key(probe)
        // The first entry whose hash part is not below the probe's, then every equal one.
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if IDHashes.key(entry(middle, in: raw)) < key { low = middle + 1 } else { high = middle }
        }
        var seqs: [Int] = []
        while low < count, IDHashes.key(entry(low, in: raw)) == key {
            seqs.append(Int(entry(low, in: raw) & 0xff_ffff))
            low += 1
        }
        return seqs
    }

    /// Entry `index` of an index row (little-endian).
    private static func entry(_ index: Int, in raw: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
    }

    /// Where the record of `source` whose ID is `id` stands in the listing: the chunks the ID index names are
    /// decoded (never the file) until one holds it; `.unknown` when the index cannot answer. `chunkStarts` (from
    /// `chunkStarts(source:)`, for many lookups) spares summing the records of the chunks before it.
    func listingPosition(source: String, id: String, chunkStarts: [Int]? = nil) throws -> ListingPosition {
        guard let seqs = try chunksHolding(source: source, id: id) else { return .unknown }
        let statement = try database.prepare("SELECT data FROM chunks WHERE source = ?1 AND seq = ?2")
        for seq in seqs {
            statement.reset()
            try statement.bind(1, source)
            try statement.bind(2, Int64(seq))
            guard try statement.step() else { continue }
            var index = 0
            var found: Int?
            try statement.withBlob(0) { blob in
                try RecordChunk.forEach(in: blob) { entry in
                    workCounter?.indexEntriesVisited += 1
                    if found == nil && entry.id.isSameID(as: id) { found = index }
                    index += 1
                }
            }
            if let found {
                if let chunkStarts, seq < chunkStarts.count { return .at(chunkStarts[seq] + found) }
                return .at(try recordsBefore(chunk: seq, source: source) + found)
            }
        }
        return .absent
    }

    /// Calls `body` with the record of `source` whose ID is `id`; returns false if there is none. Reads
    /// the chunks the ID index names, or scans the listing when the index cannot answer.
    public func record(source: String, id: String, _ body: (StoredRecord) throws -> Void) throws -> Bool {
        var found = false
        func visit(_ record: StoredRecord) throws {
            if !found && record.id.isSameID(as: id) {
                found = true
                try body(record)
            }
        }
        guard let seqs = try chunksHolding(source: source, id: id) else {
            try forEachRecord(source: source, visit)
            return found
        }
        for seq in seqs where !found {
            // One chunk's index row and its range of the cache file.
            try walkListing(source: source, first: seq, last: seq) { record in
                try visit(record)
                return !found
            }
        }
        return found
    }
}

/// Where a record stands in a source's listing (`StateStore.listingPosition`).
enum ListingPosition: Equatable {
    /// At this position (0 is the first record).
    case at(Int)
    /// Not in the listing.
    case absent
    /// The ID index cannot answer.
    case unknown
}
