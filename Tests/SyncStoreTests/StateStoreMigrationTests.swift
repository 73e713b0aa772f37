import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// The schema of version 1 as syncd 1 created it: a fixture, never to be edited.
private let schemaVersion1 = """
    BEGIN IMMEDIATE;
    CREATE TABLE sources (
        name TEXT PRIMARY KEY, url TEXT, etag TEXT, last_modified TEXT, saved_at TEXT, last_success TEXT,
        last_attempt TEXT, last_error TEXT, record_count INTEGER NOT NULL DEFAULT 0,
        snapshot_dirty INTEGER NOT NULL DEFAULT 0, retry_state TEXT
    );
    CREATE TABLE chunks (source TEXT NOT NULL, seq INTEGER NOT NULL, records INTEGER NOT NULL, data BLOB NOT NULL, UNIQUE (source, seq));
    CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, record_id TEXT NOT NULL,
        id_is_integer INTEGER NOT NULL DEFAULT 0,
        operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'delete')), body BLOB, base_version TEXT,
        created_at TEXT NOT NULL, idempotency_key TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'parked', 'conflict')),
        attempts INTEGER NOT NULL DEFAULT 0, unconfirmed INTEGER NOT NULL DEFAULT 0, last_status INTEGER, last_error TEXT
    );
    CREATE INDEX outbox_by_record ON outbox (source, record_id, seq);
    CREATE TABLE conflicts (
        source TEXT NOT NULL, record_id TEXT NOT NULL, remote_body BLOB, remote_version TEXT, detected_at TEXT NOT NULL,
        PRIMARY KEY (source, record_id)
    );
    PRAGMA user_version = 1;
    COMMIT;
    """

@Suite("StateStore migration")
struct StateStoreMigrationTests {
    /// A directory with a schema-1 database holding one synced source, a retry state and a parked change.
    private func versionOneFile() throws -> (directory: String, path: String) {
        let directory = NSTemporaryDirectory() + "syncstore-v1-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/state.db"
        // Schema 1 framed the bodies into the chunks.
        var chunk: [UInt8] = []
        for (id, body) in records(3) {
            LegacyRecordChunk.append(id: id, idIsInteger: true, version: id == "2" ? "v2" : nil, body: body, to: &chunk)
        }
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode=WAL")
        try database.execute(schemaVersion1)
        try database.execute("""
            INSERT INTO sources (name, url, etag, saved_at, last_success, last_attempt, record_count, snapshot_dirty, retry_state)
            VALUES ('posts', 'http://h/posts', '"e1"', '2026-11-29T10:00:00Z', '2026-11-29T10:00:00Z', '2026-11-29T10:00:00Z', 3, 0, '{"attempt":2}');
            INSERT INTO outbox (source, record_id, operation, body, created_at, idempotency_key, state)
            VALUES ('posts', '9', 'create', '{"id":9}', '2026-11-29T10:01:00Z', 'k1', 'parked');
            """)
        let insert = try database.prepare("INSERT INTO chunks (source, seq, records, data) VALUES ('posts', 0, 3, ?1)")
        try chunk.withUnsafeBytes { try insert.bind(1, blob: $0) }
        try insert.step()
        return (directory, path)
    }

    private func folder(_ directory: String) throws -> CacheFolder {
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        return CacheFolder(directory: directory + "/cache", account: "default", group: nil)
    }

