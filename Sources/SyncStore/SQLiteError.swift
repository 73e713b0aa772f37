internal import CSQLite
import SyncCore

/// An error from SQLite, with the operation that failed, SQLite's result code and its message.
public struct SQLiteError: FailureReason, Sendable {
    /// SQLite's extended result code (`sqlite3_extended_errcode`).
    public let code: Int32
    /// What we were doing, e.g. "open /var/lib/syncd/default/state.db".
    public let operation: String
    /// SQLite's message for the error.
    public let message: String

    /// True when the file is not a database or is damaged (SQLITE_CORRUPT, SQLITE_NOTADB).
    public var isCorruption: Bool {
        let primary = code & 0xff
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    /// True when the file system under the database failed the operation rather than the data: it is full
    /// (SQLITE_FULL: ENOSPC, a quota), read-only (SQLITE_READONLY) or failed the I/O (SQLITE_IOERR).
    public var isStorageFailure: Bool {
        let primary = code & 0xff
        return primary == SQLITE_FULL || primary == SQLITE_READONLY || primary == SQLITE_IOERR
    }

    /// True when the file system under the database is full (SQLITE_FULL).
    public var isFull: Bool { code & 0xff == SQLITE_FULL }

    /// True when the database cannot be written (SQLITE_READONLY: a read-only file system or file).
    public var isReadOnly: Bool { code & 0xff == SQLITE_READONLY }

    /// True when a UNIQUE or PRIMARY KEY constraint refused a row.
    public var isUniqueViolation: Bool {
        // SQLITE_CONSTRAINT_UNIQUE (2067) and SQLITE_CONSTRAINT_PRIMARYKEY (1555) are macros Swift cannot import.
        code == 2067 || code == 1555
    }

    /// True when SQLite could not open or create the file (SQLITE_CANTOPEN).
    public var cannotOpen: Bool { code & 0xff == SQLITE_CANTOPEN }

    /// This error with `advice` (what to do) after SQLite's message.
    public func advising(_ advice: String) -> SQLiteError {
        SQLiteError(code: code, operation: operation, message: "\(message); \(advice)")
    }

    /// "OPERATION: MESSAGE (SQLite code N)", to quote after another "Failed to …:" message.
    public var reason: String { "\(operation): \(message) (SQLite code \(code))" }

    public var description: String { "Failed to \(reason)" }

    init(code: Int32, operation: String, message: String) {
        self.code = code
        self.operation = operation
        self.message = message
    }
}
