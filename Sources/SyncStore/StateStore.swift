internal import CSQLite
internal import Glibc
import SyncCore

/// What the store remembers about one source between refreshes.
public struct SourceState: Sendable, Equatable {
    /// Source name.
    public var name: String
    /// URL the stored listing came from.
    public var url: String?
    /// `ETag` of the last good listing (sent back as `If-None-Match`).
    public var etag: String?
    /// `Last-Modified` of the last good listing (sent back as `If-Modified-Since`).
    public var lastModified: String?
    /// When the cached content was last replaced (RFC 3339).
    public var savedAt: String?
    /// When a refresh last succeeded (RFC 3339).
    public var lastSuccess: String?
    /// When a refresh was last attempted (RFC 3339).
    public var lastAttempt: String?
    /// Why the last refresh failed; nil after a success.
    public var lastError: String?
    /// `lastError` without what the server wrote, for callers who may not read it (docs/control-api.md,
    /// "Secrets"); nil when written by a syncd that did not keep it apart.
    public var lastErrorPublic: String?
    /// Number of records in the server's last good listing.
    public var recordCount: Int
    /// Number of records in the local view (the cache file): `recordCount` with local changes applied.
    /// Exact only from `state(of:countingLocalView: true)`; otherwise `recordCount`.
    public var localRecordCount = 0
    /// True when the cache file must be (re)written from the store.
    public var snapshotDirty: Bool
    /// Retry state exported by the scheduler, opaque to the store.
    public var retryState: String?
    /// Records with local changes the server has not confirmed yet (queued, sent, or parked): the cache file's
    /// `pending` list, counted. Records in conflict are apart (`conflictCount`).
    public var pendingCount = 0
    /// Of the pending records, those with a change the server refused (parked, not superseded): waiting for a person.
    public var parkedCount = 0
    /// Warnings of the latest listing that did not fail it (filled by the daemon, not stored).
    public var notices: [SourceNotice] = []
    /// Records with local changes not yet delivered (queued or parked): what logging out would lose.
    /// Pushed changes still waiting for a listing to confirm them count in `pendingCount` only.
    public var unpushedCount = 0
    /// Records whose local change conflicts with the server (ConflictPolicy=manual).
    public var conflictCount = 0
    /// Records with any entry in the outbox, whatever its state (parked and superseded ones too): the only
    /// records in which the local view can differ from the listing.
    public var changedRecordCount = 0
    /// What the cache file looked like when syncd last wrote or confirmed it; nil when not known
    /// (never written, or written before the fingerprint columns existed).
    public var snapshotFingerprint: SnapshotFingerprint?

    /// Records in the cache file as syncd last wrote it; nil before the first write (or when written by a
    /// syncd that did not count them).
    public var snapshotRecordCount: Int?

    /// The source's change sequence number: the number of the latest change to what its cache file holds
    /// (docs/control-api.md, "Changes"); 0 before the first.
    public var changeSeq: Int64 = 0

    /// The checkpoint of the source's incremental pull (syncd.conf(5), "Incremental pull"); nil when none is held.
    public var deltaCheckpoint: DeltaCheckpoint?
    /// Where an interrupted full listing stands, when one is staged (StateStore+ListingResume).
    public var listingResume: ListingResumePoint?

    /// True when the last refresh failed: the served copy may be out of date.
    public var isStale: Bool { lastError != nil }

    /// Records in the cache file apps read: the local view, unless a failed write left the file behind the
    /// store, then what the file holds (0 when it was never written; the local view when a file written by
    /// an older syncd was not counted).
    public var cachedRecordCount: Int {
        guard snapshotDirty else { return localRecordCount }
        if let snapshotRecordCount { return snapshotRecordCount }
        return snapshotFingerprint == nil ? 0 : localRecordCount
    }

    /// Records of the store's view not yet written to the cache file (a write failed); nil when the file is current.
    /// Counted from the records changed locally since the last write; a rewrite owed for another reason (a
    /// write not yet durable) counts none.
    /// A file behind only until the rewrite that follows a change (`cacheFileWriteScheduled`) is not a failure: none.
    public var unwrittenRecordCount: Int? {
        snapshotDirty && !cacheFileWriteScheduled && changedSinceWrite > 0 ? changedSinceWrite : nil
    }

    /// The cache file is behind the store only until the rewrite that follows a change, now or scheduled for a
    /// burst (`CacheFileCoalescing`): it shows the changes within moments, and no write failed.
    public var cacheFileWriteScheduled = false

    /// Records of the local view the cache file lacks or holds differently (changed since its last write).
    public var changedSinceWrite = 0

    /// "2 cached records; 5 records not yet written to the cache file" (the second part only while the store is
    /// ahead of the file): how messages count what apps read.
    public var cacheFileSummary: String {
        let held = "\(cachedRecordCount) cached \(cachedRecordCount == 1 ? "record" : "records")"
        guard let unwritten = unwrittenRecordCount else { return held }
        return held + "; \(counted(unwritten, "record")) not yet written to the cache file"
    }

