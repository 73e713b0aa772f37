import Foundation
import Glibc
import Testing
@testable import SyncStore
import SyncCore

/// A store built aside (`StateStore.init(buildingAside:)`, what `syncd --once` creates): the database file
/// appears whole, in write-ahead-log mode, only when `finishCreation()` puts it in place.
@Suite("A store built aside")
struct StateStoreBuiltAsideTests {
    /// A temporary directory with a cache folder; no database yet.
    final class Folder {
        let directory = NSTemporaryDirectory() + "syncstore-aside-" + UUID().uuidString
        var path: String { directory + "/state.db" }
        var aside: String { StateStore.asidePath(of: path) }
        var cache: CacheFolder { CacheFolder(directory: directory + "/cache", account: "test", group: nil) }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        }

        func exists(_ path: String) -> Bool {
            var info = stat()
            return lstat(path, &info) == 0
        }

        /// The files in the directory, sorted.
        func entries() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() }

        /// The IDs of the records of `source` in the store at `path`, opened in place.
        func ids(at path: String, source: String = "posts") throws -> [String] {
            let store = try StateStore(path: path, cacheFolder: cache)
            defer { store.close() }
            var ids: [String] = []
            try store.forEachRecord(source: source) { ids.append($0.id) }
            return ids
        }

        /// `PRAGMA name` of the file at `path`, read with a connection of its own.
        func pragma(_ name: String, at path: String) throws -> [String] {
            let database = try Database(path: path, readOnly: true)
            defer { database.close() }
            return try database.strings("PRAGMA \(name)")
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    @Test("the database file appears only when finished: whole, in write-ahead-log mode, nothing left beside it")
    func appearsWhenFinished() throws {
        let folder = try Folder()
        let store = try StateStore(buildingAside: folder.path, cacheFolder: folder.cache)
        #expect(store.isBuiltAside)
        #expect(store.path == folder.path)
        try SyncStoreTests.store(records(600), into: store)
        #expect(!folder.exists(folder.path))
        #expect(folder.exists(folder.aside))
        #expect(!folder.exists(folder.aside + "-journal"))  // the journal is in memory
        try store.finishCreation()
        #expect(!store.isBuiltAside)
        #expect(folder.entries() == ["cache", "state.db", "state.db-shm", "state.db-wal"])
        // The log starts with its header and the header page as it is (32 + 24 + 4096 bytes).
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path + "-wal")[.size] as? Int == 4152)
        #expect(try folder.pragma("journal_mode", at: folder.path) == ["wal"])
        #expect(try folder.pragma("integrity_check", at: folder.path) == ["ok"])
        #expect(try folder.pragma("user_version", at: folder.path) == [String(StateStore.schemaVersion)])
        #expect(try folder.ids(at: folder.path) == (1...600).map(String.init))
        // The same tables, indexes and triggers as a file created in place.
        #expect(try StateStore.schema(at: folder.path) == StateStore.schemaOfAFileCreatedInPlace(in: folder.directory))
    }

    @Test("a listing refused while building aside is rolled back: nothing of it stays, the store keeps working")
    func failedStatementsRollBack() throws {
        let folder = try Folder()
        let store = try StateStore(buildingAside: folder.path, cacheFolder: folder.cache)
        try SyncStoreTests.store(records(3), into: store)
        #expect(throws: StoreError.self) { try SyncStoreTests.store(records(2) + records(2), into: store) }
        #expect(try store.state(of: "posts").recordCount == 3)
        try store.finishCreation()
        #expect(try folder.pragma("integrity_check", at: folder.path) == ["ok"])
        #expect(try folder.ids(at: folder.path) == ["1", "2", "3"])
    }

    @Test("files of a creation that never finished, and a log without its database, are removed first")
    func staleFilesAreRemoved() throws {
        let folder = try Folder()
        // A crash while building: a half-written file aside. And a log whose database was deleted: opened with a
        // new file of that name, SQLite would replay its frames onto it.
        let donor = try StateStore(path: folder.directory + "/donor.db", cacheFolder: folder.cache)
        try SyncStoreTests.store(records(50, version: 9), into: donor, source: "other")
        donor.close()
        let log = try Data(contentsOf: URL(fileURLWithPath: folder.directory + "/donor.db-wal"))
        #expect(log.count > 4096)
        try log.write(to: URL(fileURLWithPath: folder.path + "-wal"))
        try Data(repeating: 7, count: 32768).write(to: URL(fileURLWithPath: folder.path + "-shm"))
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: folder.aside))
        try Data(repeating: 1, count: 512).write(to: URL(fileURLWithPath: folder.aside + "-journal"))
        try Data(repeating: 2, count: 100).write(to: URL(fileURLWithPath: folder.aside + "-wal"))

        let store = try StateStore(buildingAside: folder.path, cacheFolder: folder.cache)
        #expect(!folder.exists(folder.path + "-wal") && !folder.exists(folder.path + "-shm"))
        #expect(!folder.exists(folder.aside + "-journal") && !folder.exists(folder.aside + "-wal"))
        try SyncStoreTests.store(records(4), into: store)
        try store.finishCreation()
        #expect(try folder.pragma("integrity_check", at: folder.path) == ["ok"])
        #expect(try folder.ids(at: folder.path) == ["1", "2", "3", "4"])
        #expect(try folder.ids(at: folder.path, source: "other").isEmpty)
    }

    @Test("a rename that fails says what failed, leaves the path alone and removes what it built aside")
    func failedRenameRemovesTheFileAside() throws {
        let folder = try Folder()
        let store = try StateStore(buildingAside: folder.path, cacheFolder: folder.cache)
        try SyncStoreTests.store(records(20), into: store)
        let cacheFile = try Data(contentsOf: URL(fileURLWithPath: folder.cache.path(of: "posts")))
        // Something took the path meanwhile: a directory with a file in it cannot be replaced by a rename.
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: false)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: folder.path + "/kept"))
        do {
            try store.finishCreation()
            Issue.record("finished over a directory")
        } catch {
            #expect("\(error)".hasPrefix("Failed to rename \(folder.aside) to \(folder.path): "))
            guard case .sqlite(let failure) = error else { Issue.record("\(error)"); return }
            #expect(failure.isStorageFailure && !failure.isFull && !failure.isReadOnly)
        }
        #expect(try String(contentsOfFile: folder.path + "/kept", encoding: .utf8) == "theirs")
        // Never used once its run is over: gone, with its log and shared-memory file (renamed or not).
        #expect(folder.entries() == ["cache", "state.db"])
        // The cache file the run installed stays as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.cache.path(of: "posts"))) == cacheFile)
        // Closed either way, and finishing again does nothing.
        #expect(throws: StoreError.self) { try store.state(of: "posts") }
        try store.finishCreation()
    }

    @Test("what a killed run left aside is removed by whoever opens the store next, and said")
    func leftAsideIsRemoved() throws {
        let folder = try Folder()
        #expect(try StateStore.removeLeftAside(of: folder.path).isEmpty)
        for suffix in ["", "-journal", "-wal", "-shm"] { try Data("left".utf8).write(to: URL(fileURLWithPath: folder.aside + suffix)) }
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder.path + "-wal"))
        #expect(try StateStore.removeLeftAside(of: folder.path) == ["", "-journal", "-wal", "-shm"].map { folder.aside + $0 })
        // Only the files aside: a log beside the database file is the database's.
        #expect(folder.entries() == ["cache", "state.db-wal"])
    }

    @Test("a failed system call or SQLite I/O error says when the file system is full or read-only")
    func fileSystemFailuresAreClassified() {
        let full = StateStore.systemFailure("flush x", errno: ENOSPC)
        guard case .sqlite(let failure) = full else { Issue.record("\(full)"); return }
        #expect(failure.isFull && failure.description == "Failed to flush x: No space left on device (SQLite code 13)")
        guard case .sqlite(let quota) = StateStore.systemFailure("flush x", errno: EDQUOT), case .sqlite(let readOnly) = StateStore.systemFailure("rename x", errno: EROFS),
              case .sqlite(let other) = StateStore.systemFailure("rename x", errno: EIO) else { Issue.record("not SQLite errors"); return }
        #expect(quota.isFull && readOnly.isReadOnly && other.isStorageFailure && !other.isFull && !other.isReadOnly)
        // SQLite's "shared-memory file could not grow" (SQLITE_IOERR_SHMSIZE) on a full file system.
        let shm = SQLiteError(code: 4874, operation: "execute PRAGMA journal_mode=WAL", message: "disk I/O error")
        #expect(shm.withSystemErrno(ENOSPC).isFull)
        #expect(shm.withSystemErrno(ENOSPC).description == "Failed to execute PRAGMA journal_mode=WAL: disk I/O error: No space left on device (SQLite code 13)")
        #expect(shm.withSystemErrno(EIO).code == 4874 && shm.withSystemErrno(0).code == 4874)
        // Not an I/O error: left as it is.
        let busy = SQLiteError(code: 5, operation: "x", message: "database is locked")
        #expect(busy.withSystemErrno(ENOSPC).code == 5)
    }

    @Test("a store opened in place is not built aside: finishing it does nothing and it stays open")
    func inPlaceStoresAreLeftAlone() throws {
        let temporary = try TemporaryStore()
        #expect(!temporary.store.isBuiltAside)
        try temporary.store.finishCreation()
        try SyncStoreTests.store(records(2), into: temporary.store)
        #expect(try temporary.store.state(of: "posts").recordCount == 2)
        #expect(!FileManager.default.fileExists(atPath: StateStore.asidePath(of: temporary.path)))
    }
}

extension StateStore {
    /// Every object of the schema of the file at `path`: type, name and SQL, by name.
    static func schema(at path: String) throws -> [String] {
        let database = try Database(path: path, readOnly: true)
        defer { database.close() }
        return try database.strings("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
    }

    /// `schema(at:)` of a file created in place in `directory`.
    static func schemaOfAFileCreatedInPlace(in directory: String) throws -> [String] {
        let path = directory + "/in-place.db"
        try StateStore(path: path).close()
        return try schema(at: path)
    }
}
