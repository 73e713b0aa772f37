internal import Glibc
import SyncCore

/// Rebuilding the cache file for local changes by range copies (docs/architecture.md, "Storing listings"):
/// the chunks a change cannot touch are copied from the previous file with `copy_file_range(2)` and keep
/// their stored hashes; only the touched chunks are read (hash-checked) and written again.
extension ListingWriter {
    /// Appends the chunks `seqs` of the previous file as they are: `bytes` bytes at `offset` of its records
    /// section, `records` records, all of them in the file (untouched chunks hold no overlays). A delta copies
    /// nothing while no chunk before differed: the new file, if one is needed, copies that prefix when created.
    func copyChunks(from file: (fd: Int32, path: String), recordsStart: Int, _ seqs: Range<Int>, offset: Int, bytes: Int,
                    records: Int) throws(StoreError) {
        precondition(seqs.lowerBound == nextSeq, "chunks copied out of order")
        if output == nil && purpose != .delta { try diverge() }
        if let output {
            try output.copyRange(from: file.fd, sourcePath: file.path, offset: recordsStart + offset, count: bytes)
            for seq in seqs { digest.add(stored[seq].fileHash) }
        }
        store.workCounter?.copiedChunks += seqs.count
        nextSeq = seqs.upperBound
        listingBytes += bytes
        count += records
        fileRecords += records
        precededInFile = precededInFile || bytes > 0
    }

    /// Writes `bytes`, the chunk being closed, to the new file. For a delta that rewrites stored chunk
    /// `nextSeq` of a file it copies from, the whole blocks the chunk starts with that are the stored chunk's
    /// bytes (those before its first changed record) are range-copied from the current file instead, so that
    /// they stay shared where the file system can (both chunks start at a block boundary, `BlockAlignment`).
    func writeChunk(_ bytes: [UInt8], to output: CacheFileOutput) throws(StoreError) {
        let block = BlockAlignment.block
        guard purpose == .delta, let oldFile, nextSeq < stored.count, stored[nextSeq].fileBytes >= block, bytes.count >= block else {
            return try output.write(bytes)
        }
        let path = folder.path(of: source)
        let offset = oldFile.layout.recordsStart + stored[0..<nextSeq].reduce(0) { $0 + $1.fileBytes }
        let compared = min(bytes.count, stored[nextSeq].fileBytes)
        // The walk that re-emitted the chunk read it already (`keepOldChunk`); otherwise it is read now.
        if oldChunk.seq != nextSeq || oldChunk.bytes.count < compared {
            oldChunk.bytes.removeAll(keepingCapacity: true)
            oldChunk.bytes.append(contentsOf: repeatElement(0, count: compared))
            try readExactly(oldFile.fd, path: path, into: &oldChunk.bytes, at: offset)
            oldChunk.seq = nextSeq
        }
        let same = oldChunk.bytes.withUnsafeBytes { old in
            bytes.withUnsafeBytes { new in
                var same = 0
                while same + block <= compared && memcmp(old.baseAddress! + same, new.baseAddress! + same, block) == 0 { same += block }
                return same
            }
        }
        guard same > 0 else { return try output.write(bytes) }
        try output.copyRange(from: oldFile.fd, sourcePath: path, offset: offset, count: same)
        try output.write(Array(bytes[same...]))
    }

    /// Keeps the stored bytes of chunk `seq` as a delta's walk read them (checked against their hash), for
    /// `writeChunk` to compare the re-emitted chunk with, rather than read them again.
    func keepOldChunk(_ seq: Int, _ bytes: UnsafeRawBufferPointer) {
        oldChunk.seq = seq
        oldChunk.bytes.removeAll(keepingCapacity: true)
        oldChunk.bytes.append(contentsOf: bytes)
    }

    /// Bytes the new file got by `copy_file_range(2)` and by read/write fallback.
    var copiedBytes: (kernel: Int, readWrite: Int) { output?.copied ?? (0, 0) }
}

