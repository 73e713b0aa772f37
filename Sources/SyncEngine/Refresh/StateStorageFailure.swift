import SyncCore
import SyncStore

/// A refresh failure met while the file system of the state folder failed a write of the database (full,
/// read-only, an I/O error): a local failure like a full cache folder, retried past MaxAttempts= until it
/// clears, never the server's fault (docs/syncd.8.md GUARANTEES 8).
enum StateStorageFailure {
    /// `failure` reclassified as local, with what to do, when the store's file system failed it (`storage`
    /// is the last such SQLite error of the refresh); else `failure` unchanged. A cancelled refresh stays
    /// cancelled, and a refused listing (permanent: a repeated ID, an empty listing) stays refused.
    /// `once`: the refresh is `syncd --once`'s, which has no daemon to ask nor to retry: the advice is to run it again.
    static func attributed(_ failure: RefreshFailure, storage: SQLiteError?, database path: String, source name: String,
                           once: Bool = false) -> RefreshFailure {
        guard let storage, failure.kind == .transient else { return failure }
        let folder = folder(of: path)
        var local = failure
        local.kind = .local
        let retry = once ? ", then run syncd --once again"
            : ", then run `syncctl refresh \(name)` (the daemon also retries by itself, every MaxDelaySec= at most, "
            + "until the write succeeds; queued local changes stay queued)"
        if !failure.message.contains(storage.message) { local.append(": \(storage.description)") }
        if storage.isFull {
            local.append("; the file system of the state folder \(folder) is full: free some space in \(folder)" + retry)
        } else if storage.isReadOnly {
            local.append("; the state folder \(folder) cannot be written (a read-only file system?): make it writable" + retry)
        } else {
            local.append("; the file system of the state folder \(folder) failed a write: check it (the kernel log says why)" + retry)
        }
        return local
    }

    /// The folder of the file at `path`.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
