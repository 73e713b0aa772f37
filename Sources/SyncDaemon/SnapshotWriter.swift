internal import Glibc
import SyncCore
import SyncStore

/// Publishes `CACHE/<account>/<source>.json`, the document other apps read (syncd(8) DESCRIPTION).
/// Nothing else writes the cache folder.
public struct SnapshotWriter {
    /// The schema version written into every file.
    public static let schemaVersion = 1
    /// `CACHE/<account>`.
    public let directory: String
    /// The account whose data this is.
    public let account: String
    /// Group owning the files, when the daemon may set it.
    public let group: UInt32?

    /// Creates a writer for one account's cache folder.
    public init(directory: String, account: String, group: UInt32?) {
        self.directory = directory
        self.account = account
        self.group = group
    }

    /// Path of the cache file of `source`.
    public func path(of source: String) -> String { directory + "/" + source + ".json" }

    /// Creates the folder (mode 0750, group `group`) if it is missing.
    public func prepareDirectory() throws {
        try Directories.create(directory, mode: 0o750, group: group)
    }

    /// A cache file as written: what the store remembers about it.
    public struct Published: Sendable, Equatable {
        /// How to recognise the file later.
        public var fingerprint: SnapshotFingerprint
        /// Records in it.
        public var records: Int
    }

    /// The new file is in place, but its folder could not be flushed (`AtomicFileWriter.DirectoryNotFlushed`).
    public struct NotFlushed: FailureReason {
        /// The file that replaced the previous copy.
        public let published: Published
        /// The failed flush.
        public let cause: SystemError

        public var description: String { cause.description }
        public var reason: String { cause.reason }
    }

    /// Writes the whole document for `source` from the store, atomically, mode 0640; returns the
    /// fingerprint of the file written and its number of records, for the store to remember.
    /// Throws `NotFlushed` when the file was replaced but its folder could not be flushed.
    @discardableResult
    public func publish(source: String, state: SourceState, store: StateStore) throws -> Published {
        let (pending, conflicts) = try store.pendingAndConflicts(source: source)
        let parked = try store.parkedIDs(source: source)
        try prepareDirectory()
        let writer = AtomicFileWriter(directory: directory, name: source + ".json", mode: 0o640, group: group)
        var records = 0
        let written: (size: Int, hash: UInt64)
        var notFlushed: SystemError?
        do {
            written = try write(writer, source: source, state: state, store: store, pending: pending, parked: parked,
                                conflicts: conflicts) { records += 1 }
        } catch let error as AtomicFileWriter.DirectoryNotFlushed {
            written = (error.size, error.hash)
            notFlushed = error.cause
        }
        // Inode and change time as they are after the rename, which moves the change time.
        var info = stat()
        guard stat(path(of: source), &info) == 0 else { throw SystemError("inspect \(path(of: source))") }
        let published = Published(fingerprint: SnapshotFingerprint(info, hash: written.hash), records: records)
        if let notFlushed { throw NotFlushed(published: published, cause: notFlushed) }
        return published
    }

    /// Writes the document through `writer`, calling `counted` once per record.
    private func write(_ writer: AtomicFileWriter, source: String, state: SourceState, store: StateStore,
                       pending: [RecordID], parked: [RecordID], conflicts: [RecordID],
                       onRecord: () -> Void) throws -> (size: Int, hash: UInt64) {
        try writer.write { sink in
            try sink.write("{\"schemaVersion\":\(SnapshotWriter.schemaVersion),\"source\":\(JSONText.quoted(source)),")
            try sink.write("\"accountID\":\(JSONText.quoted(account)),\"savedAt\":\(JSONText.quotedOrNull(state.savedAt)),")
            try sink.write("\"etag\":\(JSONText.quotedOrNull(state.etag)),\n\"records\":[")
            var first = true
            try store.forEachLocalRecord(source: source) { _, body in
                try sink.write(first ? "\n" : ",\n")
                first = false
                try sink.write(body)
                onRecord()
            }
            // IDs as the records write them: 7 for a record whose ID is 7, "a" for "a".
            try sink.write("\n],\n\"pending\":[\(pending.map(\.jsonLiteral).joined(separator: ","))],")
            // The pending IDs whose change the server refused (`syncctl outbox`).
            try sink.write("\"parked\":[\(parked.map(\.jsonLiteral).joined(separator: ","))],")
            try sink.write("\"conflicts\":[\(conflicts.map(\.jsonLiteral).joined(separator: ","))]}\n")
        }
    }