    /// An empty state for a source never synced.
    public init(name: String) {
        self.name = name
        self.recordCount = 0
        self.snapshotDirty = false
    }
}

/// What syncd remembers about the cache file it last wrote or confirmed, to recognise it later
/// (docs/architecture.md, "The cache file"): a file whose size differs is not syncd's; one whose inode or
/// change time differs is hashed and compared.
public struct SnapshotFingerprint: Sendable, Equatable {
    /// Size in bytes.
    public var size: Int64
    /// Inode number.
    public var inode: UInt64
    /// Status change time (`st_ctim`) in nanoseconds since the epoch: every write, `utimensat`, `chmod`
    /// or `rename` moves it, and no one can set it back.
    public var changeTime: Int64
    /// XXH64 of the bytes.
    public var hash: UInt64

    /// Creates a fingerprint.
    public init(size: Int64, inode: UInt64, changeTime: Int64, hash: UInt64) {
        self.size = size
        self.inode = inode
        self.changeTime = changeTime
        self.hash = hash
    }
}

/// The daemon's durable state for one account: records, sync state, outbox and conflicts, in one SQLite file (WAL mode).
public final class StateStore {
    /// The schema version this build writes; a newer file is moved aside rather than guessed at.
    /// Additions an older syncd can live with (nullable columns it never names) do not bump it.
    /// Version 2 keeps no bodies: the index of each listing, and the cache file holds the bodies
    /// (docs/architecture.md, "Storing listings"); a version-1 file is converted when opened.
    /// Version 3 keeps where an outbox entry stands apart from its message: columns `superseded` and
    /// `not_sent`, where version 2 began `last_error` with words (`moveOutboxMarksToColumns`).
    public static let schemaVersion: Int64 = 3

    let database: Database
    /// Path of the database file (for a store built aside, the file it becomes).
    public var path: String { asideTarget ?? database.path }
    /// The database file a store built aside becomes at `finishCreation()`; nil once it did, and for a store
    /// opened in place.
    var asideTarget: String?
    /// The account's cache folder: the listings' bodies are in its files. Nil only for a store that never
    /// stores or reads a listing (reading one then fails with a clear error).
    public var cacheFolder: CacheFolder?
    /// Whether the file has the `unwritten` table (StateStore+Unwritten): always once the daemon opened it for
    /// writing; a read-only store looks once, at open.
    private(set) var hasUnwrittenTable = true
    /// Whether the file has the `discarded` table (StateStore+Discarded), like `hasUnwrittenTable`.
    private(set) var hasDiscardedTable = true
    /// Whether the file has the change log (StateStore+ChangeLog), like `hasUnwrittenTable`.
    private(set) var hasChangeLog = true
    /// Whether the file has the `delta_checkpoints` table (StateStore+DeltaCheckpoint), like `hasUnwrittenTable`.
    private(set) var hasDeltaCheckpoints = true
    /// Whether the file has the staged pages of interrupted listings (StateStore+ListingResume), like `hasUnwrittenTable`.
    private(set) var hasListingResume = true
    /// Counts the store's work when set (tests).
    var workCounter: StoreWorkCounter?
    /// How new cache files copy ranges of the previous one: `copy_file_range(2)` unless a test injects a failure.
    var rangeCopier = RangeCopier.kernel
    /// How new cache files are flushed to disk (`CacheFileOutput.syncer`).
    var fileSyncer = FileSyncer.kernel
    /// The outbox counts of each source as last counted (StateStore+OutboxCounts).
    var countedOutboxes: [String: CountedOutbox] = [:]

    /// Opens the database at `path`, creating or migrating the schema; the listings' bodies are read from
    /// and written to the cache files in `cacheFolder`.
    /// Throws `StoreError.corrupt` when the file is damaged or from an unknown (newer) schema.
    public init(path: String, cacheFolder: CacheFolder? = nil) throws(StoreError) {
        self.cacheFolder = cacheFolder
        do {
            database = try Database(path: path)
            // A 1 MiB page cache: the index streams through it once, so a larger one only held resident
            // memory (docs/benchmarks.md, "Storage (issue 12)"). Pages stay SQLite's 4 KiB: the 64 KiB
            // pages of schema 1 were for chunks of bodies, which the store no longer holds.
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA temp_store=FILE; PRAGMA cache_size=-1024")
            let version = try database.integerPragma("user_version")
            switch version {
            case 0:
                // The whole schema: nothing for `addMissingColumns` to add.
                try createSchema()
            case 1, 2:
                if version == 2 { try verifySchema() }
                // Schema 1 kept the bodies in `chunks`: they become `v1_chunks`, which the daemon publishes
                // through the new writer and drops (`migrateLegacyListing`). Renamed before the triggers of
                // `addMissingColumns` exist: a rename checks every trigger, and theirs name schema 3's columns.
                if version == 1 {
                    try database.transaction {
                        try database.execute("""
                            ALTER TABLE chunks RENAME TO v1_chunks;
                            \(StateStore.chunksTable);
                            PRAGMA user_version = 2;
                            """)
                    }
                }
                try moveOutboxMarksToColumns()
                try addMissingColumns()
            case StateStore.schemaVersion:
                try verifySchema()
                try addMissingColumns()
            default:
                throw StoreError.corrupt(path: path, reason: "unknown schema version \(version) (this syncd knows \(StateStore.schemaVersion))")
            }
        } catch {
            throw StateStore.openError(error, path: path)
        }
    }

