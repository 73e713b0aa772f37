import SyncCore

/// Which chunks of the cache file a local change rewrites and which it copies from the previous file
/// (docs/architecture.md, "Storing listings", local changes).
///
/// A chunk is **touched** when one of its index entries is overlaid now (the file holds a local body or
/// nothing for it) or will be (its ID has an entry in the outbox): only a touched chunk's records can change.
/// An untouched chunk holds exactly the server's bodies, all in the file (`records` of them), and is copied
/// byte for byte with its stored hash, unless the separator before its first record changes: the first
/// record of the file is preceded by `"\n"`, every later one by `",\n"`, so an untouched chunk whose
/// predecessors held bytes before and hold none now (a removal emptied them), or the reverse, is rewritten.
/// Consecutive copied chunks form one range, copied with one `copy_file_range(2)`. Chunks are padded to
/// whole blocks (`BlockAlignment`), so the range lies at block boundaries in both files and a file system
/// with shared extents shares it instead of copying it.
struct ChunkCopyPlan {
    /// One step of the rebuild, in file order.
    enum Step: Equatable {
        /// Read chunk `seq` (hash-checked) and write it again with the local changes applied.
        case reemit(seq: Int)
        /// Copy chunks `seqs` as they are: `bytes` bytes at `offset` of the records section, `records` records.
        case copy(seqs: Range<Int>, offset: Int, bytes: Int, records: Int)
    }

    /// The stored chunks, in order.
    let chunks: [ChunkLayout]
    /// The chunks whose records may change.
    let touched: Set<Int>
    /// Offset of each chunk in the records section of the previous file (the bytes of the chunks before it).
    private let offsets: [Int]

    /// A plan for `chunks` of which `touched` may change.
    init(chunks: [ChunkLayout], touched: Set<Int>) {
        self.chunks = chunks
        self.touched = touched
        var offsets: [Int] = []
        offsets.reserveCapacity(chunks.count)
        var offset = 0
        for chunk in chunks {
            offsets.append(offset)
            offset += chunk.fileBytes
        }
        self.offsets = offsets
    }

    /// The step at chunk `seq` (`seq < chunks.count`), when the new file already holds records before it
    /// or not (`precededInNewFile`).
    func step(at seq: Int, precededInNewFile: Bool) -> Step {
        let precededInOldFile = offsets[seq] > 0
        guard !touched.contains(seq), precededInOldFile == precededInNewFile, chunks[seq].fileBytes > 0 else { return .reemit(seq: seq) }
        var end = seq + 1
        var records = chunks[seq].records
        // After a copied chunk both files hold records before the next: only `touched` stops the range.
        while end < chunks.count, !touched.contains(end), chunks[end].fileBytes > 0 {
            records += chunks[end].records
            end += 1
        }
        let bytes = (offsets.last ?? 0) + (chunks.last?.fileBytes ?? 0)
        let stop = end < chunks.count ? offsets[end] : bytes
        return .copy(seqs: seq..<end, offset: offsets[seq], bytes: stop - offsets[seq], records: records)
    }

    /// Every step, given the bytes each re-emitted chunk turns out to hold (the rebuild learns it as it
    /// goes; tests give it).
    func steps(reemittedBytes: (Int) -> Int) -> [Step] {
        var steps: [Step] = []
        var seq = 0
        var preceded = false
        while seq < chunks.count {
            let step = step(at: seq, precededInNewFile: preceded)
            steps.append(step)
            switch step {
            case .reemit(let at):
                preceded = preceded || reemittedBytes(at) > 0
                seq = at + 1
            case .copy(let seqs, _, _, _):
                preceded = true
                seq = seqs.upperBound
            }
        }
        return steps
    }
}

extension RecordChunk {
    /// Whether any entry of `chunk` is overlaid or, when `ids` is given, has one of those IDs; reads the
    /// flags without decoding the entries into strings. A damaged chunk throws.
    static func touches(_ chunk: UnsafeRawBufferPointer, ids: Set<RecordID>?) throws -> Bool {
        var reader = ChunkReader(chunk: chunk)
        while !reader.atEnd {
            let id = try reader.slice(try reader.varint())
            let flags = try reader.slice(1)[0]
            if flags & overlaid != 0 { return true }
            if let ids, ids.contains(RecordID(String(decoding: id, as: UTF8.self))) { return true }
            if flags & hasVersion != 0 { _ = try reader.slice(try reader.varint()) }
            if flags & inFile != 0 { _ = try reader.varint() }
        }
        return false
    }
}