    /// Removes temporary files a killed process left behind (`.<source>.json.tmp-*`); returns their names.
    /// Only names this writer makes are touched.
    @discardableResult
    public func removeStaleTemporaries() -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasPrefix("."), name.contains(".json.tmp-") else { continue }
            if unlink(directory + "/" + name) == 0 { removed.append(name) }
        }
        return removed
    }

    /// What `inspect` found.
    public enum Inspection: Equatable {
        /// The file looks like a complete document of the current schema and, when a fingerprint was
        /// given, is the file syncd wrote. `refreshed` is a new fingerprint to record when only the
        /// file's status changed (e.g. `chmod`, or `touch` by someone else): recording it saves a hash next time.
        case valid(refreshed: SnapshotFingerprint?)
        /// There is no file.
        case missing
        /// The file was damaged or of an unknown schema and was moved to `movedTo`.
        case movedAside(movedTo: String, reason: String)
    }

    /// Opens the cache file at `path` for reading and reads its status; nil when there is no file.
    /// The caller closes the descriptor.
    func openExisting(_ path: String) throws -> (fd: Int32, info: stat)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError("open cache file \(path)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = SystemError("inspect \(path)")
            close(fd)
            throw error
        }
        return (fd, info)
    }

    /// Checks the cache file of `source` at startup. A file that is not a complete document of schema 1
    /// (it starts with the envelope written above and ends with its closing bracket), or, when `expected`
    /// is given, is not the file syncd wrote (see `verify`), is moved aside as `<name>.corrupt-<UTC time>`,
    /// never deleted, so nothing is lost and a human can look at it.
    public func inspect(source: String, expected: SnapshotFingerprint?, now: Timestamp) throws -> Inspection {
        let path = path(of: source)
        guard let (fd, info) = try openExisting(path) else { return .missing }
        defer { close(fd) }
        let prefix = "{\"schemaVersion\":\(SnapshotWriter.schemaVersion),\"source\":\(JSONText.quoted(source)),"
        let suffix = "]}\n"
        let head = readBytes(fd, at: 0, count: prefix.utf8.count)
        let tail = readBytes(fd, at: max(0, Int(info.st_size) - suffix.utf8.count), count: suffix.utf8.count)
        var reason: String?
        if head != Array(prefix.utf8) {
            reason = head.starts(with: Array("{\"schemaVersion\":".utf8)) ? "unknown schemaVersion or source" : "not a syncd cache document"
        } else if tail != Array(suffix.utf8) {
            reason = "document is incomplete"
        }
        var refreshed: SnapshotFingerprint?
        if reason == nil, let expected {
            switch try verify(fd, info: info, path: path, expected: expected) {
            case .same(let current): refreshed = current == expected ? nil : current
            case .altered(let why): reason = why
            }
        }
        guard let reason else { return .valid(refreshed: refreshed) }
        return .movedAside(movedTo: try moveAside(path, now: now), reason: reason)
    }

    /// Renames a damaged cache file to `<name>.corrupt-<UTC time>`; returns the new path.
    func moveAside(_ path: String, now: Timestamp) throws -> String {
        let target = path + ".corrupt-" + now.compact
        guard rename(path, target) == 0 else { throw SystemError("move damaged cache file \(path) aside") }
        return target
    }

    func readBytes(_ fd: Int32, at offset: Int, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return n == count ? buffer : Array(buffer.prefix(max(0, n)))
    }
}