    /// Creates the store that becomes the database file at `path` (which must not exist) beside it, at
    /// `asidePath(of: path)`, without a journal on disk and without flushes: `finishCreation()` switches it to
    /// write-ahead logging, flushes it once and renames it into place. So the file at `path` appears whole or
    /// not at all, and a first run's writes reach the disk once instead of twice (the log, then the database;
    /// docs/architecture.md, "A store built aside"). For `syncd --once`, the only user of the file while it
    /// runs: nothing else may open the file before `finishCreation()`. A crash meanwhile leaves only the
    /// file aside, which the next creation removes. Stale files of a creation that did not finish, and a log
    /// or shared-memory file at `path` that no database file goes with, are removed first.
    public init(buildingAside path: String, cacheFolder: CacheFolder? = nil) throws(StoreError) {
        self.cacheFolder = cacheFolder
        let temporary = StateStore.asidePath(of: path)
        var opened: Database?
        do {
            // A log without its database would be replayed onto the new file when it opens in place.
            _ = try StateStore.removeLeftAside(of: path)
            for orphan in [path + "-wal", path + "-shm"] where unlink(orphan) != 0 && errno != ENOENT {
                throw StateStore.systemFailure("remove \(orphan), left without its database")
            }
            let connection = try Database(path: temporary)
            opened = connection
            // A statement that fails still rolls back (the journal is in memory). The page cache as in `init(path:)`.
            try connection.execute("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA foreign_keys=ON; PRAGMA temp_store=FILE; PRAGMA cache_size=-1024")
            database = connection
            asideTarget = path
            try createSchema()
        } catch {
            // Nothing of it will be used (the caller creates the file in place): it must not hold space meanwhile.
            opened?.close()
            for file in StateStore.asideFiles(of: path) { unlink(file) }
            throw StateStore.openError(error, path: temporary)
        }
    }

    /// Where `init(buildingAside:)` writes the store that becomes the database file at `path`.
    public static func asidePath(of path: String) -> String { path + ".new" }

    /// Opens the database at `path` for reading only (control reads: `List`, `Get`, outbox and conflict
    /// listings): no schema is created or migrated and no write can happen through it. A missing file or one
    /// of another schema version is an error; the daemon's own connection creates and migrates it.
    public init(readingFrom path: String, cacheFolder: CacheFolder? = nil) throws(StoreError) {
        self.cacheFolder = cacheFolder
        do {
            database = try Database(path: path, readOnly: true)
            let version = try database.integerPragma("user_version")
            if (1..<StateStore.schemaVersion).contains(version) {
                throw StoreError.corrupt(path: path, reason: "schema version \(version), which syncd converts when it starts: start syncd, then ask again")
            }
            guard version == StateStore.schemaVersion else {
                throw StoreError.corrupt(path: path, reason: "schema version \(version), expected \(StateStore.schemaVersion)")
            }
            let tables = try database.strings("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('unwritten', 'discarded', 'change_log', 'delta_checkpoints', 'listing_resume')")
            hasUnwrittenTable = tables.contains("unwritten")
            hasListingResume = tables.contains("listing_resume")
            hasDeltaCheckpoints = tables.contains("delta_checkpoints")
            hasChangeLog = tables.contains("change_log")
            hasDiscardedTable = tables.contains("discarded")
        } catch {
            throw StateStore.openError(error, path: path)
        }
    }

    /// What an operation on `path` failed with, as a store error: damage and unknown schemas as `.corrupt`.
    static func openError(_ error: any Error, path: String) -> StoreError {
        switch error {
        case let error as SQLiteError: error.isCorruption ? .corrupt(path: path, reason: error.message) : .sqlite(error)
        case let error as StoreError: error
        default: .corrupt(path: path, reason: "\(error)")
        }
    }

    /// The index of a source's listing, in the server's order, as chunks of framed entries without bodies
    /// (see RecordChunk); `file_bytes` and `file_hash` describe the chunk's range of the cache file's
    /// records section (separators and block padding included, `BlockAlignment`), and come before the blob so that summing them to find a
    /// chunk's offset never reads the blob's pages.
    static let chunksTable = """
        CREATE TABLE chunks (
            source TEXT NOT NULL,
            seq INTEGER NOT NULL,
            records INTEGER NOT NULL,
            file_bytes INTEGER NOT NULL,
            file_hash INTEGER NOT NULL,
            data BLOB NOT NULL,
            UNIQUE (source, seq)
        )
        """

