import Testing
import SyncCore

/// Every path of an account's files, put together in one place (syncd(8), FILES).
@Suite("Account paths")
struct AccountPathsTests {
    static let paths = AccountPaths(stateDirectory: "/var/lib/syncd", cacheDirectory: "/var/cache/syncd",
                                    runtimeDirectory: "/run/syncd", account: "alice@example.com")

    @Test func theStateFolderAndItsDatabaseAreBelowTheStateDirectory() {
        #expect(Self.paths.stateFolder == "/var/lib/syncd/alice@example.com")
        #expect(Self.paths.database == "/var/lib/syncd/alice@example.com/state.db")
    }

    @Test func theCacheFolderIsBelowTheCacheDirectoryAndNamesTheAccount() {
        #expect(Self.paths.cacheFolderPath == "/var/cache/syncd/alice@example.com")
        let folder = Self.paths.cacheFolder(group: 118)
        #expect(folder == CacheFolder(directory: "/var/cache/syncd/alice@example.com", account: "alice@example.com", group: 118))
        #expect(folder.mode == 0o640)
        #expect(folder.path(of: "posts") == "/var/cache/syncd/alice@example.com/posts.json")
        #expect(CacheFolder.fileName(of: "posts") == "posts.json")
    }

    @Test func theControlSocketIsInTheRuntimeDirectory() {
        #expect(Self.paths.controlSocket == "/run/syncd/io.syncd.Manager")
        #expect(AccountPaths.controlSocket(in: "/run/user/1000/syncd") == "/run/user/1000/syncd/io.syncd.Manager")
    }

    @Test func anotherAccountHasOtherFoldersInTheSameDirectories() {
        var bob = Self.paths
        bob.account = "bob"
        #expect(bob.stateFolder == "/var/lib/syncd/bob" && bob.cacheFolderPath == "/var/cache/syncd/bob")
        #expect(bob.controlSocket == Self.paths.controlSocket, "one daemon, one socket")
    }
}
