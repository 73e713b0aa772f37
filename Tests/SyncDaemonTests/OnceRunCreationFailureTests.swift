@testable import SyncStore
import Testing
@testable import SyncDaemon

/// What `syncd --once` says when the store it built aside could not be put in place (`OnceRun.creationFailure`).
@Suite("syncd --once: a store that could not be put in place")
struct OnceRunCreationFailureTests {
    let database = "/var/lib/syncd/default/state.db"
    let folder = "/var/lib/syncd/default"

    /// The error `StateStore.finishCreation()` throws for a system call that failed with `errno`.
    private func failure(_ operation: String, code: Int32, message: String) -> StoreError {
        .sqlite(SQLiteError(code: code, operation: operation, message: message))
    }

    @Test("a full state folder: which folder, what to do, and that the next run starts over")
    func full() {
        let error = failure("execute PRAGMA journal_mode=WAL", code: 13, message: "disk I/O error: No space left on device")
        #expect(OnceRun.creationFailure(error, database: database, folder: folder, kept: false)
                == "syncd: Failed to execute PRAGMA journal_mode=WAL: disk I/O error: No space left on device (SQLite code 13); "
                + "the file system of the state folder /var/lib/syncd/default is full: free some space in /var/lib/syncd/default, "
                + "then run syncd --once again (/var/lib/syncd/default/state.db was not kept: the next run starts with an empty one "
                + "and fetches every listing again)")
    }

    @Test("a read-only state folder, and any other failure, say what to do too")
    func readOnlyAndOther() {
        let readOnly = failure("rename a to b", code: 8, message: "Read-only file system")
        #expect(OnceRun.creationFailure(readOnly, database: database, folder: folder, kept: false).contains(
            "; the state folder /var/lib/syncd/default cannot be written (a read-only file system?): make it writable, then run syncd --once again ("))
        let other = failure("flush a to disk", code: 10, message: "Input/output error")
        #expect(OnceRun.creationFailure(other, database: database, folder: folder, kept: false).contains(
            "; check the file system of the state folder /var/lib/syncd/default (the kernel log says why), then run syncd --once again ("))
    }

    @Test("when only the folder's flush failed, the database is in place and the message says so")
    func inPlace() {
        let error = failure("flush /var/lib/syncd/default after renaming", code: 10, message: "Input/output error")
        #expect(OnceRun.creationFailure(error, database: database, folder: folder, kept: true)
            .hasSuffix("(/var/lib/syncd/default/state.db is in place, but a power cut may still take it away)"))
    }
}