    /// Creates schema 3 as it stands now in an empty file, in one transaction: each table with every column of
    /// `addedColumns` (appended in their order, where `ALTER TABLE` puts them in an upgraded file) and every
    /// object of `addedObjects`. An upgraded file ends with the same tables, columns and objects
    /// (`StateStoreMigrationTests`); building a fresh file by `ALTER TABLE`, which reparses the whole schema
    /// each time, cost most of a first start's CPU before the first request (docs/benchmarks.md, "First sync
    /// against the transfer floor").
    private func createSchema() throws(SQLiteError) {
        func added(_ table: String) -> String {
            StateStore.addedColumns.filter { $0.table == table }.map { ",\n    \($0.column) \($0.definition)" }.joined()
        }
        try database.execute("""
            BEGIN IMMEDIATE;
            CREATE TABLE sources (
                name TEXT PRIMARY KEY,
                url TEXT,
                etag TEXT,
                last_modified TEXT,
                saved_at TEXT,
                last_success TEXT,
                last_attempt TEXT,
                last_error TEXT,
                record_count INTEGER NOT NULL DEFAULT 0,
                snapshot_dirty INTEGER NOT NULL DEFAULT 0,
                retry_state TEXT\(added("sources"))
            );
            \(StateStore.chunksTable);
            -- Local changes, oldest first. At most one 'queued' entry per record (changes coalesce);
            -- 'sent' entries stay as an overlay until a listing confirms them; 'parked' ones wait for a
            -- person; 'conflict' ones for `syncctl resolve`.
            CREATE TABLE outbox (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                source TEXT NOT NULL,
                record_id TEXT NOT NULL,
                id_is_integer INTEGER NOT NULL DEFAULT 0,
                operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'delete')),
                body BLOB,
                base_version TEXT,
                created_at TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'parked', 'conflict')),
                attempts INTEGER NOT NULL DEFAULT 0,
                unconfirmed INTEGER NOT NULL DEFAULT 0,
                last_status INTEGER,
                last_error TEXT,
                superseded INTEGER NOT NULL DEFAULT 0,
                not_sent INTEGER NOT NULL DEFAULT 0\(added("outbox"))
            );
            CREATE INDEX outbox_by_record ON outbox (source, record_id, seq);
            CREATE TABLE conflicts (
                source TEXT NOT NULL,
                record_id TEXT NOT NULL,
                remote_body BLOB,
                remote_version TEXT,
                detected_at TEXT NOT NULL,
                PRIMARY KEY (source, record_id)
            );
            \(StateStore.addedObjects.joined(separator: ";\n"));
            PRAGMA user_version = 3;
            COMMIT;
            """)
    }

    /// Columns added after version 1 without bumping it (older builds never name them), each with
    /// its `ALTER TABLE` clause.
    private static let addedColumns: [(table: String, column: String, definition: String)] = [
        // The cache file's fingerprint (SnapshotFingerprint); NULL until the file is next written.
        ("sources", "snapshot_size", "INTEGER"),
        ("sources", "snapshot_inode", "INTEGER"),
        ("sources", "snapshot_ctime_ns", "INTEGER"),
        ("sources", "snapshot_hash", "INTEGER"),
        // Records in the cache file as syncd last wrote it; NULL until then. While `snapshot_dirty` is set the
        // store is ahead of the file, and this is what apps read (docs/architecture.md, "The cache file").
        ("sources", "snapshot_records", "INTEGER"),
        // The listing the ID index (table id_index, StateStore+IDIndex) was written with; NULL: none.
        ("sources", "id_index_stamp", "TEXT"),
        // Schema 2: where the records section of the cache file begins (just after `"records":[`) and where
        // the listing's records end in it (locally created records, then the closing "\n]", follow).
        ("sources", "records_start", "INTEGER"),
        ("sources", "listing_end", "INTEGER"),
        // The temporary file a committed listing is being renamed from; NULL when none is outstanding.
        ("sources", "pending_rename", "TEXT"),
        // The boot and the boot clock at which the change's latest attempt began (LostCreateWait); NULL before
        // the first or when written by an older syncd: the wait of a lost create then starts when syncd next
        // looks at it.
        ("outbox", "attempt_boot", "TEXT"),
        ("outbox", "attempt_uptime_ms", "INTEGER"),
        // How often a create whose answer was lost was sent again because a listing did not show it.
        ("outbox", "blind_resends", "INTEGER NOT NULL DEFAULT 0"),
        // `last_error` without the server's words (SourceState.lastErrorPublic); NULL when written by an older syncd.
        ("sources", "last_error_public", "TEXT"),
        // Counts every row written to or removed from the source's outbox (the triggers of `outboxStampTriggers`),
        // and the count and greatest outbox `seq` the cache file as last written applied: a rebuild that finds
        // only new creates since then appends them (StateStore+AppendCreates). NULL: unknown, rebuild whole.
        ("sources", "outbox_stamp", "INTEGER NOT NULL DEFAULT 0"),
        ("sources", "file_outbox_stamp", "INTEGER"),
        ("sources", "file_outbox_seq", "INTEGER"),
        // Counts the commits that stored an overlaid index entry (a record shown with its local change), and the
        // snapshot hash of the file committed when no chunk of the source held one (NULL: unknown). While it is the
        // current `snapshot_hash`, a rebuild or a delta need not read every chunk for overlays no local change
        // stands behind any more (`StateStore.touchedChunks`); an older syncd, which does not keep it, leaves it
        // naming a file it replaced.
        ("sources", "overlay_writes", "INTEGER NOT NULL DEFAULT 0"),
        ("sources", "overlay_free_hash", "INTEGER"),
        // The source's change sequence and the oldest `since` its change log answers (StateStore+ChangeLog).
        ("sources", "change_seq", "INTEGER NOT NULL DEFAULT 0"),
        ("sources", "change_floor", "INTEGER NOT NULL DEFAULT 0"),
    ]