extension StateStore {
    /// The chunks of `source` a rebuild for `overlay` (the IDs with outbox entries) may change: those holding
    /// an overlaid entry now, and those the ID index names for an ID of `overlay` (all chunks are searched for
    /// them when the index cannot answer). Reads the index only, never the file.
    func touchedChunks(source: String, overlay: Set<RecordID>) throws -> Set<Int> {
        var touched: Set<Int> = []
        var unindexed: Set<RecordID> = []
        for id in overlay {
            if let seqs = try chunksHolding(source: source, id: id.key) { touched.formUnion(seqs) } else { unindexed.insert(id) }
        }
        // Every ID found by the index, and no chunk holds an overlaid entry: no chunk needs reading.
        if unindexed.isEmpty, try holdsNoOverlay(source: source) { return touched }
        workCounter?.overlayScans += 1
        let statement = try database.prepare("SELECT seq, data FROM chunks WHERE source = ?1 ORDER BY seq")
        try statement.bind(1, source)
        while try statement.step() {
            let seq = Int(statement.int64(0))
            if touched.contains(seq) { continue }
            if try statement.withBlob(1, { try RecordChunk.touches($0, ids: unindexed.isEmpty ? nil : unindexed) }) {
                touched.insert(seq)
            }
        }
        return touched
    }

    /// The source's count of commits that stored an overlaid entry (`ListingWriter.recordOverlays`).
    func overlayWrites(source: String) throws -> Int64 {
        let statement = try database.prepare("SELECT overlay_writes FROM sources WHERE name = ?1")
        try statement.bind(1, source)
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Whether the last commit of `source` recorded that no chunk holds an overlaid entry, for the cache file
    /// recorded now (`ListingWriter.recordOverlays`).
    func holdsNoOverlay(source: String) throws -> Bool {
        let statement = try database.prepare("""
            SELECT 1 FROM sources WHERE name = ?1 AND overlay_free_hash IS NOT NULL AND overlay_free_hash = snapshot_hash
            """)
        try statement.bind(1, source)
        return try statement.step()
    }

    /// The previous file of `source` opened for a rebuild by copies, when the store's layout of it is whole and
    /// block-aligned (`BlockAlignment`: a file written before the padding is rewritten whole, once), its status
    /// (size, inode, change time) is the one recorded, as for a 304's trust without reading (docs/architecture.md,
    /// "The cache file"), and its header and tail still hash, with the stored chunk hashes, to its fingerprint;
    /// nil otherwise: the rebuild then reads every chunk, each hash-checked, so a file changed outside syncd is
    /// found damaged instead of copied.
    func copyableFile(source: String, chunks: [ChunkLayout]) throws -> (fd: Int32, path: String, layout: FileLayout)? {
        guard let layout = try fileLayout(source: source), let expected = layout.fingerprint,
              BlockAlignment.isAligned(layout, chunks: chunks) else { return nil }
        let file = try openIndexedFile(source: source)
        do {
            guard let current = fingerprint(of: file.fd, hash: expected.hash), current == expected,
                  try composedHash(fd: file.fd, path: file.path, size: Int(expected.size), layout: layout, chunks: chunks,
                                   chunkHash: { chunk, _ in chunk.fileHash }) == expected.hash else {
                Glibc.close(file.fd)
                return nil
            }
        } catch {
            Glibc.close(file.fd)
            throw error
        }
        return (file.fd, file.path, layout)
    }

    /// Feeds `writer` (a `.rebuild`) the listing of `source`: untouched chunks copied from the previous file,
    /// touched ones read and re-emitted with the local changes applied. False when the previous file cannot
    /// be copied from (nothing was fed: the caller feeds every record instead).
    func feedByCopying(_ writer: ListingWriter, source: String) throws -> Bool {
        let chunks = writer.stored
        guard !chunks.isEmpty, let file = try copyableFile(source: source, chunks: chunks) else { return false }
        defer { Glibc.close(file.fd) }
        let plan = ChunkCopyPlan(chunks: chunks, touched: try touchedChunks(source: source, overlay: writer.overlaidIDs))
        writer.overlaysFound = true
        var seq = 0
        while seq < chunks.count {
            switch plan.step(at: seq, precededInNewFile: writer.precededInFile) {
            case .reemit(let at):
                try walkListing(source: source, first: at, last: at) { record in
                    try writer.add(id: record.id, idIsInteger: record.idIsInteger, version: record.version, body: record.body)
                    return true
                }
                workCounter?.reemittedChunks += 1
                try writer.finishChunk(at)
                seq = at + 1
            case .copy(let seqs, let offset, let bytes, let records):
                try writer.copyChunks(from: (file.fd, file.path), recordsStart: file.layout.recordsStart, seqs,
                                      offset: offset, bytes: bytes, records: records)
                seq = seqs.upperBound
            }
        }
        return true
    }
}
