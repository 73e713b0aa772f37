internal import Glibc
import SyncCore
internal import SyncSystem

/// Where a source's listing lies in its cache file, as the store recorded it with the index.
struct FileLayout {
    /// Offset just after `"records":[`.
    var recordsStart: Int
    /// Offset where the listing's records end (locally created records and the closing "\n]" follow).
    var listingEnd: Int
    /// The temporary file a commit is renaming from, if one is outstanding.
    var pendingRename: String?
    /// The file as last written or confirmed.
    var fingerprint: SnapshotFingerprint?
}

/// One stored chunk's row without its blob.
struct ChunkLayout: Equatable {
    var records: Int
    var fileBytes: Int
    var fileHash: UInt64
}

/// Reading the listing: the index from `chunks`, the bodies from the cache file by `pread`, each chunk's
/// range checked against its `file_hash` (docs/architecture.md, "Storing listings").
extension StateStore {
    /// The recorded layout of the cache file of `source`; nil when no listing was written to one.
    func fileLayout(source: String) throws(SQLiteError) -> FileLayout? {
        let statement = try database.prepare("""
            SELECT records_start, listing_end, pending_rename, snapshot_size, snapshot_inode, snapshot_ctime_ns, snapshot_hash
            FROM sources WHERE name = ?1
            """)
        try statement.bind(1, source)
        guard try statement.step(), !statement.isNull(0) else { return nil }
        let fingerprint = statement.isNull(3) ? nil : SnapshotFingerprint(
            size: statement.int64(3), inode: UInt64(bitPattern: statement.int64(4)),
            changeTime: statement.int64(5), hash: UInt64(bitPattern: statement.int64(6)))
        return FileLayout(recordsStart: Int(statement.int64(0)), listingEnd: Int(statement.int64(1)),
                          pendingRename: statement.string(2), fingerprint: fingerprint)
    }

    /// The rows of every chunk of `source`, in order, without their blobs.
    func chunkLayouts(source: String) throws(SQLiteError) -> [ChunkLayout] {
        let statement = try database.prepare("SELECT records, file_bytes, file_hash FROM chunks WHERE source = ?1 ORDER BY seq")
        try statement.bind(1, source)
        var layouts: [ChunkLayout] = []
        while try statement.step() {
            layouts.append(ChunkLayout(records: Int(statement.int64(0)), fileBytes: Int(statement.int64(1)),
                                       fileHash: UInt64(bitPattern: statement.int64(2))))
        }
        return layouts
    }

    /// Whether the stored index chunk `seq` of `source` is exactly `bytes`: compared in place with
    /// `memcmp`, without copying the stored chunk out.
    func storedChunk(source: String, seq: Int, equals bytes: [UInt8]) throws(SQLiteError) -> Bool {
        let statement = try database.prepare("SELECT data FROM chunks WHERE source = ?1 AND seq = ?2")
        try statement.bind(1, source)
        try statement.bind(2, Int64(seq))
        guard try statement.step() else { return false }
        return statement.withBlob(0) { stored in
            bytes.withUnsafeBytes { wanted in
                stored.count == wanted.count && (stored.isEmpty || memcmp(stored.baseAddress!, wanted.baseAddress!, stored.count) == 0)
            }
        }
    }