    /// The tables and triggers added to schema 3 since its base (`createSchema`), each created only if missing: an
    /// older syncd never names them, so going back keeps them.
    static let addedObjects: [String] = [
        // Sorted `IDHashes` entries of one bucket of a source's listing (StateStore+IDIndex).
        "CREATE TABLE IF NOT EXISTS id_index (source TEXT NOT NULL, bucket INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (source, bucket))",
        // Records changed locally since the cache file was last written, while a write failed (StateStore+Unwritten).
        unwrittenTable,
        // Changes a ConflictPolicy= discarded, kept for DiscardedRetentionSec= (StateStore+Discarded).
        discardedTable,
    ] + outboxStampTriggers
        // The change sequence's log and the triggers that log local changes (StateStore+ChangeLog).
        + changeLogSchema
        // Where each source's incremental pull stands (StateStore+DeltaCheckpoint).
        + [deltaCheckpointsTable]
        // The staged pages of interrupted full listings (StateStore+ListingResume).
        + listingResumeSchema

    /// Triggers counting every change of a source's outbox rows that the cache file or the outbox counts can
    /// show in `sources.outbox_stamp`, whichever code makes it. An older syncd's writes are counted too (the
    /// triggers live in the file).
    static let outboxStampTriggers = [
        "CREATE TRIGGER IF NOT EXISTS outbox_stamp_insert AFTER INSERT ON outbox BEGIN "
            + "UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name = NEW.source; END",
        outboxStampUpdateTrigger,
        "CREATE TRIGGER IF NOT EXISTS outbox_stamp_delete AFTER DELETE ON outbox BEGIN "
            + "UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name = OLD.source; END",
    ]

    /// The trigger of `outboxStampTriggers` for updates. Only what the cache file or the counts show: which
    /// record, its body and operation, its state, and whether a newer change superseded it; not the attempts
    /// and messages a failed push notes. (Schema 2's watched the message of a parked change instead.)
    static let outboxStampUpdateTrigger =
        "CREATE TRIGGER IF NOT EXISTS outbox_stamp_update AFTER UPDATE ON outbox WHEN OLD.source IS NOT NEW.source "
            + "OR OLD.record_id IS NOT NEW.record_id OR OLD.id_is_integer IS NOT NEW.id_is_integer "
            + "OR OLD.operation IS NOT NEW.operation OR OLD.body IS NOT NEW.body OR OLD.state IS NOT NEW.state "
            + "OR OLD.superseded IS NOT NEW.superseded BEGIN "
            + "UPDATE sources SET outbox_stamp = outbox_stamp + 1 WHERE name IN (OLD.source, NEW.source); END"

