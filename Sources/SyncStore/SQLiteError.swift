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

    /// True when a UNIQUE or PRIMARY KEY constraint refused a row.
    public var isUniqueViolation: Bool {
        // SQLITE_CONSTRAINT_UNIQUE (2067) and SQLITE_CONSTRAINT_PRIMARYKEY (1555) are macros Swift cannot import.
        code == 2067 || code == 1555
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
