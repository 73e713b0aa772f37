internal import Glibc
import SyncCore
import SyncStore

/// Looks after `CACHE/<account>/<source>.json`, the document other apps read (syncd(8) DESCRIPTION): the
/// store writes it (`ListingWriter`); this checks it at startup and after a 304, moves a damaged one aside,
/// removes the temporary files a killed process left and gives files the folder's group. It writes no file.
public struct CacheFileKeeper {
    /// The schema version written into every file.
    public static let schemaVersion = 1
    /// The folder, as the store writes and reads it: the listings' bodies are only in its files.
    public let folder: CacheFolder
    /// `CACHE/<account>`.
    public var directory: String { folder.directory }
    /// Group owning the files, when the daemon may set it.
    public var group: UInt32? { folder.group }

    /// Creates a writer for one account's cache folder.
    public init(folder: CacheFolder) {
        self.folder = folder
    }

    /// Path of the cache file of `source`.
    public func path(of source: String) -> String { folder.path(of: source) }

    /// Creates the folder (mode 0750, group `group`) if it is missing.
    public func prepareDirectory() throws {
        try Directories.create(directory, mode: 0o750, group: group, kind: .account, followingLinks: false)
    }

    /// Gives the cache file of `source` the folder's group when it has another (a file written before
    /// `ReadGroup=` was set or changed): readable by that group from the start, not only from its next
    /// rewrite. Returns whether the group was changed. The file's change time moves, so the next check hashes
    /// it once and records it again.
    @discardableResult
    public func adoptGroup(of source: String) -> Bool {
        guard let group else { return false }
        let fd = open(path(of: source), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_gid != group else { return false }
        return fchown(fd, uid_t.max, group) == 0
    }

    /// The source a temporary file that `removeStaleTemporaries` removes was written for (`.<source>.json.tmp-…`),
    /// for the journal's `SYNCD_SOURCE=`.
    public static func source(ofTemporary name: String) -> String? {
        guard name.hasPrefix("."), let marker = name.ranges(of: ".json.tmp-").last,
              marker.lowerBound > name.index(after: name.startIndex) else { return nil }
        return String(name[name.index(after: name.startIndex)..<marker.lowerBound])
    }

    /// Removes temporary files a killed process left behind (`.<source>.json.tmp-*`), except those in `keeping`
    /// (named by a committed listing whose rename is outstanding); returns their names. Only names this
    /// writer makes are touched.
    @discardableResult
    public func removeStaleTemporaries(keeping: Set<String> = []) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasPrefix("."), name.contains(".json.tmp-"), !keeping.contains(name) else { continue }
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

    /// What is at a cache file's path.
    enum Entry {
        /// Nothing.
        case missing
        /// A regular file, open for reading (the caller closes `fd`), and its status.
        case file(fd: Int32, info: stat)
        /// Something that cannot be a cache file syncd wrote (a symbolic link, a folder, a FIFO…), and why.
        case foreign(String)
    }

    /// Opens the cache file at `path` for reading and reads its status. syncd only ever renames regular
    /// files into the cache folder and never follows a link there (reading or touching through one would act
    /// on a file outside the folder): the open never follows a symbolic link (`O_NOFOLLOW`, which fails with
    /// ELOOP on one) nor waits on a FIFO (`O_NONBLOCK`, which means nothing for a regular file), and what is
    /// not a regular file is reported as `foreign` for the caller to move aside.
    func openExisting(_ path: String) throws -> Entry {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            switch errno {
            case ENOENT: return .missing
            case ELOOP: return .foreign("it is a symbolic link, which syncd never follows in the cache folder")
            default: throw SystemError("open cache file \(path)")
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = SystemError("inspect \(path)")
            close(fd)
            throw error
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .foreign("it is not a regular file")
        }
        return .file(fd: fd, info: info)
    }

    /// Checks the cache file of `source` at startup. A file that is not a complete document of schema 1
    /// (it starts with the envelope written above and ends with its closing bracket), or, when `expected`
    /// is given, is not the file syncd wrote (see `verify`), is moved aside as `<name>.corrupt-<UTC time>`,
    /// never deleted, so nothing is lost and a human can look at it.
    /// `digest` computes the content hash of an open file as the store defines it (`StateStore.cacheFileDigest`).
    public func inspect(source: String, expected: SnapshotFingerprint?, now: Timestamp,
                        digest: (Int32) throws -> UInt64?) throws -> Inspection {
        let path = path(of: source)
        let fd: Int32, info: stat
        switch try openExisting(path) {
        case .missing: return .missing
        case .foreign(let reason): return .movedAside(movedTo: try moveAside(path, now: now), reason: reason)
        case .file(let opened, let status): (fd, info) = (opened, status)
        }
        defer { close(fd) }
        let prefix = "{\"schemaVersion\":\(CacheFileKeeper.schemaVersion),\"source\":\(JSONText.quoted(source)),"
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
            switch try verify(fd, info: info, expected: expected, digest: digest) {
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
