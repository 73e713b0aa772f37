internal import Glibc
import SyncCore
internal import SyncSystem

/// Writes one listing of a source (syncd(8) GUARANTEES 3): the index into the store and the bodies into
/// a new cache file, which replace the old ones whole (docs/architecture.md, "Storing listings").
///
/// Each record is looked up in the source's outbox (loaded once): the file gets the server's body, the
/// local body, or nothing for a local removal, and the index entry keeps the server's body inline when
/// the two differ. Records are framed into chunks of `RecordChunk.capacity`; a chunk equal to the stored
/// one (entries, file bytes and their hash) is neither staged nor, while every chunk before it was equal
/// too, written: the new file is created at the first difference, and the identical prefix copied into it
/// from the old file, each chunk checked against its hash. A listing equal to the stored one, locally
/// created records and trailer included, writes nothing at all.
///
/// `commit` flushes the new file, then in one short transaction moves the staged chunks, checks for
/// duplicate IDs and records the new layout with `pending_rename`, then renames the file into place and
/// clears `pending_rename`: the store is never ahead of the file (a failure before the commit leaves both
/// as they were). Either `commit` or `rollback` must be called exactly once.
public final class ListingWriter {
    /// What the listing is for.
    enum Purpose {
        /// A listing the server sent: validators and counts are stored with it.
        case refresh
        /// The stored listing again, for new local changes (`StateStore.rebuildCacheFile`).
        case rebuild
        /// A schema-1 listing (`StateStore.migrateLegacyListing`); its `v1_chunks` rows go in the same transaction.
        case migration
        /// The stored listing with a delta applied (`StateStore.applyDelta`): validators, counts and the checkpoint
        /// are stored with it, as with a listing the server sent; the untouched chunks are copied, lazily, from the
        /// current file (ListingWriter+Copy).
        case delta

        /// What the server sent: its validators, counts and checkpoint are stored, sent changes it shows taken
        /// are settled, and the records it changed are logged.
        var fromServer: Bool { self == .refresh || self == .delta }
        /// Every record passes through the writer in its final chunk, and the ID index is written whole.
        var indexesEveryRecord: Bool { self == .refresh || self == .migration }
    }

    let store: StateStore
    let source: String
    let folder: CacheFolder
    let purpose: Purpose
    private let header: [UInt8]
    /// The latest outbox entry of each record with local changes, and the order they were first made in
    /// (keyed by the IDs' bytes: `RecordID`).
    private(set) var overlay: [RecordID: OutboxRecord] = [:]
    private var madeOrder: [RecordID] = []
    private var seenOverlaid: Set<RecordID> = []
    /// Records whose changes were all sent and that this listing shows taken (present for a create or update,
    /// absent for a removal): settled by it, as `SyncEngine.confirmSent` does right after the commit, so the
    /// file shows the server's copy now instead of once more after the settling.
    private var settledIDs: Set<RecordID> = []
    /// The outbox as this writer applied it.
    public let outboxApplied: [OutboxRecord]
    /// The source's outbox stamp read just before the outbox (nil: no row yet): recorded with the file, so a
    /// later rebuild knows what changed since (StateStore+AppendCreates). A change between the two reads only
    /// makes the stamp look older, which sends that rebuild the whole way.
    private let outboxStamp: Int64?
    let stored: [ChunkLayout]
    /// The current cache file when its bytes may be reused (`openTrustedFile`).
    private(set) var oldFile: (fd: Int32, layout: FileLayout)?
    /// The source's `overlay_writes` when the writer began: a commit that stored an overlay since then may have
    /// put one in a chunk this writer did not look at.
    let overlayWrites: Int64
    /// Whether this writer stored an overlaid entry (a record shown with its local change).
    private(set) var wroteOverlay = false
    /// Whether every chunk this writer does not write again is known to hold no overlaid entry: it writes every
    /// chunk (a listing, a migration, a rebuild or delta fed record by record), or `touchedChunks` found the
    /// overlaid ones, which it re-emits. Only then may its commit record the source as holding no overlay.
    var overlaysFound: Bool
    /// The stored bytes of one chunk of `oldFile` (`keepOldChunk`, `writeChunk`); seq -1: none yet.
    var oldChunk: (seq: Int, bytes: [UInt8]) = (-1, [])
    var output: CacheFileOutput?
    /// The new file's content hash so far (`CacheFileDigest`): header, chunk hashes, tail.
    var digest = CacheFileDigest()
    private var chunkData: [UInt8] = []
    private var chunkFile: [UInt8] = []
    private var inChunk = 0
    var nextSeq = 0
    var precededInFile = false
    var listingBytes = 0
    private var staged = false
    /// The chunks staged (the others are equal to the stored ones as they were when the listing began).
    private(set) var stagedSeqs: Set<Int> = []
    /// The records of the staged chunks, for the change log (ListingWriter+Changes).
    var diff = ListingDiff()
    /// True when `commit` found that local changes rewrote the index and file while the listing was
    /// fetched: nothing was committed; fetching the listing again succeeds.
    public private(set) var overtaken = false
    private var finished = false
    private var inTransaction = false
    /// The ID hashes of the records added, by chunk: every record's for a listing, the new records' for a delta.
    var idHashes = IDHashes()
    /// The ID hashes and chunks of the records a delta removed (`StateStore.updateIDIndex`).
    var removedIDHashes: [(hash: UInt64, seq: Int)] = []
    /// A delta: the stored records of each chunk it read to write again, by chunk, with their change-log digests
    /// (`ListingDiff.digest`), so that the change log does not read those chunks a second time (`measureChanges`).
    var readChunks: [Int: [(id: RecordID, hash: UInt64)]] = [:]
    private let stageChunk: Statement
    /// Records of the listing so far.
    public internal(set) var count = 0
    /// Records the cache file holds so far (the local view).
    public internal(set) var fileRecords = 0

