internal import CSQLite
import SyncCore

/// One record a delta brings: the server's bytes of the record object, as the scanner emitted them.
public struct DeltaRecord: Equatable, Sendable {
    /// The record's ID, compared with the listing's by its bytes (`RecordID`).
    public var id: String
    /// Whether the ID is a JSON number.
    public var idIsInteger: Bool
    /// The record's `VersionField` value, if any.
    public var version: String?
    /// The record's JSON.
    public var body: [UInt8]

    /// Creates a delta record.
    public init(id: String, idIsInteger: Bool, version: String?, body: [UInt8]) {
        self.id = id
        self.idIsInteger = idIsInteger
        self.version = version
        self.body = body
    }
}

/// Applying a delta to the stored listing (docs/architecture.md, "Incremental pull: applying a delta"): the
/// listing's writer fed the stored listing with the delta's records substituted, dropped and appended, the
/// chunks no delta record and no local change touches copied from the current file.
extension StateStore {
    /// Applies one delta to the stored listing of `source` and publishes the cache file: each upsert whose ID the
    /// listing holds replaces that record in place (its position kept); an upsert of a new ID is added after the
    /// listing's records (before the local creations the writer appends), in the delta's order; each removal
    /// drops the record (an ID not held is ignored). Records the delta does not mention stay as they are, and
    /// local changes are applied over the result as a listing's commit applies them (sent changes it shows taken
    /// are settled). Only the chunks holding an upserted, removed or locally changed ID are read and written
    /// again; the others are range-copied from the current file, and only once a chunk before them differs.
    ///
    /// The index, the change log, `metadata` (url, validators, `time` as the save and success time, counts) and
    /// `metadata.checkpoint` commit in one transaction, then the file is renamed into place (`pending_rename`, as
    /// `ListingWriter.commit`). A delta that changes no byte of the file writes none and returns `unchanged`; the
    /// checkpoint and the success time are stored all the same (the save time stays).
    ///
    /// IDs within `upserts` must be unique and disjoint from `removals` (`.duplicateID`, nothing changed), and a
    /// listing must be stored (`.cacheFileMismatch`, which makes the engine fetch the whole listing).
    public func applyDelta(source: String, upserts: [DeltaRecord], removals: [String], metadata: ListingMetadata) throws(StoreError) -> ListingOutcome {
        do {
            let delta = try DeltaChanges(upserts: upserts, removals: removals)
            let state = try state(of: source)
            guard let layout = try fileLayout(source: source), layout.fingerprint != nil, try !legacySources().contains(source) else {
                throw StoreError.cacheFileMismatch(path: folder(source: source),
                                                   reason: "the store holds no listing of \(source) to apply a delta to")
            }
            // Nothing to apply, and the file shows the store's view: no chunk to look at.
            if upserts.isEmpty && removals.isEmpty && !state.snapshotDirty && layout.pendingRename == nil {
                try recordEmptyDelta(source: source, metadata)
                return ListingOutcome(count: state.recordCount, unchanged: true)
            }
            let writer = try beginWriting(source: source, header: CacheHeader(savedAt: metadata.time, etag: metadata.etag), purpose: .delta)
            do {
                try feedDelta(writer, source: source, delta)
            } catch {
                writer.rollback()
                throw error
            }
            return try writer.commit(metadata)
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .sqlite(SQLiteError(code: SQLITE_ERROR, operation: "apply a delta to \(source)", message: "\(error)"))
        }
    }

    /// An empty delta over a current file: the validators, the success time and the checkpoint, in one transaction.
    private func recordEmptyDelta(source: String, _ metadata: ListingMetadata) throws(StoreError) {
        try write("record a delta of \(source)") {
            let statement = try database.prepare("""
                UPDATE sources SET url = ?2, etag = ?3, last_modified = ?4, last_success = ?5, last_attempt = ?5, last_error = NULL
                WHERE name = ?1
                """)
            try statement.bind(1, source)
            try statement.bind(2, metadata.url)
            try statement.bind(3, metadata.etag)
            try statement.bind(4, metadata.lastModified)
            try statement.bind(5, metadata.time)
            try statement.step()
            try storeCheckpoint(metadata.checkpoint, source: source)
        }
    }

