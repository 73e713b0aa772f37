internal import Glibc
import SyncCore
import SyncStore

/// Recognising the cache file syncd wrote (docs/architecture.md, "The cache file"). The store keeps the
/// file's size, inode, change time and XXH64 hash from the last write or confirmation. A different size
/// means the file is not syncd's; a different inode or change time means something touched it, so it is
/// read, hashed part by part where the store's layout cuts it (`StateStore.cacheFileDigest`) and compared;
/// an unchanged status is trusted without reading a byte. That keeps a confirmed
/// refresh (HTTP 304) at a few system calls, whatever the size of the file.
extension CacheFileKeeper {
    /// What `confirm` found.
    public enum Confirmation: Equatable {
        /// The file is the one syncd wrote; its mtime now says when the refresh confirmed it.
        case touched(SnapshotFingerprint)
        /// There is no file.
        case missing
        /// The file was not what syncd wrote and was moved to `movedTo`.
        case movedAside(movedTo: String, reason: String)
    }

    /// A refresh confirmed that nothing changed: if the cache file of `source` is still the one described
    /// by `expected`, moves its mtime to now (syncd(8) DESCRIPTION) and returns its new
    /// fingerprint; otherwise moves it aside for the caller to rewrite it from the store.
    /// `digest` computes the content hash of an open file as the store defines it (`StateStore.cacheFileDigest`).
    public func confirm(source: String, expected: SnapshotFingerprint, now: Timestamp,
                        digest: (Int32) throws -> UInt64?) throws -> Confirmation {
        let path = path(of: source)
        // A link is never touched: futimens on it would change the mtime of a file outside the cache folder.
        let fd: Int32
        var info: stat
        switch try openExisting(path) {
        case .missing: return .missing
        case .foreign(let reason): return .movedAside(movedTo: try moveAside(path, now: now), reason: reason)
        case .file(let opened, let status): (fd, info) = (opened, status)
        }
        defer { close(fd) }
        if case .altered(let reason) = try verify(fd, info: info, expected: expected, digest: digest) {
            return .movedAside(movedTo: try moveAside(path, now: now), reason: reason)
        }
        // NULL times set both to now; the corresponding C function is futimens(3) (utimensat(2) on the
        // descriptor), so the file we checked is the file we touch.
        guard futimens(fd, nil) == 0 else { throw SystemError("update modification time of \(path)") }
        guard fstat(fd, &info) == 0 else { throw SystemError("inspect \(path)") }
        return .touched(SnapshotFingerprint(info, hash: expected.hash))
    }

    /// What `verify` found.
    enum Verification {
        /// Same bytes; the file's fingerprint now (status fields may have moved).
        case same(SnapshotFingerprint)
        /// Not the file syncd wrote, and why.
        case altered(String)
    }

    /// Compares the open file `fd` (status `info`) with `expected`; reads it only when its inode or
    /// change time moved, through `digest`.
    func verify(_ fd: Int32, info: stat, expected: SnapshotFingerprint,
                digest: (Int32) throws -> UInt64?) throws -> Verification {
        let current = SnapshotFingerprint(info, hash: expected.hash)
        if current.size != expected.size {
            return .altered("its size is \(current.size) bytes; syncd wrote \(expected.size)")
        }
        if current.inode == expected.inode && current.changeTime == expected.changeTime {
            return .same(current)
        }
        guard let hash = try digest(fd) else { return .altered("the store does not describe its layout") }
        return hash == expected.hash ? .same(current) : .altered("its content differs from what syncd wrote")
    }
}

extension SnapshotFingerprint {
    /// The fingerprint of a file with status `info` and content hash `hash`.
    init(_ info: stat, hash: UInt64) {
        self.init(size: Int64(info.st_size), inode: UInt64(info.st_ino),
                  changeTime: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec), hash: hash)
    }
}