    /// Opens the cache file the index of `source` describes: the final file when its size and inode are
    /// the recorded ones; else, while a commit's rename is outstanding, the temporary file it names.
    /// A few tries, since a commit may move on meanwhile; then `StoreError.cacheFileMismatch`.
    func openIndexedFile(source: String) throws -> (fd: Int32, path: String) {
        guard let folder = cacheFolder else {
            throw StoreError.cacheFileMismatch(path: source + ".json", reason: "the store was opened without its cache folder")
        }
        let path = folder.path(of: source)
        var found = "it is missing"
        for _ in 0..<3 {
            guard let layout = try fileLayout(source: source), let expected = layout.fingerprint else {
                throw StoreError.cacheFileMismatch(path: path, reason: "the store records no cache file")
            }
            var candidates = [path]
            if let pending = layout.pendingRename { candidates.append(folder.directory + "/" + pending) }
            for candidate in candidates {
                // Never through a link: it would read a file outside the cache folder.
                let fd = retryingEINTR { open(candidate, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
                guard fd >= 0 else {
                    if candidate == path && errno == ELOOP { found = "it is a symbolic link, which syncd never follows" }
                    continue
                }
                var info = stat()
                let mismatch = fstat(fd, &info) == 0 ? StateStore.mismatch(info, expected: expected) : "its status cannot be read"
                guard let mismatch else { return (fd, candidate) }
                if candidate == path { found = mismatch }
                Glibc.close(fd)
            }
        }
        throw StoreError.cacheFileMismatch(path: path, reason: found)
    }

    /// Which property of the open file with status `info` differs from the file the store recorded; nil when
    /// it is that file.
    static func mismatch(_ info: stat, expected: SnapshotFingerprint) -> String? {
        if info.st_mode & S_IFMT != S_IFREG { return "it is not a regular file" }
        if Int64(info.st_size) != expected.size { return "its size is \(info.st_size) bytes; the store expects \(expected.size)" }
        if UInt64(info.st_ino) != expected.inode {
            return "its inode is \(info.st_ino); the store expects \(expected.inode): another file took its place"
        }
        return nil
    }

    /// Calls `body` with each record of the listing of `source` in chunks `first...last`, in order, until it
    /// returns false. Reads each chunk's range of the cache file whole and checks it against `file_hash`.
    func walkListing(source: String, first: Int = 0, last: Int = Int(Int32.max), _ body: (StoredRecord) throws -> Bool) throws {
        try walkEntries(source: source, first: first, last: last) { entry, inFile in
            guard let server = entry.serverBody ?? inFile else { return true }
            let decoded = entry.decoded
            return try body(StoredRecord(id: decoded.id, idIsInteger: decoded.idIsInteger, version: decoded.version, body: server))
        }
    }

    /// `walkListing` without decoding: `body` gets each index entry as stored and the record's bytes in the cache
    /// file (nil for a record the file does not hold), and returns false to stop. `offset`, when the caller knows
    /// it, is where chunk `first` begins in the file (the sum of the earlier chunks' `file_bytes`); `chunkBytes`
    /// is given each chunk's bytes as read and checked, before its entries.
    func walkEntries(source: String, first: Int = 0, last: Int = Int(Int32.max), offset chunkOffset: Int? = nil,
                     chunkBytes: ((Int, UnsafeRawBufferPointer) -> Void)? = nil,
                     _ body: (RawIndexEntry, UnsafeRawBufferPointer?) throws -> Bool) throws {
        guard let layout = try fileLayout(source: source) else { return }
        let statement = try database.prepare("""
            SELECT seq, file_bytes, file_hash, data FROM chunks WHERE source = ?1 AND seq >= ?2 AND seq <= ?3 ORDER BY seq
            """)
        try statement.bind(1, source)
        try statement.bind(2, Int64(first))
        try statement.bind(3, Int64(last))
        var offset = layout.recordsStart
        if let chunkOffset {
            offset += chunkOffset
        } else if first > 0 {
            let before = try database.prepare("SELECT coalesce(sum(file_bytes), 0) FROM chunks WHERE source = ?1 AND seq < ?2")
            try before.bind(1, source)
            try before.bind(2, Int64(first))
            _ = try before.step()
            offset += Int(before.int64(0))
        }
        var precededInFile = offset > layout.recordsStart
        var file: (fd: Int32, path: String)?
        defer { if let file { Glibc.close(file.fd) } }
        var bytes: [UInt8] = []
        var going = true
        while going, try statement.step() {
            let seq = Int(statement.int64(0))
            let count = Int(statement.int64(1))
            let expected = UInt64(bitPattern: statement.int64(2))
            bytes.removeAll(keepingCapacity: true)
            if count > 0 {
                let opened = try file ?? openIndexedFile(source: source)
                file = opened
                bytes = [UInt8](repeating: 0, count: count)
                try readExactly(opened.fd, path: opened.path, into: &bytes, at: offset)
                guard XXHash64.hash(bytes) == expected else {
                    throw StoreError.cacheFileMismatch(path: opened.path, reason: "chunk \(seq) (bytes \(offset)–\(offset + count)) differs from what the store recorded")
                }
            }
            let filePath = file?.path ?? source
            if let chunkBytes { bytes.withUnsafeBytes { chunkBytes(seq, $0) } }
            try bytes.withUnsafeBytes { range in
                var position = 0
                try statement.withBlob(3) { blob in
                    try RecordChunk.forEachRaw(in: blob) { entry in
                        guard going else { return }
                        workCounter?.indexEntriesVisited += 1
                        var inFile: UnsafeRawBufferPointer?
                        if let length = entry.fileLength {
                            let separator = precededInFile ? 2 : 1
                            precededInFile = true
                            guard position + separator + length <= range.count else {
                                throw StoreError.cacheFileMismatch(path: filePath, reason: "chunk \(seq) describes more bytes than it holds")
                            }
                            inFile = UnsafeRawBufferPointer(rebasing: range[position + separator..<position + separator + length])
                            position += separator + length
                        }
                        going = try body(entry, inFile)
                    }
                }
                if going && !BlockAlignment.isPadding(UnsafeRawBufferPointer(rebasing: range[position...])) {
                    throw StoreError.cacheFileMismatch(path: filePath, reason: "chunk \(seq) describes \(position) bytes of its \(range.count)")
                }
            }
            offset += count
        }
    }

    /// Calls `body` with each record of the server's last good listing of `source`, in the server's order:
    /// bodies from the cache file, or the server's copy the index keeps for a record with a local change.
    public func forEachRecord(source: String, _ body: (StoredRecord) throws -> Void) throws {
        try walkListing(source: source) { record in
            try body(record)
            return true
        }
    }

    /// Calls `body` with up to `limit` records of `source` starting at position `offset` (server order);
    /// returns the number of records in the listing. Only the chunks that hold the page are read.
    public func records(source: String, offset: Int, limit: Int, _ body: (StoredRecord) throws -> Void) throws -> Int {
        let total = try state(of: source).recordCount
        guard limit > 0, offset < total else { return total }
        let start = try chunk(holding: offset, source: source)
        var position = start.first
        var delivered = 0
        try walkListing(source: source, first: start.seq) { record in
            if position >= offset {
                try body(record)
                delivered += 1
            }
            position += 1
            return delivered < limit
        }
        return total
    }

    /// The chunk of `source` holding listing position `position` (0 is the first record) and the position of its
    /// first record. Chunks hold `RecordChunk.capacity` records, except the last and those a delta removed records
    /// from: their rows' counts are summed (as a chunk's offset is), never their blobs read. Past the end: the
    /// chunk after the last.
    func chunk(holding position: Int, source: String) throws(SQLiteError) -> (seq: Int, first: Int) {
        let statement = try database.prepare("SELECT seq, records FROM chunks WHERE source = ?1 ORDER BY seq")
        try statement.bind(1, source)
        var first = 0
        var after = 0
        while try statement.step() {
            let records = Int(statement.int64(1))
            if position < first + records { return (Int(statement.int64(0)), first) }
            first += records
            after = Int(statement.int64(0)) + 1
        }
        return (after, first)
    }

    /// The listing position of the first record of chunk `seq` of `source`.
    func recordsBefore(chunk seq: Int, source: String) throws(SQLiteError) -> Int {
        let statement = try database.prepare("SELECT coalesce(sum(records), 0) FROM chunks WHERE source = ?1 AND seq < ?2")
        try statement.bind(1, source)
        try statement.bind(2, Int64(seq))
        _ = try statement.step()
        return Int(statement.int64(0))
    }

    /// The listing position of the first record of each chunk of `source`, in order.
    func chunkStarts(source: String) throws(SQLiteError) -> [Int] {
        let statement = try database.prepare("SELECT records FROM chunks WHERE source = ?1 ORDER BY seq")
        try statement.bind(1, source)
        var starts: [Int] = []
        var first = 0
        while try statement.step() {
            starts.append(first)
            first += Int(statement.int64(0))
        }
        return starts
    }

    /// Calls `body` with the ID of each index entry of `source` (no file is read).
    func forEachID(source: String, _ body: (String) throws -> Void) throws {
        let statement = try database.prepare("SELECT data FROM chunks WHERE source = ?1 ORDER BY seq")
        try statement.bind(1, source)
        while try statement.step() {
            try statement.withBlob(0) { try RecordChunk.forEach(in: $0) { try body($0.id) } }
        }
    }
}
