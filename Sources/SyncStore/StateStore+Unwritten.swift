internal import CSQLite
import SyncCore

/// Which records of the local view the cache file lacks or holds differently after a failed write, so
/// messages count exactly what apps miss (docs/architecture.md, "The cache file": the cache truth rule).
///
/// A row names a record changed locally since the file was last written. Every successful write clears
/// the dirty mark (`snapshot_dirty`); the first local change after that finds the mark clear and drops the
/// rows left from before, so the rows count only while the mark is set, and no write path has to know them.
extension StateStore {
    /// The table of records changed since the last write of their source's cache file.
    static let unwrittenTable = "CREATE TABLE IF NOT EXISTS unwritten (source TEXT NOT NULL, record_id TEXT NOT NULL, PRIMARY KEY (source, record_id))"

    /// Notes, inside the transaction of a local change, that `recordID` of `source` differs from the cache
    /// file until the next write, and sets the dirty mark; rows of an earlier failed write that has since
    /// succeeded (the mark was clear) are dropped first.
    func noteUnwritten(source: String, recordID: String) throws(SQLiteError) {
        let dirty = try database.prepare("SELECT snapshot_dirty FROM sources WHERE name = ?1")
        try dirty.bind(1, source)
        if try !dirty.step() || dirty.int64(0) == 0 {
            let clear = try database.prepare("DELETE FROM unwritten WHERE source = ?1")
            try clear.bind(1, source)
            try clear.step()
        }
        let insert = try database.prepare("INSERT OR IGNORE INTO unwritten (source, record_id) VALUES (?1, ?2)")
        try insert.bind(1, source)
        try insert.bind(2, recordID)
        try insert.step()
        // The file is behind from now until the change is written: a crash before that rewrites it at start.
        try markBehind(source: source)
    }

    /// Records of `source` changed since its cache file was last written; meaningful while the dirty mark is
    /// set. A database without the table (opened read-only before the daemon added it) counts none.
    func unwrittenCount(source: String) throws(SQLiteError) -> Int {
        guard hasUnwrittenTable else { return 0 }
        let statement = try database.prepare("SELECT count(*) FROM unwritten WHERE source = ?1")
        try statement.bind(1, source)
        _ = try statement.step()
        return Int(statement.int64(0))
    }
}