    @Test func versionOneIsConvertedKeepingEverythingAndItsListingPublishedWithoutBodiesInTheStore() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = try folder(directory)
        let store = try StateStore(path: path, cacheFolder: folder)
        #expect(try store.database.integerPragma("user_version") == StateStore.schemaVersion)
        #expect(try store.legacySources() == ["posts"])
        #expect(try store.migrateLegacyListing(source: "posts") == 3)
        try store.finishLegacyMigration()
        #expect(try store.legacySources() == [])
        let state = try store.state(of: "posts")
        #expect(state.url == "http://h/posts")
        #expect(state.etag == "\"e1\"")
        #expect(state.savedAt == "2026-11-29T10:00:00Z")
        #expect(state.lastSuccess == "2026-11-29T10:00:00Z")
        #expect(state.recordCount == 3)
        #expect(state.retryState == "{\"attempt\":2}")
        #expect(state.unpushedCount == 1)
        #expect(!state.snapshotDirty)
        #expect(state.snapshotFingerprint != nil)
        #expect(try storedBodies(store) == records(3).map { String(decoding: $0.1, as: UTF8.self) })
        var versions: [String?] = []
        try store.forEachRecord(source: "posts") { versions.append($0.version) }
        #expect(versions == [nil, "v2", nil])
        #expect(store.undeliveredChangeCount() == 1)
        // The file is the local view: the listing, then the parked local creation.
        let file = withoutPadding(try String(contentsOfFile: folder.path(of: "posts"), encoding: .utf8))
        #expect(file == "{\"schemaVersion\":1,\"source\":\"posts\",\"accountID\":\"default\",\"savedAt\":\"2026-11-29T10:00:00Z\",\"etag\":\"\\\"e1\\\"\",\n"
                + "\"records\":[\n{\"id\":1,\"v\":0},\n{\"id\":2,\"v\":0},\n{\"id\":3,\"v\":0},\n{\"id\":9}\n],\n\"pending\":[\"9\"],\"parked\":[\"9\"],\"conflicts\":[]}\n")
        // No body is left in the store.
        let tables = try store.database.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'v1_chunks'")
        _ = try tables.step()
        #expect(tables.int64(0) == 0)
    }

    /// What a file's schema is, whatever statements built it: every table with its SQL (white space left out,
    /// as `ALTER TABLE` lays added columns out otherwise) and its columns in order (name, type, NOT NULL,
    /// default, key position); every index, automatic ones included, with the columns it covers; every trigger
    /// with its SQL, in the order they were created, which is the order SQLite fires those of one event in.
    private func schema(_ database: Database) throws -> [String] {
        var lines: [String] = []
        let tables = try database.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        while try tables.step() {
            let table = tables.string(0) ?? ""
            lines.append("table \(table): " + (tables.string(1) ?? "").filter { !$0.isWhitespace })
            let columns = try database.prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)")
            try columns.bind(1, table)
            while try columns.step() {
                lines.append("\(table).\(columns.string(0) ?? "") \(columns.string(1) ?? "") notnull=\(columns.int64(2)) "
                             + "default=\(columns.string(3) ?? "-") pk=\(columns.int64(4))")
            }
        }
        let indexes = try database.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' ORDER BY name")
        while try indexes.step() {
            let index = indexes.string(0) ?? ""
            let columns = try database.prepare("SELECT coalesce(name, '(rowid)'), \"desc\", coll, key FROM pragma_index_xinfo(?1)")
            try columns.bind(1, index)
            var covered: [String] = []
            while try columns.step() {
                covered.append("\(columns.string(0) ?? "") desc=\(columns.int64(1)) \(columns.string(2) ?? "") key=\(columns.int64(3))")
            }
            lines.append("index \(index) on \(indexes.string(1) ?? ""): " + covered.joined(separator: ", "))
        }
        lines += try database.strings("SELECT 'trigger ' || name || ' on ' || tbl_name || ': ' || sql FROM sqlite_master WHERE type = 'trigger' ORDER BY rowid")
        return lines
    }

    /// A new file is created with the whole schema at once; a file of an older schema gains it by conversion and
    /// `ALTER TABLE`. Both must end the same, or a fresh install and an upgraded one would behave differently.
    @Test func aNewFileHasTheSchemaAnUpgradedOneEndsWith() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let upgraded = try StateStore(path: path, cacheFolder: try folder(directory))
        try upgraded.migrateLegacyListing(source: "posts")
        try upgraded.finishLegacyMigration()
        let fresh = try StateStore(path: directory + "/fresh.db", cacheFolder: try folder(directory))
        let expected = try schema(upgraded.database)
        #expect(expected.count > 60, "the comparison covers every column, index and trigger")
        #expect(expected.contains { $0.hasPrefix("index sqlite_autoindex_chunks_1 on chunks: source") })
        #expect(expected.contains { $0.hasPrefix("sources.change_floor INTEGER notnull=1 default=0") })
        #expect(expected.contains { $0.hasPrefix("trigger change_log_insert") })
        #expect(try schema(fresh.database) == expected)
    }

    @Test func aConversionInterruptedBeforeItsCommitIsDoneAgainAtTheNextOpen() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = try folder(directory)
        do {
            // Converted to schema 2, but the listing not yet published (a crash right after the open).
            _ = try StateStore(path: path, cacheFolder: folder)
        }
        let again = try StateStore(path: path, cacheFolder: folder)
        #expect(try again.legacySources() == ["posts"])
        try again.migrateLegacyListing(source: "posts")
        #expect(try storedBodies(again).count == 3)
        #expect(throws: StoreError.self) { try StateStore(readingFrom: directory + "/missing.db") }
    }

    /// A conversion that failed at start (a full disk) is done by the next local change, and a listing
    /// from the server supersedes the schema-1 copy: a later conversion never brings the older one back.
    @Test func aListingOrALocalChangeSettlesAnUnconvertedSource() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = try folder(directory)
        let first = try StateStore(path: path, cacheFolder: folder)
        try first.rebuildCacheFile(source: "posts")
        #expect(try first.legacySources() == [])
        #expect(try storedBodies(first).count == 3)
        #expect(try String(contentsOfFile: folder.path(of: "posts"), encoding: .utf8).contains("{\"id\":9}"))

        let (other, otherPath) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: other) }
        let converted = try StateStore(path: otherPath, cacheFolder: try self.folder(other))
        try store(records(5, version: 1), into: converted)
        #expect(try converted.legacySources() == [])
        #expect(try storedBodies(converted) == records(5, version: 1).map { String(decoding: $0.1, as: UTF8.self) })
    }

    /// The discarded changes' table (StateStore+Discarded) is added to a file of an earlier syncd, whose outbox
    /// entries can then be discarded, listed and queued again.
    @Test func versionOneGainsTheDiscardedChangesAndKeepsItsOutbox() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(path: path, cacheFolder: try folder(directory))
        #expect(try store.discarded(source: nil) == [])
        let parked = try #require(try store.outbox(source: "posts").first)
        #expect(parked.recordID == "9" && parked.state == .parked)
        let kept = try #require(try store.discard(parked.seq, reason: "r", serverBody: nil, serverVersion: nil, at: "2026-11-29T11:00:00Z"))
        #expect(kept.body == Array("{\"id\":9}".utf8) && kept.operation == .create && kept.createdAt == "2026-11-29T10:01:00Z")
        #expect(try store.outbox(source: "posts") == [])
        #expect(try store.restoreDiscarded(parked.seq, operation: .create, body: kept.body, baseVersion: nil,
                                           at: "2026-11-29T12:00:00Z", idempotencyKey: "k2"))
        #expect(try store.outbox(source: "posts").map(\.recordID) == ["9"])
        #expect(try store.discarded(source: nil) == [])
    }

    @Test func aReadOnlyOpenOfVersionOneSaysTheDaemonConvertsIt() throws {
        let (directory, path) = try versionOneFile()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect { try StateStore(readingFrom: path) } throws: { error in
            "\(error)".contains("schema version 1, which syncd converts when it starts")
        }
    }

    @Test func fingerprintsSurviveSignedIntegers() throws {
        let t = try TemporaryStore()
        try store(records(3), into: t.store)
        // Values with the top bit set must survive SQLite's signed integers.
        let fingerprint = SnapshotFingerprint(size: 1234, inode: UInt64.max - 5, changeTime: 1_780_000_000_123_456_789, hash: 0xFBCE_A83C_8A37_8BF1)
        try t.store.setSnapshotDirty(source: "posts", true)
        try t.store.recordSnapshot(source: "posts", fingerprint)
        let again = try StateStore(path: t.path)
        let state = try again.state(of: "posts")
        #expect(state.snapshotFingerprint == fingerprint)
        #expect(!state.snapshotDirty, "recording the file clears the dirty mark")
        #expect(state.recordCount == 3)
    }

    /// A file written before the outbox kept when an attempt began (`attempt_boot`, `attempt_uptime_ms`) and how
    /// often a create was sent again (`blind_resends`): the columns are added, every row and member is kept, and
    /// an attempted change has no boot clock reading (its lost create then waits LostCreateWaitSec= from when
    /// syncd next looks at it, never less).
    @Test func attemptTimesAreAddedToAnOutboxWrittenWithoutThem() throws {
        let t = try TemporaryStore()
        let lost = try #require(try t.store.enqueue(source: "posts", recordID: "lost", idIsInteger: false, operation: .create,
                                                    body: Array("{\"id\":\"lost\"}".utf8), baseVersion: nil,
                                                    at: "2026-11-29T10:00:00Z", idempotencyKey: "k1"))
        try t.store.enqueue(source: "posts", recordID: "later", idIsInteger: false, operation: .create,
                            body: Array("{\"id\":\"later\"}".utf8), baseVersion: nil, at: "2026-11-29T10:01:00Z", idempotencyKey: "k2")
        _ = try t.store.markAttempt(lost.seq, at: AttemptTime(boot: "b0", uptime: 5))
        // As the release before these columns wrote it.
        for column in ["attempt_boot", "attempt_uptime_ms", "blind_resends"] {
            try t.store.database.execute("ALTER TABLE outbox DROP COLUMN \(column)")
        }
        t.store.close()

        let reopened = try StateStore(path: t.path, cacheFolder: t.folder)
        let entries = try reopened.outbox(source: "posts")
        #expect(entries.map(\.recordID) == ["lost", "later"])
        #expect(entries.map(\.idempotencyKey) == ["k1", "k2"])
        #expect(entries[0].attempts == 1 && entries[0].lastError == StateStore.answerPending)
        #expect(entries[1].attempts == 0)
        // No boot clock reading: the wait of the lost create starts when syncd next looks at it (LostCreateWait).
        #expect(entries.allSatisfy { $0.attemptBoot == nil && $0.attemptUptime == nil && $0.blindResends == 0 })
        // The next attempt keeps its own time; a wait stamped anew and a create sent again are kept.
        _ = try reopened.markAttempt(entries[1].seq, at: AttemptTime(boot: "b1", uptime: 42))
        try reopened.restampAttempt(entries[0].seq, at: AttemptTime(boot: "b1", uptime: 99))
        try reopened.markResent(entries[0].seq)
        let kept = try reopened.outbox(source: "posts")
        #expect(kept[1].attemptBoot == "b1" && kept[1].attemptUptime == 42 && kept[1].attempts == 1)
        #expect(kept[0].attemptBoot == "b1" && kept[0].attemptUptime == 99 && kept[0].attempts == 1)
        #expect(kept[0].blindResends == 1 && kept[1].blindResends == 0)
    }

    @Test func newFileIsCreatedAtTheCurrentVersion() throws {
        let t = try TemporaryStore()
        #expect(try t.store.database.integerPragma("user_version") == StateStore.schemaVersion)
        #expect(try t.store.state(of: "posts").snapshotFingerprint == nil)
    }
}

@Suite("StateStore damage")
struct StateStoreDamageTests {
    @Test func damageBelowTheHeaderOpensThenIsReportedByTheOperationThatReadsIt() throws {
        let t = try TemporaryStore()
        let body = String(repeating: "x", count: 2000)
        try store((1...2000).map { (String($0), Array("{\"id\":\($0),\"b\":\"\(body)\"}".utf8)) }, into: t.store)
        try t.store.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(t.store.damage == nil)
        let handle = try #require(FileHandle(forUpdatingAtPath: t.path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        var generator = SystemRandomNumberGenerator()
        handle.write(Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try handle.close()

        // Opening reads the header and schema only: no check of every page (it would read the whole file).
        let damaged = try StateStore(path: t.path, cacheFolder: t.folder)
        #expect(damaged.damage == nil)
        #expect(throws: (any Error).self) { try damaged.forEachRecord(source: "posts") { _ in } }
        let damage = try #require(damaged.damage)
        #expect(damage.isCorruption)
        #expect(damaged.undeliveredChangeCount() == 0, "the small outbox table is still readable")

        damaged.close()
        #expect { try damaged.state(of: "posts") } throws: { error in
            "\(error)".contains("the database connection is closed")
        }
    }
}