    init(store: StateStore, source: String, folder: CacheFolder, header: CacheHeader, purpose: Purpose) throws {
        self.store = store
        self.source = source
        self.folder = folder
        self.purpose = purpose
        self.header = CacheFolder.header(source: source, account: folder.account, savedAt: header.savedAt, etag: header.etag)
        // The source's row first, so that the outbox triggers count from now on and the stamp read is one.
        if try store.outboxStamp(source: source) == nil { try store.run("INSERT OR IGNORE INTO sources (name) VALUES (?1)", source) }
        outboxStamp = try store.outboxStamp(source: source)
        outboxApplied = try store.outbox(source: source)
        for entry in outboxApplied where entry.showsInLocalView {
            let id = RecordID(entry.recordID)
            if overlay[id] == nil { madeOrder.append(id) }
            overlay[id] = entry
        }
        overlayWrites = try store.overlayWrites(source: source)
        overlaysFound = purpose == .refresh || purpose == .migration
        stored = purpose == .migration ? [] : try store.chunkLayouts(source: source)
        diff.comparing = !stored.isEmpty
        stageChunk = try store.database.prepare("""
            INSERT OR REPLACE INTO temp.staged_chunks (seq, records, file_bytes, file_hash, data) VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        oldFile = try openTrustedFile()
        chunkData.reserveCapacity(64 << 10)
        chunkFile.reserveCapacity(160 << 10)
    }

    deinit {
        if !finished { discard() }
        if let oldFile { close(oldFile.fd) }
    }

    /// The current cache file when it is exactly the one the store recorded (size, inode and change time
    /// unchanged, no rename outstanding), for a refresh: only then are its bytes reused. For a delta, also its
    /// header and tail must hash to its fingerprint with the stored chunk hashes (`copyableFile`): its chunks are
    /// then copied without being read.
    private func openTrustedFile() throws -> (fd: Int32, layout: FileLayout)? {
        if purpose == .delta {
            guard let file = try store.copyableFile(source: source, chunks: stored) else { return nil }
            guard file.layout.pendingRename == nil else {
                close(file.fd)
                return nil
            }
            return (file.fd, file.layout)
        }
        // A rebuild follows a local change, which changes at least the trailer's pending list: the file is
        // rewritten anyway, and its records pass through here from the current file already, so copying a
        // prefix would only read it twice.
        guard purpose == .refresh, let layout = try store.fileLayout(source: source), layout.pendingRename == nil,
              let expected = layout.fingerprint else { return nil }
        let fd = retryingEINTR { open(folder.path(of: source), O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        guard let current = fingerprint(of: fd, hash: expected.hash), current == expected else {
            close(fd)
            return nil
        }
        return (fd, layout)
    }

    /// The IDs with outbox entries (the records this writer overlays or creates).
    var overlaidIDs: Set<RecordID> { Set(overlay.keys) }

    /// Adds one record of the server's listing.
    public func add(id: String, idIsInteger: Bool, version: String?, body: UnsafeRawBufferPointer) throws(StoreError) {
        if purpose == .rebuild { try closeEmptyStoredChunks() }
        var fileLength: Int?
        var serverBody: UnsafeRawBufferPointer?
        // No dictionary lookup (an ID hash per record) while no record has local changes.
        if !overlay.isEmpty, let change = overlay[RecordID(id)], !settles(change, listed: true) {
            seenOverlaid.insert(RecordID(id))
            serverBody = body
            wroteOverlay = true
            if change.operation != .delete, let local = change.body {
                local.withUnsafeBytes { emit($0) }
                fileLength = local.count
            }
        } else {
            emit(body)
            fileLength = body.count
        }
        RecordChunk.append(id: id, idIsInteger: idIsInteger, version: version, fileLength: fileLength, serverBody: serverBody, to: &chunkData)
        // A rebuild keeps the listing's order: its ID index and duplicate check stand (a delta updates them).
        if purpose.indexesEveryRecord { idHashes.insert(RecordChunk.hash(id), seq: nextSeq) }
        inChunk += 1
        count += 1
        if inChunk == chunkLimit { try flushChunk() }
    }

    /// The index entry of a record of the server's listing shown as the server sent it, `bodyLength` bytes in the
    /// file, appended to `entries`, and its ID's hash to `hashes` when `hashing`.
    private static func index(id: UnsafeRawBufferPointer, idIsInteger: Bool, version: UnsafeRawBufferPointer?, bodyLength: Int, seq: Int,
                              hashing: Bool, entries: inout [UInt8], hashes: inout IDHashes) {
        RecordChunk.append(id: id, idIsInteger: idIsInteger, version: version, fileLength: bodyLength, serverBody: nil, to: &entries)
        if hashing { hashes.insert(RecordChunk.hash(id), seq: seq) }
    }

    /// Adds one record of the server's listing given the UTF-8 bytes of its ID and version (nil: none), as
    /// `add(id:idIsInteger:version:body:)` does; while no record has local changes no string is made.
    public func add(idBytes: UnsafeRawBufferPointer, idIsInteger: Bool, versionBytes: UnsafeRawBufferPointer?,
                    body: UnsafeRawBufferPointer) throws(StoreError) {
        guard overlay.isEmpty, purpose != .rebuild else {
            try add(id: String(decoding: idBytes, as: UTF8.self), idIsInteger: idIsInteger,
                    version: versionBytes.map { String(decoding: $0, as: UTF8.self) }, body: body)
            return
        }
        emit(body)
        ListingWriter.index(id: idBytes, idIsInteger: idIsInteger, version: versionBytes, bodyLength: body.count, seq: nextSeq,
                            hashing: purpose.indexesEveryRecord, entries: &chunkData, hashes: &idHashes)
        inChunk += 1
        count += 1
        if inChunk == RecordChunk.capacity { try flushChunk() }
    }

    /// Records of the listing a chunk holds when full (`RecordChunk.capacity`): `RecordPipeline` cuts its batches
    /// there, so that each batch can become a chunk's file image as it is (`add(image:records:record:)`).
    public static let recordsPerChunk = RecordChunk.capacity

    /// Records the chunk being filled takes before it is full, and whether the next record's separator in the
    /// file is `,\n` (`true`) or `\n`: what a batch laid out as a file image must match to be taken whole.
    public var nextChunkSpot: (recordsLeft: Int, preceded: Bool) { (chunkLimit - inChunk, precededInFile) }

    /// One record of an image given to `add(image:records:record:)`: its ID's and version's bytes (nil: none), and
    /// the length of its body in the image.
    public struct ImageRecord {
        public let id: UnsafeRawBufferPointer
        public let idIsInteger: Bool
        public let version: UnsafeRawBufferPointer?
        public let bodyLength: Int

        public init(id: UnsafeRawBufferPointer, idIsInteger: Bool, version: UnsafeRawBufferPointer?, bodyLength: Int) {
            self.id = id
            self.idIsInteger = idIsInteger
            self.version = version
            self.bodyLength = bodyLength
        }
    }

    /// Chunks whose file bytes were a batch's image taken as it was, not copied record by record.
    public private(set) var imagesTaken = 0

    /// Adds `records` records of the server's listing given as their bytes in the cache file, `image`: each body
    /// after its separator (`\n` before the file's first record, `,\n` before the others), as `emit` lays them
    /// out; `record(i)` describes the i-th. When they are a whole chunk, no record has a local change, the writer
    /// is not a rebuild's, and the image's first separator is the one the file needs there, the image becomes the
    /// chunk's file bytes by exchanging buffers — no byte is copied (docs/architecture.md, "Storing listings") —
    /// and `image` gets the writer's emptied one. Returns false, having added nothing, otherwise: add them one by one.
    public func add(image: inout [UInt8], records: Int, record: (Int) -> ImageRecord) throws(StoreError) -> Bool {
        guard records > 0, records == chunkLimit, inChunk == 0, chunkFile.isEmpty, overlay.isEmpty, purpose != .rebuild,
              image.count > (precededInFile ? 1 : 0), image[0] == (precededInFile ? 0x2c : 0x0a) else { return false }
        swap(&chunkFile, &image)
        // The index entries and ID hashes go to local buffers, moved in and out: a class's stored property
        // accessed per record costs an exclusivity check each time (docs/benchmarks.md, "Where the time goes now").
        var entries: [UInt8] = []
        var hashes = IDHashes()
        swap(&entries, &chunkData)
        swap(&hashes, &idHashes)
        let seq = nextSeq, hashing = purpose.indexesEveryRecord
        for index in 0..<records {
            let added = record(index)
            ListingWriter.index(id: added.id, idIsInteger: added.idIsInteger, version: added.version, bodyLength: added.bodyLength, seq: seq,
                                hashing: hashing, entries: &entries, hashes: &hashes)
        }
        swap(&entries, &chunkData)
        swap(&hashes, &idHashes)
        precededInFile = true
        inChunk = records
        count += records
        fileRecords += records
        imagesTaken += 1
        try flushChunk()
        return true
    }

    /// Adds a stored record unchanged, as `add` would for a record without a local change, without decoding it:
    /// `entry`, its index entry as stored, must be in the file and not overlaid (`RecordChunk.inFile`, not
    /// `.overlaid`), and `body` the bytes of the file it describes. A delta's walk of a chunk it re-emits copies
    /// the records it does not name this way.
    func addStored(entry: RawIndexEntry, body: UnsafeRawBufferPointer) throws(StoreError) {
        assert(entry.flags & RecordChunk.overlaid == 0 && entry.fileLength == body.count, "addStored takes plain entries only")
        if purpose == .rebuild { try closeEmptyStoredChunks() }
        emit(body)
        chunkData.append(contentsOf: entry.bytes)
        if purpose.indexesEveryRecord { idHashes.insert(RecordChunk.hash(entry.id), seq: nextSeq) }
        inChunk += 1
        count += 1
        if inChunk == chunkLimit { try flushChunk() }
    }

    /// Records the chunk being filled holds when full: `RecordChunk.capacity`, but for a rebuild the stored
    /// chunk's count, so that it frames the records as the stored listing does (a delta may have left chunks with
    /// fewer) and the ID index, which names chunks, stands.
    private var chunkLimit: Int {
        purpose == .rebuild && nextSeq < stored.count ? stored[nextSeq].records : RecordChunk.capacity
    }

    /// Closes the chunk being filled for the stored chunk `seq` (a rebuild's or a delta's walk of it), even
    /// when it ends up with no record: the chunks after it keep their numbers. Nothing when it was closed already.
    func finishChunk(_ seq: Int) throws(StoreError) {
        if nextSeq == seq { try flushChunk(keepingEmpty: true) }
    }

    /// Before a rebuild's next record: stored chunks a delta emptied are closed as empty chunks.
    private func closeEmptyStoredChunks() throws(StoreError) {
        while purpose == .rebuild, inChunk == 0, nextSeq < stored.count, stored[nextSeq].records == 0 {
            try flushChunk(keepingEmpty: true)
        }
    }

    /// Whether this listing settles `change`, the latest change of its record, which the listing shows
    /// (`listed`) or not: for a refresh, a change sent (every earlier one of the record was sent too, changes
    /// go out in order) whose record the listing has, or lacks for a removal. Noted in `settledIDs`.
    private func settles(_ change: OutboxRecord, listed: Bool) -> Bool {
        guard purpose.fromServer, change.state == .sent, listed == (change.operation != .delete) else { return false }
        settledIDs.insert(RecordID(change.recordID))
        return true
    }

    /// Appends a record's bytes, with its separator, to the current chunk's range of the file.
    private func emit(_ bytes: UnsafeRawBufferPointer) {
        // Byte by byte: an array literal here would be an allocation per record.
        if precededInFile { chunkFile.append(0x2c) }
        chunkFile.append(0x0a)
        precededInFile = true
        chunkFile.append(contentsOf: bytes)
        fileRecords += 1
    }

    /// Closes the chunk being filled, its file bytes padded to a whole number of blocks (`BlockAlignment`):
    /// staged unless equal to the stored one, and written to the new file. An empty chunk is closed only when
    /// `keepingEmpty` (a delta removed every record of a stored chunk).
    func flushChunk(keepingEmpty: Bool = false) throws(StoreError) {
        guard inChunk > 0 || keepingEmpty else { return }
        BlockAlignment.pad(&chunkFile)
        let hash = XXHash64.hash(chunkFile)
        let layout = ChunkLayout(records: inChunk, fileBytes: chunkFile.count, fileHash: hash)
        do {
            let sameBytes = nextSeq < stored.count && stored[nextSeq] == layout
            let same = try sameBytes && store.storedChunk(source: source, seq: nextSeq, equals: chunkData)
            if !same {
                stageChunk.reset()
                try stageChunk.bind(1, Int64(nextSeq))
                try stageChunk.bind(2, Int64(inChunk))
                try stageChunk.bind(3, Int64(chunkFile.count))
                try stageChunk.bind(4, Int64(bitPattern: hash))
                try chunkData.withUnsafeBytes { try stageChunk.bind(5, borrowedBlob: $0) }
                try stageChunk.step()
                stageChunk.reset()
                staged = true
                stagedSeqs.insert(nextSeq)
                if purpose.fromServer { try diff.note(entries: chunkData, file: chunkFile, counter: store.workCounter) }
            }
            // A delta changes records in place: a chunk whose file bytes are the stored ones (its index entries
            // may differ, by a version) needs no new file yet.
            if output == nil && !((purpose == .delta ? sameBytes : same) && oldFile != nil) { try diverge() }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .sqlite(SQLiteError(code: 1, operation: "store chunk \(nextSeq) of \(source)", message: "\(error)"))
        }
        if let output {
            try writeChunk(chunkFile, to: output)
            digest.add(hash)
        }
        listingBytes += chunkFile.count
        nextSeq += 1
        chunkData.removeAll(keepingCapacity: true)
        chunkFile.removeAll(keepingCapacity: true)
        inChunk = 0
    }

    /// Creates the new file: the header, then the old file's records section up to the current chunk (for a
    /// delta, whose old file is trusted whole, by one range copy without reading it).
    func diverge() throws(StoreError) {
        let output = try CacheFileOutput(folder: folder, source: source)
        output.rangeCopier = store.rangeCopier
        output.syncer = store.fileSyncer
        self.output = output
        try output.write(header)
        digest.add(bytes: header)
        guard let oldFile else { return }
        if purpose == .delta {
            let bytes = stored[0..<nextSeq].reduce(0) { $0 + $1.fileBytes }
            try output.copyRange(from: oldFile.fd, sourcePath: folder.path(of: source), offset: oldFile.layout.recordsStart, count: bytes)
            for seq in 0..<nextSeq { digest.add(stored[seq].fileHash) }
            return
        }
        var offset = oldFile.layout.recordsStart
        for seq in 0..<nextSeq {
            try output.copy(from: oldFile.fd, sourcePath: folder.path(of: source), offset: offset,
                            count: stored[seq].fileBytes, expectedHash: stored[seq].fileHash)
            digest.add(stored[seq].fileHash)
            offset += stored[seq].fileBytes
        }
    }

    /// Locally created records (in the order they were made) and the trailer.
    private func tail() throws -> [UInt8] {
        var bytes: [UInt8] = []
        var preceded = precededInFile
        for id in madeOrder where !seenOverlaid.contains(id) && !settledIDs.contains(id) {
            guard let change = overlay[id], !settles(change, listed: false), change.operation != .delete,
                  let local = change.body else { continue }
            if preceded { bytes.append(0x2c) }
            bytes.append(0x0a)
            preceded = true
            bytes.append(contentsOf: local)
            fileRecords += 1
        }
        let lists = TrailerLists(settledIDs.isEmpty ? outboxApplied : outboxApplied.filter { !settledIDs.contains(RecordID($0.recordID)) })
        bytes.append(contentsOf: CacheFolder.trailer(pending: lists.pending, parked: lists.parked, conflicts: lists.conflicts))
        return bytes
    }

    /// Whether the old file ends with `tail` right after a records section as long as the new one.
    private func oldFileEnds(with tail: [UInt8]) -> Bool {
        guard let oldFile, let size = oldFile.layout.fingerprint?.size,
              oldFile.layout.listingEnd == oldFile.layout.recordsStart + listingBytes,
              Int(size) - oldFile.layout.listingEnd == tail.count else { return false }
        var bytes = [UInt8](repeating: 0, count: tail.count)
        guard (try? readExactly(oldFile.fd, path: folder.path(of: source), into: &bytes, at: oldFile.layout.listingEnd)) != nil else { return false }
        return bytes == tail
    }
}

extension ListingWriter {
    /// Checks the listing, flushes the new file, commits the index with it and renames the file into place.
    /// An empty listing over a non-empty store is refused unless `allowEmpty` (a delta's never is). For a
    /// `.refresh` or a `.delta`, `metadata` gives the validators and the checkpoint (nil deletes the stored one),
    /// committed in the same transaction as the index; the others keep what is stored. Throws
    /// `.cacheFileNotFlushed` when all is in place but the folder could not be flushed.
    public func commit(_ metadata: ListingMetadata) throws(StoreError) -> ListingOutcome {
        precondition(!finished, "ListingWriter used after commit or rollback")
        do {
            try flushChunk()
            if purpose == .rebuild { try closeEmptyStoredChunks() }
            let previous = try store.state(of: source)
            if purpose == .refresh && count == 0 && previous.recordCount > 0 && !metadata.allowEmpty {
                throw StoreError.emptyListingRefused(existing: previous.recordCount)
            }
            let trailer = try tail()
            if output == nil && !(nextSeq == stored.count && oldFileEnds(with: trailer)) { try diverge() }
            var written: SnapshotFingerprint?
            var flush: DiskFlush?
            if let output {
                try output.write(trailer)
                digest.add(bytes: trailer)
                if try rebuildsTheCurrentFile(output, previous: previous) {
                    // Byte for byte the file apps read (a change the file does not show, such as a change
                    // sent): it stays, untouched, rather than be replaced by a copy of itself.
                    output.discard()
                    self.output = nil
                } else {
                    (written, flush) = try output.finishFlushing(hash: digest.finalize())
                }
            }
            let measured = measureChanges()
            try store.database.execute("BEGIN IMMEDIATE")
            inTransaction = true
            let unchanged = output == nil && previous.lastSuccess != nil
            try storeIndex(metadata, previous: previous, unchanged: unchanged, written: written)
            try log(measured)
            // A whole listing from the server ends its staged pages, if it was resumed or could have been.
            if purpose == .refresh { try store.dropListingResume(source: source) }
            // The file is on disk before the store names it (the flush ran meanwhile).
            try flush?.wait()
            try store.database.execute("COMMIT")
            inTransaction = false
            finished = true
            idHashes = IDHashes()
            // The staged chunks stay in the temporary table until the next listing begins (`beginWriting` empties
            // it): deleting them reads every overflow page of their blobs (~4 ms for 100k records), and an emptied
            // table keeps its file's pages anyway.
            if let output { try install(output) }
            return ListingOutcome(count: count, unchanged: unchanged)
        } catch let error as StoreError {
            if case .cacheFileNotFlushed = error { throw error }
            if finished { throw error }
            discard()
            throw error
        } catch let error as SQLiteError {
            discard()
            throw .sqlite(error)
        } catch {
            discard()
            throw .sqlite(SQLiteError(code: 1, operation: "commit listing", message: "\(error)"))
        }
    }

    /// Whether a rebuild for local changes wrote what the current cache file already holds: the same size and
    /// content hash as the file the store recorded, which is still the one in place (size, inode and change
    /// time as recorded; no rename outstanding).
    private func rebuildsTheCurrentFile(_ output: CacheFileOutput, previous: SourceState) throws -> Bool {
        guard purpose == .rebuild, let recorded = previous.snapshotFingerprint, Int64(output.size) == recorded.size,
              digest.finalize() == recorded.hash, let layout = try store.fileLayout(source: source), layout.pendingRename == nil else {
            return false
        }
        let fd = retryingEINTR { open(folder.path(of: source), O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return fingerprint(of: fd, hash: recorded.hash) == recorded
    }

    /// Renames the committed file into place and records its final fingerprint.
    private func install(_ output: CacheFileOutput) throws(StoreError) {
        try store.install(output, source: source, hash: digest.finalize(), records: fileRecords)
    }

    /// Everything the transaction of `commit` writes.
    private func storeIndex(_ metadata: ListingMetadata, previous: SourceState, unchanged: Bool, written: SnapshotFingerprint?) throws {
        let database = store.database
        if written != nil {
            // Chunks not staged are the stored ones as they were when the listing began, and the new file
            // holds their bytes: a local change that rewrote one meanwhile (its lock is not held while
            // pages arrive) would leave the index describing other bytes than the file's.
            let current = try store.chunkLayouts(source: source)
            for seq in 0..<min(nextSeq, stored.count) where !stagedSeqs.contains(seq) {
                guard seq < current.count, current[seq] == stored[seq] else {
                    overtaken = true
                    throw StoreError.cacheFileMismatch(path: folder.path(of: source),
                                                       reason: "local changes rewrote it while the listing was fetched")
                }
            }
        }
        try store.run("INSERT OR IGNORE INTO sources (name) VALUES (?1)", source)
        if staged {
            let move = try database.prepare("""
                INSERT OR REPLACE INTO chunks (source, seq, records, file_bytes, file_hash, data)
                SELECT ?1, seq, records, file_bytes, file_hash, data FROM temp.staged_chunks
                """)
            try move.bind(1, source)
            _ = try move.step()
        }
        if purpose == .refresh { try checkDuplicates() }
        // A delta's records were checked against the listing's (`StateStore.applyDelta`): no ID repeats.
        let sweep = try database.prepare("DELETE FROM chunks WHERE source = ?1 AND seq >= ?2")
        try sweep.bind(1, source)
        try sweep.bind(2, Int64(nextSeq))
        try sweep.step()
        var saved = previous.savedAt
        if purpose.fromServer {
            saved = unchanged ? (previous.savedAt ?? metadata.time) : metadata.time
            let state = try database.prepare("""
                UPDATE sources SET url = ?2, etag = ?3, last_modified = ?4, saved_at = ?5, last_success = ?6, last_attempt = ?6,
                    last_error = NULL, record_count = ?7 WHERE name = ?1
                """)
            try state.bind(1, source)
            try state.bind(2, metadata.url)
            try state.bind(3, metadata.etag)
            try state.bind(4, metadata.lastModified)
            try state.bind(5, saved)
            try state.bind(6, metadata.time)
            try state.bind(7, Int64(count))
            try state.step()
        }
        if let written {
            let file = try database.prepare("""
                UPDATE sources SET snapshot_dirty = 0, snapshot_size = ?2, snapshot_inode = ?3, snapshot_ctime_ns = ?4, snapshot_hash = ?5,
                    snapshot_records = ?6, records_start = ?7, listing_end = ?8, pending_rename = ?9,
                    file_outbox_stamp = ?10, file_outbox_seq = ?11 WHERE name = ?1
                """)
            try file.bind(1, source)
            try file.bind(2, written.size)
            try file.bind(3, Int64(bitPattern: written.inode))
            try file.bind(4, written.changeTime)
            try file.bind(5, Int64(bitPattern: written.hash))
            try file.bind(6, Int64(fileRecords))
            try file.bind(7, Int64(header.count))
            try file.bind(8, Int64(header.count + listingBytes))
            try file.bind(9, output?.temporaryName)
            try file.bind(10, outboxStamp)
            try file.bind(11, outboxApplied.map(\.seq).max() ?? 0)
            try file.step()
        } else if !purpose.fromServer {
            // The file already shows this view: it is now the file of this outbox (so that the next local
            // creations are appended to it).
            let file = try database.prepare("""
                UPDATE sources SET snapshot_dirty = 0, file_outbox_stamp = ?2, file_outbox_seq = ?3 WHERE name = ?1
                """)
            try file.bind(1, source)
            try file.bind(2, outboxStamp)
            try file.bind(3, outboxApplied.map(\.seq).max() ?? 0)
            try file.step()
        }
        try recordOverlays()
        if purpose.indexesEveryRecord, let saved {
            try store.writeIDIndex(source: source, hashes: &idHashes, chunks: nextSeq,
                                   stamp: StateStore.idIndexStamp(savedAt: saved, count: count), unchanged: unchanged)
        }
        if purpose == .delta, let saved {
            try store.updateIDIndex(source: source, removing: removedIDHashes, adding: &idHashes, chunks: nextSeq,
                                    previous: previous, stamp: StateStore.idIndexStamp(savedAt: saved, count: count))
        }
        // The checkpoint describes this listing: committed with it (nil deletes a stored one).
        if purpose.fromServer { try store.storeCheckpoint(metadata.checkpoint, source: source) }
        // A listing from the server supersedes a schema-1 copy whose conversion failed: converting it later
        // would bring the older listing back.
        if try purpose == .migration || (purpose == .refresh && store.hasLegacyTable()) {
            let drop = try database.prepare("DELETE FROM v1_chunks WHERE source = ?1")
            try drop.bind(1, source)
            try drop.step()
        }
    }

    /// Keeps `overlay_writes` and `overlay_free_hash` true (in the commit's transaction, after the file's
    /// fingerprint): an overlay stored counts and clears the mark; a commit that stored none, found every other
    /// overlaid entry, and saw no other commit store one since it began, marks the file it leaves.
    private func recordOverlays() throws {
        if wroteOverlay {
            try store.run("UPDATE sources SET overlay_writes = overlay_writes + 1, overlay_free_hash = NULL WHERE name = ?1", source)
        } else if overlaysFound, try store.overlayWrites(source: source) == overlayWrites {
            try store.run("UPDATE sources SET overlay_free_hash = snapshot_hash WHERE name = ?1", source)
        }
    }

    /// Equal ID hashes are candidates, confirmed by comparing the IDs themselves (from the index, no file
    /// read), so a hash collision never refuses a valid listing.
    private func checkDuplicates() throws {
        let suspects = idHashes.repeated()
        guard !suspects.isEmpty else { return }
        var seen: Set<RecordID> = []
        var position = 0
        try store.forEachID(source: source) { id in
            if suspects.contains(RecordChunk.hash(id) >> 16) && !seen.insert(RecordID(id)).inserted {
                throw StoreError.duplicateID(id, index: position)
            }
            position += 1
        }
    }

    /// Discards everything: the stored listing and the cache file stay as they were.
    public func rollback() {
        guard !finished else { return }
        discard()
    }

    /// Ends the transaction `commit` may have begun, removes the temporary file and empties the staging table.
    private func discard() {
        finished = true
        if inTransaction { try? store.database.execute("ROLLBACK") }
        inTransaction = false
        output?.discard()
        output = nil
        try? store.database.execute("DELETE FROM temp.staged_chunks")
    }
}
