@testable import SyncStore
import Testing
@testable import SyncEngine

/// A failing file system under the state database is a local failure with advice, never the server's.
@Suite("State storage failure")
struct StateStorageFailureTests {
    let path = "/var/lib/syncd/default/state.db"
    let diskFull = SQLiteError(code: 13, operation: "run INSERT INTO outbox", message: "database or disk is full")

    @Test("a full state folder makes a transient failure local and says which folder to free space in")
    func full() {
        let failure = RefreshFailure(.transient, "Failed to run INSERT INTO outbox: database or disk is full (SQLite code 13)")
        let local = StateStorageFailure.attributed(failure, storage: diskFull, database: path, source: "posts")
        #expect(local.kind == .local)
        #expect(local.message == "Failed to run INSERT INTO outbox: database or disk is full (SQLite code 13); the file system "
                + "of the state folder /var/lib/syncd/default is full: free some space in /var/lib/syncd/default, then run "
                + "`syncctl refresh posts` (the daemon also retries by itself, every MaxDelaySec= at most, until the write "
                + "succeeds; queued local changes stay queued)")
    }

    @Test("syncd --once, which has no daemon to ask nor to retry, advises running it again")
    func once() {
        let failure = RefreshFailure(.transient, "Failed to execute COMMIT: database or disk is full (SQLite code 13)")
        let local = StateStorageFailure.attributed(failure, storage: diskFull, database: path, source: "posts", once: true)
        #expect(local.kind == .local)
        #expect(local.message == "Failed to execute COMMIT: database or disk is full (SQLite code 13); the file system of the state "
                + "folder /var/lib/syncd/default is full: free some space in /var/lib/syncd/default, then run syncd --once again")
    }

    @Test("a failure that does not quote SQLite's error gets it")
    func quoted() {
        let failure = RefreshFailure(.transient, "HTTP 503 from http://h/posts")
        let local = StateStorageFailure.attributed(failure, storage: diskFull, database: path, source: "posts")
        #expect(local.message.hasPrefix("HTTP 503 from http://h/posts: Failed to run INSERT INTO outbox: database or disk is full (SQLite code 13); "))
    }

    @Test("read-only and I/O errors name the folder and what to do", arguments: [
        (Int32(8), "the state folder /s cannot be written (a read-only file system?): make it writable, then run"),
        (Int32(10 | (4 << 8)), "the file system of the state folder /s failed a write: check it (the kernel log says why), then run"),
    ])
    func otherStorageFailures(code: Int32, advice: String) {
        let storage = SQLiteError(code: code, operation: "run UPDATE sources", message: "failed")
        let local = StateStorageFailure.attributed(RefreshFailure(.transient, "x"), storage: storage, database: "/s/state.db", source: "a")
        #expect(local.kind == .local)
        #expect(local.message.contains(advice))
    }

    @Test("without a storage failure, and for permanent or cancelled failures, nothing changes", arguments: [
        RefreshFailure.Kind.transient, .permanent, .cancelled, .local,
    ])
    func unchanged(kind: RefreshFailure.Kind) {
        let failure = RefreshFailure(kind, "HTTP 404 from http://h/posts: check URL=")
        #expect(StateStorageFailure.attributed(failure, storage: nil, database: path, source: "posts").message == failure.message)
        if kind != .transient {
            let classified = StateStorageFailure.attributed(failure, storage: diskFull, database: path, source: "posts")
            #expect(classified.kind == kind && classified.message == failure.message)
        }
    }

    @Test("SQLite's codes for a failing file system, and not for others", arguments: [
        (Int32(13), true), (Int32(8), true), (Int32(10), true), (Int32(10 | (3 << 8)), true),
        (Int32(5), false), (Int32(11), false), (Int32(19), false), (Int32(1), false),
    ])
    func codes(code: Int32, isStorage: Bool) {
        #expect(SQLiteError(code: code, operation: "x", message: "y").isStorageFailure == isStorage)
    }

    @Test("the folder of the database")
    func folder() {
        #expect(StateStorageFailure.folder(of: path) == "/var/lib/syncd/default")
        #expect(StateStorageFailure.folder(of: "/state.db") == "/")
        #expect(StateStorageFailure.folder(of: "state.db") == ".")
    }
}
