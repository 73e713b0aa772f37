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

    public var description: String {
        switch self {
        case .corrupt(let path, let reason): return "database \(path) is unusable: \(reason)"
        case .sqlite(let error): return error.description
        case .duplicateID(let id, let index): return "record \(index) repeats ID \"\(id)\""
        case .emptyListingRefused(let existing):
            return "empty listing refused: the cache holds \(existing) records (set AllowEmpty=yes to accept empty listings)"
        }
    }
}
