import Foundation
import Glibc
import SyncCore
import SyncStore
import Testing
@testable import SyncEngine

/// `AccountStorage.openStore` creating a store: in place, or built aside (`syncd --once`).
@Suite("AccountStorage creating a store")
struct AccountStorageTests {
    /// State and cache directories in a fresh temporary folder, removed afterwards.
    final class Top {
        let path = NSTemporaryDirectory() + "syncd-account-" + UUID().uuidString
        var directories: Directories {
            Directories(state: path + "/state", cache: path + "/cache", runtime: path + "/run", userMode: false, environment: [:])
        }
        var database: String { path + "/state/alice/state.db" }

        func open(buildingAside: Bool) throws -> StateStore {
            try AccountStorage.openStore(directories: directories, account: "alice", logger: Logger(environment: [:]),
                                         now: Timestamp(secondsSinceEpoch: 0), buildingAside: buildingAside)
        }

        /// The names of the tables in the database file at `path`.
        func tables(at path: String) throws -> [String] {
            let database = try Database(path: path, readOnly: true)
            defer { database.close() }
            return try database.strings("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Leaves at `top.database` + "-wal" and "-shm" the log of another database (one table, `theirs`, with a row):
    /// what deleting state.db by hand while its log stays behind looks like.
    private func plantOrphanedLog(in top: Top) throws {
        try FileManager.default.createDirectory(atPath: top.path + "/state/alice", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: top.path + "/state")
        let donor = try Database(path: top.path + "/donor.db")
        try donor.execute("PRAGMA journal_mode=WAL; CREATE TABLE theirs (v TEXT); INSERT INTO theirs VALUES ('old row')")
        donor.close()  // without folding its log in (closing does not checkpoint)
        for suffix in ["-wal", "-shm"] {
            try FileManager.default.moveItem(atPath: top.path + "/donor.db" + suffix, toPath: top.database + suffix)
        }
        #expect(try FileManager.default.attributesOfItem(atPath: top.database + "-wal")[.size] as? Int ?? 0 > 4096)
    }

    /// In place, SQLite deletes a log it finds beside an empty database file; built aside, the file is not empty
    /// when it arrives, and the store removes such a log before it begins.
    @Test("a log left without its database is not replayed onto the new one", arguments: [false, true])
    func anOrphanedLogIsRemoved(buildingAside: Bool) throws {
        let top = Top()
        try plantOrphanedLog(in: top)
        let store = try top.open(buildingAside: buildingAside)
        #expect(store.isBuiltAside == buildingAside)
        #expect(try store.state(of: "posts").recordCount == 0)
        try store.finishCreation()
        store.close()
        let tables = try top.tables(at: top.database)
        #expect(tables.contains("sources") && tables.contains("outbox"))
        #expect(!tables.contains("theirs"))
    }

    @Test("only a store that does not exist yet is built aside; finishing it puts it in place")
    func onlyANewStoreIsBuiltAside() throws {
        let top = Top()
        let first = try top.open(buildingAside: true)
        #expect(first.isBuiltAside && first.path == top.database)
        #expect(!FileManager.default.fileExists(atPath: top.database))
        try first.finishCreation()
        #expect(FileManager.default.fileExists(atPath: top.database))
        let second = try top.open(buildingAside: true)
        defer { second.close() }
        #expect(!second.isBuiltAside)
        #expect(!FileManager.default.fileExists(atPath: StateStore.asidePath(of: top.database)))
    }

    @Test("what a killed first run left aside is removed when the store opens, in place or not", arguments: [false, true])
    func leftAsideIsRemovedAtOpen(buildingAside: Bool) throws {
        let top = Top()
        // A first run killed while it built aside, then a store created in place by the daemon.
        let killed = try top.open(buildingAside: true)
        #expect(killed.isBuiltAside)
        killed.close()
        #expect(FileManager.default.fileExists(atPath: StateStore.asidePath(of: top.database)))
        try top.open(buildingAside: false).close()
        #expect(!FileManager.default.fileExists(atPath: StateStore.asidePath(of: top.database)))
        // Again with the database file in place: whichever run opens it next removes what is aside.
        let aside = StateStore.asidePath(of: top.database)
        for suffix in ["", "-wal", "-shm"] { try Data("left".utf8).write(to: URL(fileURLWithPath: aside + suffix)) }
        let store = try top.open(buildingAside: buildingAside)
        defer { store.close() }
        #expect(!store.isBuiltAside)
        let left = try FileManager.default.contentsOfDirectory(atPath: top.path + "/state/alice").filter { $0.hasPrefix("state.db.new") }
        #expect(left.isEmpty)
    }

    @Test("a damaged store that was being built aside is moved aside as the message says, and the run goes on in place")
    func aDamagedStoreBuiltAsideIsKept() throws {
        let top = Top()
        let damaged = try top.open(buildingAside: true)
        #expect(try damaged.state(of: "posts").recordCount == 0)
        damaged.close()
        let replaced = try AccountStorage.replaceDamagedStore(at: top.database, builtAside: true, problem: "is damaged (test)",
                                                             undeliveredChanges: 0, logger: Logger(environment: [:]),
                                                             now: Timestamp(secondsSinceEpoch: 0))
        defer { replaced.close() }
        #expect(!replaced.isBuiltAside)
        let names = try FileManager.default.contentsOfDirectory(atPath: top.path + "/state/alice").sorted()
        #expect(names.contains("state.db") && !names.contains { $0.hasPrefix("state.db.new") })
        let kept = try #require(names.first { $0.hasPrefix("state.db.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") })
        #expect(try top.tables(at: top.path + "/state/alice/" + kept).contains("sources"))
    }
}