    /// Schema 2 to 3, in one transaction (a crash leaves version 2, converted again at the next open): the words
    /// version 2 began an outbox entry's `last_error` with move to columns — "superseded by a newer change; was: "
    /// of a parked change to `superseded`, "not sent: " of a queued one to `not_sent` — and the message keeps
    /// the rest, so that `OutboxRecord.shownError` reads as before. Matched here, in Swift, for the last time.
    /// The outbox stamp does not move: what the cache file and the counts show is the same. Schema 2's stamp
    /// trigger (it counted a parked change's new message) is dropped first; `addMissingColumns`, next, creates
    /// schema 3's, also after a crash in between (the file is then of version 3 without it).
    private func moveOutboxMarksToColumns() throws(SQLiteError) {
        do {
            try database.transaction {
                let columns = try database.strings("SELECT name FROM pragma_table_info('outbox')")
                for column in ["superseded", "not_sent"] where !columns.contains(column) {
                    try database.execute("ALTER TABLE outbox ADD COLUMN \(column) INTEGER NOT NULL DEFAULT 0")
                }
                try database.execute("DROP TRIGGER IF EXISTS outbox_stamp_update")
                var moved: [(seq: Int64, superseded: Bool, notSent: Bool, message: String)] = []
                let rows = try database.prepare("SELECT seq, state, last_error FROM outbox WHERE last_error IS NOT NULL")
                while try rows.step() {
                    guard var message = rows.string(2) else { continue }
                    let state = rows.string(1)
                    let superseded = state == OutboxRecord.State.parked.rawValue && message.hasPrefix(OutboxRecord.supersededWords)
                    if superseded { message.removeFirst(OutboxRecord.supersededWords.count) }
                    let notSent = state == OutboxRecord.State.queued.rawValue && message.hasPrefix(OutboxRecord.notSentWords)
                    if notSent { message.removeFirst(OutboxRecord.notSentWords.count) }
                    if superseded || notSent { moved.append((rows.int64(0), superseded, notSent, message)) }
                }
                rows.reset()
                let update = try database.prepare("UPDATE outbox SET superseded = ?2, not_sent = ?3, last_error = ?4 WHERE seq = ?1")
                for row in moved {
                    try update.bind(1, row.seq)
                    try update.bind(2, Int64(row.superseded ? 1 : 0))
                    try update.bind(3, Int64(row.notSent ? 1 : 0))
                    try update.bind(4, row.message)
                    try update.step()
                    update.reset()
                }
                try database.execute("PRAGMA user_version = 3")
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw SQLiteError(code: SQLITE_ERROR, operation: "convert the outbox of \(path)", message: "\(error)")
        }
    }

    /// Adds the columns of `addedColumns` and the tables added since (ID index, unwritten, discarded, change log,
    /// delta checkpoints) when a file lacks them, in one transaction, keeping every row.
    private func addMissingColumns() throws(SQLiteError) {
        func missing() throws(SQLiteError) -> [(table: String, column: String, definition: String)] {
            var present: Set<String> = []
            let statement = try database.prepare("SELECT 'sources.' || name FROM pragma_table_info('sources') UNION ALL SELECT 'outbox.' || name FROM pragma_table_info('outbox')")
            while try statement.step() { if let name = statement.string(0) { present.insert(name) } }
            return StateStore.addedColumns.filter { !present.contains("\($0.table).\($0.column)") }
        }
        func tablesMissing() throws(SQLiteError) -> Bool {
            let statement = try database.prepare("""
                SELECT count(*) FROM sqlite_master WHERE (type = 'table' AND name IN ('id_index', 'unwritten', 'discarded', 'change_log', 'delta_checkpoints',
                                                                  'listing_resume', 'listing_resume_pages'))
                    OR (type = 'trigger' AND name IN ('outbox_stamp_insert', 'outbox_stamp_update', 'outbox_stamp_delete',
                                                      'change_log_insert', 'change_log_update', 'change_log_delete'))
                """)
            _ = try statement.step()
            return statement.int64(0) < 13
        }
        let columnsMissing = try !missing().isEmpty
        let tableMissing = try tablesMissing()
        guard columnsMissing || tableMissing else { return }
        do {
            try database.transaction {
                // Another process may have added them since we looked.
                for added in try missing() {
                    try database.execute("ALTER TABLE \(added.table) ADD COLUMN \(added.column) \(added.definition)")
                }
                for object in StateStore.addedObjects { try database.execute(object) }
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw SQLiteError(code: SQLITE_ERROR, operation: "add columns to \(path)", message: "\(error)")
        }
    }

    private func verifySchema() throws(StoreError) {
        do {
            let statement = try database.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('sources', 'chunks', 'outbox', 'conflicts')")
            _ = try statement.step()
            if statement.int64(0) != 4 {
                throw StoreError.corrupt(path: path, reason: "tables are missing")
            }
        } catch {
            throw StateStore.openError(error, path: path)
        }
    }

    // MARK: Source state

    /// The stored state of `source`, or an empty one when it was never synced. `countingLocalView`
    /// fills `localRecordCount` exactly. With local changes pending, a current cache file (not dirty) holds
    /// the local view and the store counted its records when writing it; only while the outbox is ahead of
    /// the file is the whole listing walked: ask for it where the count is shown (status, Watch), not on
    /// every internal use.
    public func state(of source: String, countingLocalView: Bool = false) throws(StoreError) -> SourceState {
        var state = try storedState(of: source)
        // A parked create is in the cache file too: every record with an outbox entry counts, whatever its state.
        // While a rewrite is scheduled, counted as the file holds it (walking the view after every change of a
        // burst would cost what coalescing saves); the rewrite's report brings the new count.
        if countingLocalView, state.changedRecordCount > 0, !state.snapshotDirty || state.cacheFileWriteScheduled,
           state.snapshotFingerprint != nil, let written = state.snapshotRecordCount {
            state.localRecordCount = written
        } else if countingLocalView, state.changedRecordCount > 0 {
            // Only with local changes: count the view the cache file shows.
            var local = 0
            do {
                try forEachLocalRecord(source: source) { _, _ in local += 1 }
            } catch let error as StoreError {
                throw error
            } catch let error as SQLiteError {
                throw .sqlite(error)
            } catch {
                throw .corrupt(path: path, reason: "\(error)")
            }
            state.localRecordCount = local
        }
        return state
    }

    private func storedState(of source: String) throws(StoreError) -> SourceState {
        do {
            let statement = try database.prepare("""
                SELECT url, etag, last_modified, saved_at, last_success, last_attempt, last_error,
                       record_count, snapshot_dirty, retry_state,
                       snapshot_size, snapshot_inode, snapshot_ctime_ns, snapshot_hash, snapshot_records, last_error_public
                FROM sources WHERE name = ?1
                """)
            try statement.bind(1, source)
            var state = SourceState(name: source)
            let found = try statement.step()
            if found {
                state.url = statement.string(0)
                state.etag = statement.string(1)
                state.lastModified = statement.string(2)
                state.savedAt = statement.string(3)
                state.lastSuccess = statement.string(4)
                state.lastAttempt = statement.string(5)
                state.lastError = statement.string(6)
                state.recordCount = Int(statement.int64(7))
                state.snapshotDirty = statement.int64(8) != 0
                state.cacheFileWriteScheduled = statement.int64(8) == StateStore.behindMark
                state.retryState = statement.string(9)
                if !statement.isNull(10) {
                    state.snapshotFingerprint = SnapshotFingerprint(
                        size: statement.int64(10), inode: UInt64(bitPattern: statement.int64(11)),
                        changeTime: statement.int64(12), hash: UInt64(bitPattern: statement.int64(13)))
                }
                if !statement.isNull(14) { state.snapshotRecordCount = Int(statement.int64(14)) }
                state.lastErrorPublic = statement.string(15)
            }
            let counts = try outboxCounts(source: source)
            state.pendingCount = counts.pending
            state.conflictCount = counts.conflicts
            state.unpushedCount = counts.unpushed
            state.parkedCount = counts.parked
            state.changedRecordCount = counts.records
            state.localRecordCount = state.recordCount
            if state.snapshotDirty { state.changedSinceWrite = try unwrittenCount(source: source) }
            if hasChangeLog { state.changeSeq = try changeSequence(of: source) }
            state.deltaCheckpoint = try storedDeltaCheckpoint(source: source)
            state.listingResume = try storedListingResumePoint(source: source)
            return state
        } catch {
            throw .sqlite(error)
        }
    }

    /// Names of every source that has stored state.
    public func sourceNames() throws(StoreError) -> [String] {
        do {
            // `name` is the primary key, never NULL.
            return try database.strings("SELECT name FROM sources ORDER BY name")
        } catch {
            throw .sqlite(error)
        }
    }

    /// Records a failed refresh: the data stays, the reason and time are kept; `publicMessage` is the reason
    /// without what the server wrote (`message` itself when it quotes nothing of the server's).
    public func recordFailure(source: String, url: String, message: String, publicMessage: String? = nil, at time: String) throws(StoreError) {
        try write("record failure of \(source)") {
            let statement = try database.prepare("""
                INSERT INTO sources (name, url, last_attempt, last_error, last_error_public) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (name) DO UPDATE SET last_attempt = ?3, last_error = ?4, last_error_public = ?5
                """)
            try statement.bind(1, source)
            try statement.bind(2, url)
            try statement.bind(3, time)
            try statement.bind(4, message)
            try statement.bind(5, publicMessage ?? message)
            try statement.step()
        }
    }

    /// Records a refresh that confirmed the stored listing (HTTP 304 or identical content), and, when given,
    /// the fingerprint of the cache file it confirmed, in the same transaction: a 304 costs one commit.
    public func recordUnchanged(source: String, at time: String, snapshot: SnapshotFingerprint? = nil) throws(StoreError) {
        try write("record success of \(source)") {
            let statement = try database.prepare("""
                UPDATE sources SET last_attempt = ?2, last_success = ?2, last_error = NULL,
                    snapshot_size = coalesce(?3, snapshot_size), snapshot_inode = coalesce(?4, snapshot_inode),
                    snapshot_ctime_ns = coalesce(?5, snapshot_ctime_ns), snapshot_hash = coalesce(?6, snapshot_hash)
                WHERE name = ?1
                """)
            try statement.bind(1, source)
            try statement.bind(2, time)
            try statement.bind(3, snapshot?.size)
            try statement.bind(4, snapshot.map { Int64(bitPattern: $0.inode) })
            try statement.bind(5, snapshot?.changeTime)
            try statement.bind(6, snapshot.map { Int64(bitPattern: $0.hash) })
            try statement.step()
        }
    }

    /// Stores the scheduler's retry state for `source` (opaque text).
    public func saveRetryState(source: String, _ value: String?) throws(StoreError) {
        try write("save retry state of \(source)") {
            let statement = try database.prepare("""
                INSERT INTO sources (name, retry_state) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET retry_state = ?2
                """)
            try statement.bind(1, source)
            try statement.bind(2, value)
            try statement.step()
        }
    }

    /// The value of `snapshot_dirty` that says the file is behind the store only for the moment: a change was
    /// stored and its rewrite follows, now or scheduled (`CacheFileCoalescing`). 1 says a write is owed that
    /// failed (its warnings go on until a write succeeds); 0 that the file is current. A start rewrites the
    /// file either way.
    static let behindMark: Int64 = 2

    /// Marks the cache file of `source` as behind the store until the rewrite that follows a change; a mark of
    /// a failed write stays.
    public func markCacheFileBehind(source: String) throws(StoreError) {
        try write("mark snapshot of \(source)") { try markBehind(source: source) }
    }

    /// `markCacheFileBehind` inside a transaction.
    func markBehind(source: String) throws(SQLiteError) {
        let statement = try database.prepare("UPDATE sources SET snapshot_dirty = ?2 WHERE name = ?1 AND snapshot_dirty = 0")
        try statement.bind(1, source)
        try statement.bind(2, StateStore.behindMark)
        try statement.step()
    }

    /// Marks the cache file of `source` as matching the store, or as needing a rewrite.
    public func setSnapshotDirty(source: String, _ dirty: Bool) throws(StoreError) {
        try write("mark snapshot of \(source)") {
            let statement = try database.prepare("UPDATE sources SET snapshot_dirty = ?2 WHERE name = ?1")
            try statement.bind(1, source)
            try statement.bind(2, dirty ? 1 : 0)
            try statement.step()
        }
    }

    /// Records that the cache file of `source` looks like `fingerprint` (after writing or confirming it) and,
    /// when `records` is given, holds that many records (a confirmation leaves the count as it was). Clears the
    /// dirty mark unless `dirty` says the file must be written again (it is in place but not durable).
    public func recordSnapshot(source: String, _ fingerprint: SnapshotFingerprint, records: Int? = nil, dirty: Bool = false) throws(StoreError) {
        try write("record cache file of \(source)") {
            let statement = try database.prepare("""
                UPDATE sources SET snapshot_dirty = ?7, snapshot_size = ?2, snapshot_inode = ?3,
                    snapshot_ctime_ns = ?4, snapshot_hash = ?5, snapshot_records = coalesce(?6, snapshot_records) WHERE name = ?1
                """)
            try statement.bind(1, source)
            try statement.bind(2, fingerprint.size)
            try statement.bind(3, Int64(bitPattern: fingerprint.inode))
            try statement.bind(4, fingerprint.changeTime)
            try statement.bind(5, Int64(bitPattern: fingerprint.hash))
            try statement.bind(6, records.map(Int64.init))
            try statement.bind(7, dirty ? 1 : 0)
            try statement.step()
        }
    }

    /// Runs `body` in an immediate transaction, mapping SQLite errors.
    func write(_ what: String, _ body: () throws -> Void) throws(StoreError) {
        do {
            try database.transaction(body)
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .sqlite(SQLiteError(code: SQLITE_ERROR, operation: what, message: "\(error)"))
        }
    }
}

extension StateStore {
    /// Copies the write-ahead log into the database and truncates it, when it is larger than `bytes`.
    /// Closing skips this (see `Database.init`), so a large listing leaves a large log that every later
    /// open would have to replay; the engine calls this after a refresh that changed nothing, when the
    /// work costs no one anything. Returns true when it checkpointed.
    ///
    /// The log is then started again here, with one page: the first write to an empty log writes its
    /// header and flushes it to disk (and the folder with it), which would otherwise fall to the next
    /// process's first commit — for `syncd --once` right after a large first sync, its 304's commit
    /// (docs/benchmarks.md, "Speed of the first sync and of the 304"). That process reads one page of log.
    @discardableResult
    public func checkpointIfWriteAheadLog(largerThan bytes: Int) throws(StoreError) -> Bool {
        guard fileSize(path + "-wal") > bytes else { return false }
        do {
            try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            // Rewrites the header page with the value it holds: a write, and nothing changed. Should it fail, the
            // log is folded all the same and the next write starts it: not a failure of the checkpoint.
            try? database.execute("PRAGMA user_version = \(StateStore.schemaVersion)")
        } catch {
            throw .sqlite(error)
        }
        return true
    }
}

/// Size of the file at `path` in bytes, 0 if it does not exist.
func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

extension StateStore {
    /// The first error by which SQLite reported this file damaged, from any operation since it was opened;
    /// nil while none did. The owner then replaces the file (see `AccountStorage`).
    public var damage: SQLiteError? { database.corruption }

    /// The latest error by which the file system of the database failed a write (full, read-only, an I/O
    /// error) since `clearStorageFailure()`; nil while none did.
    public var storageFailure: SQLiteError? { database.storageFailure }

    /// Forgets the storage failure noted so far: called when a refresh starts.
    public func clearStorageFailure() { database.clearStorageFailure() }

    /// Closes the database now (before its files are moved); the store must not be used afterwards.
    public func close() { database.close() }

    /// Local changes not yet delivered to a server (queued, parked or in conflict), counted as far as a
    /// damaged file allows; nil when they cannot be read. For the log line that sets such a file aside.
    public func undeliveredChangeCount() -> Int? {
        guard let statement = try? database.prepare("SELECT count(*) FROM outbox WHERE state != 'sent'"),
              (try? statement.step()) == true else { return nil }
        return Int(statement.int64(0))
    }
}