    /// Feeds `writer` (a `.delta`) the stored listing of `source` with `delta` applied, in the order of
    /// `ChunkCopyPlan`: touched chunks read (hash-checked) and re-emitted with their records replaced or dropped,
    /// the others copied; then the new records. When the current file cannot be trusted whole, every chunk is
    /// read, as a rebuild does. Chunks keep their numbers (one a delta empties stays, empty), so the ID index,
    /// which names chunks, is updated only for the records removed and added.
    private func feedDelta(_ writer: ListingWriter, source: String, _ delta: DeltaChanges) throws {
        let chunks = writer.stored
        let file = writer.oldFile
        var touched = file == nil ? Set(chunks.indices)
            : try touchedChunks(source: source, overlay: writer.overlaidIDs.union(delta.upsertIndex.keys).union(delta.removals))
        writer.overlaysFound = true
        var plan = ChunkCopyPlan(chunks: chunks, touched: touched)
        // Only these IDs' records can differ from the stored ones: the change log compares them alone.
        let mayDiffer = Set(delta.upserts.map { RecordChunk.hash($0.id) } + delta.removals.map { RecordChunk.hash($0.key) }
                            + writer.overlaidIDs.map { RecordChunk.hash($0.key) })
        writer.diff.only = mayDiffer
        var found: Set<Int> = []
        let last = chunks.count - 1
        // Where each chunk begins in the file, after `recordsStart`: a re-emitted chunk is read from there.
        var offsets = [0]
        offsets.reserveCapacity(chunks.count)
        for chunk in chunks.dropLast() { offsets.append(offsets[offsets.count - 1] + chunk.fileBytes) }
        var seq = 0
        while seq < chunks.count {
            var step = plan.step(at: seq, precededInNewFile: writer.precededInFile)
            // Every chunk that may hold a delta ID was read before a copy reaching the end: new records follow,
            // and a last chunk with room takes them rather than leave a small one behind.
            if case .copy(let seqs, _, _, _) = step, seqs.upperBound == chunks.count, found.count < delta.upserts.count,
               chunks[last].records < RecordChunk.capacity {
                touched.insert(last)
                plan = ChunkCopyPlan(chunks: chunks, touched: touched)
                step = plan.step(at: seq, precededInNewFile: writer.precededInFile)
            }
            switch step {
            case .reemit(let at):
                writer.readChunks[at] = writer.readChunks[at] ?? []
                try walkEntries(source: source, first: at, last: at, offset: offsets[at],
                                chunkBytes: { seq, bytes in writer.keepOldChunk(seq, bytes) }) { entry, inFile in
                    let hash = RecordChunk.hash(entry.id)
                    if let inFile, entry.flags & RecordChunk.overlaid == 0, !mayDiffer.contains(hash) {
                        // Not in the delta, no local change: its index entry and bytes again, undecoded.
                        try writer.addStored(entry: entry, body: inFile)
                        return true
                    }
                    guard let body = entry.serverBody ?? inFile else { return true }
                    let decoded = entry.decoded
                    let record = StoredRecord(id: decoded.id, idIsInteger: decoded.idIsInteger, version: decoded.version, body: body)
                    guard mayDiffer.contains(hash) else {
                        // An overlay no local change stands behind any more: the server's bytes, the overlay gone.
                        try writer.add(id: record.id, idIsInteger: record.idIsInteger, version: record.version, body: record.body)
                        return true
                    }
                    let id = RecordID(record.id)
                    writer.readChunks[at, default: []].append((id, ListingDiff.digest(record.body, idIsInteger: record.idIsInteger)))
                    if delta.removals.contains(id) {
                        writer.removedIDHashes.append((RecordChunk.hash(record.id), at))
                    } else if let index = delta.upsertIndex[id] {
                        found.insert(index)
                        let upsert = delta.upserts[index]
                        try upsert.body.withUnsafeBytes {
                            try writer.add(id: upsert.id, idIsInteger: upsert.idIsInteger, version: upsert.version, body: $0)
                        }
                    } else {
                        try writer.add(id: record.id, idIsInteger: record.idIsInteger, version: record.version, body: record.body)
                    }
                    return true
                }
                workCounter?.reemittedChunks += 1
                // The last chunk stays open for the new records (emptied, it is dropped at the commit).
                if at != last { try writer.finishChunk(at) }
                seq = at + 1
            case .copy(let seqs, let offset, let bytes, let records):
                guard let file else { throw StoreError.cacheFileMismatch(path: folder(source: source), reason: "no file to copy chunks from") }
                try writer.copyChunks(from: (file.fd, folder(source: source)), recordsStart: file.layout.recordsStart, seqs,
                                      offset: offset, bytes: bytes, records: records)
                seq = seqs.upperBound
            }
        }
        for (index, upsert) in delta.upserts.enumerated() where !found.contains(index) {
            writer.idHashes.insert(RecordChunk.hash(upsert.id), seq: writer.nextSeq)
            try upsert.body.withUnsafeBytes { try writer.add(id: upsert.id, idIsInteger: upsert.idIsInteger, version: upsert.version, body: $0) }
        }
    }
}

/// A delta's records by ID (their bytes), checked against its contract: the engine resolves a record the delta
/// brings more than once (the last wins), so an ID twice, or both changed and removed, is a fault, refused
/// before anything is touched.
private struct DeltaChanges {
    let upserts: [DeltaRecord]
    /// The index in `upserts` of each upserted ID.
    let upsertIndex: [RecordID: Int]
    let removals: Set<RecordID>

    /// Throws `.duplicateID` with the position in the delta (its upserts, then its removals) of the repeat.
    init(upserts: [DeltaRecord], removals: [String]) throws(StoreError) {
        var index: [RecordID: Int] = [:]
        for (position, record) in upserts.enumerated() {
            guard index.updateValue(position, forKey: RecordID(record.id)) == nil else { throw .duplicateID(record.id, index: position) }
        }
        var removed: Set<RecordID> = []
        for (position, id) in removals.enumerated() {
            let key = RecordID(id)
            guard index[key] == nil else { throw .duplicateID(id, index: upserts.count + position) }
            removed.insert(key)
        }
        self.upserts = upserts
        self.upsertIndex = index
        self.removals = removed
    }
}
