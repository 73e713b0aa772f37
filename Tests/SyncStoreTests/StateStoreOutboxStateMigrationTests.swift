import Foundation
import Glibc
import Testing
@testable import SyncStore
import SyncCore

/// A store written by the release whose outbox kept its states as words at the start of `last_error`
/// (schema 2), opened by this one (schema 3): the words move to the columns `superseded` and `not_sent`,
/// and nothing else changes. The store is `Fixtures/store-v2/state.sql`, a dump of what that release wrote,
/// with its cache file `posts.json`.
@Suite("StateStore outbox states from schema 2")
struct StateStoreOutboxStateMigrationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/store-v2")

    /// A directory with the fixture's database (schema 2) and cache file, as that release left them.
    final class VersionTwoFiles {
        let directory = NSTemporaryDirectory() + "syncstore-v2-" + UUID().uuidString
        var path: String { directory + "/state.db" }
        var folder: CacheFolder { CacheFolder(directory: directory + "/cache", account: "default", group: nil) }

        init(extraSQL: String = "") throws {
            try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
            let sql = try String(contentsOf: fixtures.appendingPathComponent("state.sql"), encoding: .utf8)
            let database = try Database(path: path)
            try database.execute("PRAGMA journal_mode=WAL")
            try database.execute(sql)
            if !extraSQL.isEmpty { try database.execute(extraSQL) }
            // The file's inode and change time are this machine's: the store is told them, as if the release
            // had written the file here (its size and hash are the fixture's).
            try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent("posts.json").path, toPath: folder.path(of: "posts"))
            var info = stat()
            guard stat(folder.path(of: "posts"), &info) == 0 else { throw CocoaError(.fileReadUnknown) }
            try database.execute("""
                UPDATE sources SET snapshot_inode = \(Int64(bitPattern: UInt64(info.st_ino))),
                    snapshot_ctime_ns = \(Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
                """)
            database.close()
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Every row of `table`, each as its columns' SQL literals (`quote`), in `rowid` order; `leaving` out columns.
    static func rows(_ database: Database, _ table: String, leaving skipped: Set<String> = []) throws -> [String] {
        let columns = try database.strings("SELECT name FROM pragma_table_info('\(table)')").filter { !skipped.contains($0) }
        return try database.strings("SELECT " + columns.map { "quote(\($0))" }.joined(separator: " || ',' || ") + " FROM \(table) ORDER BY rowid")
    }

    /// The tables besides the outbox, and the outbox's columns that schema 3 keeps as they were.
    static let otherTables = ["sources", "chunks", "conflicts", "id_index", "unwritten", "discarded", "change_log", "sqlite_sequence"]
    static let keptOutboxColumns: Set<String> = ["last_error", "superseded", "not_sent"]
    /// Columns added after the fixture was made, to every store opened (their defaults are checked where they are used).
    static let addedSinceFixture: Set<String> = ["overlay_writes", "overlay_free_hash"]

    @Test func theWordsOfEachStateMoveToItsColumnAndNothingElseChanges() throws {
        let files = try VersionTwoFiles()
        // What the release wrote, read before the new code opens the file.
        let before = try Database(path: files.path, readOnly: true)
        let oldErrors = try before.strings("SELECT coalesce(last_error, '<none>') FROM outbox ORDER BY seq")
        let oldTables = try Self.otherTables.map { try Self.rows(before, $0) }
        let oldOutbox = try Self.rows(before, "outbox", leaving: Self.keptOutboxColumns)
        before.close()
        #expect(oldErrors[3] == "superseded by a newer change; was: HTTP 422 from http://h/posts/bad: title is required")

        let store = try StateStore(path: files.path, cacheFolder: files.folder)
        #expect(try store.database.integerPragma("user_version") == 3)
        let entries = try store.outbox(source: "posts")
        #expect(entries.map(\.seq) == Array(1...11))
        // The states, from the columns.
        #expect(entries.filter(\.isSuperseded).map(\.seq) == [4, 10])
        #expect(entries.filter(\.notSent).map(\.seq) == [3])
        // The messages without the words; the words only where they began the message of a change in that state.
        #expect(entries[3].lastError == "HTTP 422 from http://h/posts/bad: title is required")
        #expect(entries[9].lastError == "HTTP 400 from http://h/posts: bad")
        #expect(entries[2].lastError == "Failed to connect to h port 80: Connection refused")
        #expect(entries[1].lastError == StateStore.answerPending && !entries[1].notSent)
        #expect(entries[5].lastError == "HTTP 403 from http://h/posts/refused: not sent: forbidden" && !entries[5].notSent)
        #expect(entries[7].lastError == "HTTP 412 from http://h/posts/3: superseded by a newer change; was: quoted" && !entries[7].superseded)
        #expect(entries[8].lastError == "HTTP 503 from http://h/posts: not sent: superseded by a newer change; was: busy")
        #expect(!entries[8].superseded && !entries[8].notSent)
        // People read every message as before.
        #expect(entries.map { $0.shownError ?? "<none>" } == oldErrors)
        // The counts and the local view are those the release showed (pending 8, parked 1, unpushed 7, conflicts 1).
        let state = try store.state(of: "posts", countingLocalView: true)
        #expect((state.pendingCount, state.parkedCount, state.unpushedCount, state.conflictCount) == (8, 1, 7, 1))
        #expect((state.changedRecordCount, state.localRecordCount) == (9, 9))
        let lists = try store.pendingAndConflicts(source: "posts")
        #expect(lists.pending.map(\.key) == ["fresh", "lost", "offline", "bad", "refused", "2", "busy", "twice"])
        let parked = try store.parkedIDs(source: "posts")
        #expect(lists.conflicts.map(\.key) == ["3"] && parked.map(\.key) == ["refused"])
        // Nothing else changed: every other table (the outbox stamp in `sources` included: the cache file is
        // still current) and every other outbox column.
        #expect(try Self.otherTables.map { try Self.rows(store.database, $0, leaving: Self.addedSinceFixture) } == oldTables)
        #expect(try Self.rows(store.database, "outbox", leaving: Self.keptOutboxColumns) == oldOutbox)
        // The file written from it is the one the release wrote.
        try store.setSnapshotDirty(source: "posts", true)
        try store.rebuildCacheFile(source: "posts")
        let written = try String(contentsOfFile: files.folder.path(of: "posts"), encoding: .utf8)
        #expect(written == (try String(contentsOf: Self.fixtures.appendingPathComponent("posts.json"), encoding: .utf8)))
        store.close()

        // Opened again, nothing moves twice.
        let again = try StateStore(path: files.path, cacheFolder: files.folder)
        #expect(try again.outbox(source: "posts") == entries)
    }

    /// The conversion is one transaction: one that fails leaves the file as the release wrote it (version 2,
    /// words in the messages, no new columns), and the next open converts it.
    @Test func aConversionThatFailsLeavesVersionTwoWhole() throws {
        let files = try VersionTwoFiles(extraSQL: """
            CREATE TRIGGER refuse AFTER UPDATE ON outbox BEGIN SELECT RAISE(ABORT, 'disk gone'); END;
            """)
        #expect(throws: StoreError.self) { try StateStore(path: files.path, cacheFolder: files.folder) }
        let after = try Database(path: files.path)
        #expect(try after.integerPragma("user_version") == 2)
        #expect(try after.strings("SELECT name FROM pragma_table_info('outbox') WHERE name IN ('superseded', 'not_sent')") == [])
        #expect(try after.strings("SELECT last_error FROM outbox WHERE seq = 4") == ["superseded by a newer change; was: HTTP 422 from http://h/posts/bad: title is required"])
        try after.execute("DROP TRIGGER refuse")
        after.close()
        let store = try StateStore(path: files.path, cacheFolder: files.folder)
        #expect(try store.outbox(source: "posts").filter(\.isSuperseded).map(\.seq) == [4, 10])
    }

    @Test func aReadOnlyOpenOfVersionTwoSaysTheDaemonConvertsIt() throws {
        let files = try VersionTwoFiles()
        #expect { try StateStore(readingFrom: files.path) } throws: { error in
            "\(error)".contains("schema version 2, which syncd converts when it starts: start syncd, then ask again")
        }
    }
}

