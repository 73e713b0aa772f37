internal import CSQLite
internal import CShim

/// A connection to one SQLite database file.
///
/// Not thread-safe by itself: one owner uses it at a time (the store serialises
/// access). SQLite is built in serialized mode on Debian, so a misuse is not a
/// memory-safety bug, only a logic one.
public final class Database {
    let handle: OpaquePointer
    /// Path of the database file.
    public let path: String
    /// The first error by which SQLite said the file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB), from any
    /// statement on this connection. Whoever owns the connection checks it after an operation and replaces
    /// the file: a damaged page fails every later operation that touches it, so retrying cannot help.
    public private(set) var corruption: SQLiteError?
    /// The latest error by which the file system under the database failed a statement (full, read-only,
    /// an I/O error), until `clearStorageFailure()`: a refresh that fails after it failed for a local
    /// reason, whatever error it reports (docs/syncd.8.md GUARANTEES 8).
    public private(set) var storageFailure: SQLiteError?
    private var isClosed = false

    /// Opens (creating if needed) the database at `path`. The corresponding C function is `sqlite3_open_v2(3)`.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        _ = Database.configured
        var db: OpaquePointer?
        let flags = readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, operation: "open database \(path)", message: message)
        }
        sqlite3_extended_result_codes(db, 1)
        // Closing would copy the whole WAL into the database and flush both: for `syncd --once` after a
        // large listing that doubles its I/O. SQLite's auto-checkpoint does it during a later write
        // instead. Committed data is in the WAL either way; local changes commit with synchronous=FULL.
        _ = cshim_sqlite3_no_checkpoint_on_close(db)
        sqlite3_busy_timeout(db, 5_000)
        self.handle = db
        self.path = path
    }

    /// Process-wide settings, made once before the first connection opens (SQLite takes them only before
    /// it initialises): no page cache is allocated ahead of use. By default every pager, the one of each
    /// temporary table a query opens included, allocates and writes 20 pages (80 KiB) at its first read; a
    /// `syncd --once` answered by a 304 touched ~450 pages for it (docs/benchmarks.md, "Speed of the first
    /// sync and of the 304"). Pages are then allocated as they are used, up to each cache's `cache_size`.
    /// SQLite refuses it only once initialised, which nothing in syncd does before; refused, it costs only speed.
    private static let configured: Bool = cshim_sqlite3_no_initial_page_cache() == SQLITE_OK

    deinit { close() }

    /// Closes the connection now; later calls on it fail with SQLITE_MISUSE. Statements still alive keep
    /// SQLite's connection object until they are finalised (`sqlite3_close_v2(3)`), so this is safe
    /// while some remain; none of them is stepped again.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        sqlite3_close_v2(handle)
    }

    private func checkOpen(_ operation: String) throws(SQLiteError) {
        if isClosed { throw SQLiteError(code: SQLITE_MISUSE, operation: operation, message: "the database connection is closed") }
    }

    /// Remembers `error` when it reports damage or a failing file system; returns it.
    func noted(_ error: SQLiteError) -> SQLiteError {
        if error.isCorruption && corruption == nil { corruption = error }
        if error.isStorageFailure { storageFailure = error }
        return error
    }

    /// Forgets the storage failure noted so far (before an operation whose failures are to be told apart).
    public func clearStorageFailure() { storageFailure = nil }

    /// Runs one or more SQL statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        try checkOpen("execute \(sql.prefix(60))")
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw noted(SQLiteError(code: sqlite3_extended_errcode(handle), operation: "execute \(sql.prefix(60))", message: message))
        }
    }

    /// Compiles a statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try checkOpen("prepare \(sql.prefix(60))")
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw error(rc, "prepare \(sql.prefix(60))")
        }
        return Statement(database: self, handle: statement)
    }

    /// Number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { isClosed ? 0 : Int(sqlite3_changes(handle)) }

    /// The rowid of the latest successful `INSERT` on this connection (`sqlite3_last_insert_rowid(3)`).
    public var lastInsertRowID: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`), committing if it returns and rolling back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The first column of every row `sql` returns, as text, in the order returned (NULL rows left out).
    public func strings(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql)
        var values: [String] = []
        while try statement.step() { if let value = statement.string(0) { values.append(value) } }
        return values
    }

    /// Reads an integer pragma such as `user_version`.
    public func integerPragma(_ name: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare("PRAGMA \(name)")
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    func error(_ rc: Int32, _ operation: String) -> SQLiteError {
        noted(SQLiteError(code: sqlite3_extended_errcode(handle), operation: operation, message: String(cString: sqlite3_errmsg(handle))))
    }
}

/// A compiled SQL statement. Parameters are 1-based, columns 0-based, as in SQLite.
public final class Statement {
    let database: Database
    let handle: OpaquePointer

    init(database: Database, handle: OpaquePointer) {
        self.database = database
        self.handle = handle
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings so it can run again.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds a text value (copied by SQLite); nil binds NULL.
    public func bind(_ index: Int32, _ value: String?) throws(SQLiteError) {
        let rc: Int32
        if let value {
            var value = value
            rc = value.withUTF8 { cshim_sqlite3_bind_text_transient(handle, index, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count)) }
        } else {
            rc = sqlite3_bind_null(handle, index)
        }
        try check(rc, "bind parameter \(index)")
    }

    /// Binds an integer; nil binds NULL.
    public func bind(_ index: Int32, _ value: Int64?) throws(SQLiteError) {
        let rc = value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index)
        try check(rc, "bind parameter \(index)")
    }

    /// Binds a blob that SQLite copies.
    public func bind(_ index: Int32, blob: UnsafeRawBufferPointer) throws(SQLiteError) {
        let base = blob.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        try check(cshim_sqlite3_bind_blob_transient(handle, index, base, Int32(blob.count)), "bind parameter \(index)")
    }

    /// Binds a blob that must stay valid until the statement is stepped and reset (no copy).
    public func bind(_ index: Int32, borrowedBlob blob: UnsafeRawBufferPointer) throws(SQLiteError) {
        let base = blob.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        try check(cshim_sqlite3_bind_blob_static(handle, index, base, Int32(blob.count)), "bind parameter \(index)")
    }

    /// Advances the statement; returns true while a row is available.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, "run \(String(cString: sqlite3_sql(handle)).prefix(60))")
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Column as Int64 (0 for NULL).
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Column as String, nil for NULL.
    public func string(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL, let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// True when the column is NULL.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Gives `body` the column's bytes without copying; valid only inside `body`.
    public func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// Column as a byte array.
    public func bytes(_ column: Int32) -> [UInt8] { withBlob(column) { Array($0) } }

    private func check(_ rc: Int32, _ operation: String) throws(SQLiteError) {
        if rc != SQLITE_OK { throw database.error(rc, operation) }
    }
}
