/// Why the store could not do what was asked.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The database file is damaged or from an unknown schema; the caller moves it aside.
    case corrupt(path: String, reason: String)
    /// SQLite refused an operation (disk full, read-only, I/O error, …).
    case sqlite(SQLiteError)
    /// A listing had the same ID twice (syncd(8) GUARANTEES 3).
    case duplicateID(String, index: Int)
    /// An empty listing would wipe a non-empty cache (syncd(8) GUARANTEES 3, `AllowEmpty=no`).
    case emptyListingRefused(existing: Int)
    /// Writing the new cache file at `path` failed before the store took it: the previous file and index stay.
    /// `code` is the system call's errno, when one failed (ENOSPC: the file system is full).
    case cacheFileWrite(path: String, reason: String, code: Int32? = nil)
    /// The new cache file at `path` (with `records` records) replaced the previous one and the store
    /// describes it, but its folder could not be flushed: the replacement may not survive a power cut.
    case cacheFileNotFlushed(path: String, records: Int, reason: String)
    /// The cache file at `path` is not the one the store's index describes (damaged, replaced or missing):
    /// the bodies cannot be read from it (docs/architecture.md, "Storing listings").
    case cacheFileMismatch(path: String, reason: String)

    public var description: String {
        switch self {
        case .corrupt(let path, let reason): return "database \(path) is unusable: \(reason)"
        case .sqlite(let error): return error.description
        case .duplicateID(let id, let index): return "record \(index) repeats ID \"\(id)\""
        case .emptyListingRefused(let existing):
            return "empty listing refused: the cache holds \(existing) records (set AllowEmpty=yes to accept empty listings)"
        case .cacheFileWrite(let path, let reason, _): return "Failed to write cache file \(path): \(reason)"
        case .cacheFileNotFlushed(let path, _, let reason): return "Replaced cache file \(path), but failed to \(reason)"
        case .cacheFileMismatch(let path, let reason):
            return "the cache file \(path) does not match the store (\(reason)); the next refresh fetches the whole listing again"
        }
    }
}