/// The outbox states as columns: set and cleared by the store's own writes.
@Suite("StateStore outbox state columns")
struct StateStoreOutboxStateTests {
    @Test func aSupersededChangeIsMarkedByItsColumnAndARetryClearsIt() throws {
        let t = try TemporaryStore()
        let entry = try #require(try t.store.enqueue(source: "posts", recordID: "a", idIsInteger: false, operation: .update,
                                                     body: Array("{}".utf8), baseVersion: nil, at: "2026-12-01T10:00:00Z", idempotencyKey: "k"))
        try t.store.markSuperseded(entry.seq)
        #expect(try t.store.outboxEntry(entry.seq)?.superseded == false, "only a parked change is superseded")
        try t.store.park(entry.seq, status: 400, error: "HTTP 400 from PUT http://h/posts/a")
        try t.store.markSuperseded(entry.seq)
        let superseded = try #require(try t.store.outboxEntry(entry.seq))
        #expect(superseded.isSuperseded && superseded.lastError == "HTTP 400 from PUT http://h/posts/a")
        #expect(superseded.shownError == "superseded by a newer change; was: HTTP 400 from PUT http://h/posts/a")
        try t.store.requeue(entry.seq)
        let retried = try #require(try t.store.outboxEntry(entry.seq))
        #expect(!retried.superseded && retried.shownError == nil)
    }

    @Test func aRequestThatNeverLeftIsMarkedUntilTheNextAttempt() throws {
        let t = try TemporaryStore()
        let entry = try #require(try t.store.enqueue(source: "posts", recordID: "a", idIsInteger: false, operation: .create,
                                                     body: Array("{}".utf8), baseVersion: nil, at: "2026-12-01T10:00:00Z", idempotencyKey: "k"))
        _ = try t.store.markAttempt(entry.seq, at: AttemptTime(boot: "b", uptime: 1))
        try t.store.noteFailure(entry.seq, status: nil, error: "Failed to connect", notSent: true)
        let unsent = try #require(try t.store.outboxEntry(entry.seq))
        #expect(unsent.notSent && unsent.lastError == "Failed to connect" && unsent.shownError == "not sent: Failed to connect")
        let next = try #require(try t.store.markAttempt(entry.seq, at: AttemptTime(boot: "b", uptime: 2)))
        #expect(!next.notSent && next.shownError == StateStore.answerPending)
    }
}
