#if canImport(Glibc)
import Glibc
#endif
import SyncCore
import SyncSystem
import Testing
@testable import SyncDaemon

/// The ownership check on real folders (docs/syncd.8.md, FILES): `Directories.create` refuses a folder that is
/// another user's or writable by others, and changes nothing in it. Needs root (to give folders to uid 65534).
@Suite("FolderCheck", .system)
struct FolderCheckTests {
    static let nobody: UInt32 = 65534

    /// A fresh folder in /tmp, mode `mode` (1777: like /var/tmp).
    private func temporary(mode: UInt32 = 0o1777) throws -> String {
        var template = Array("/tmp/syncd-folder-test.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let path = try #require(created.map { String(cString: $0) })
        #expect(chmod(path, mode) == 0)
        return path
    }

    private func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    private func entries(_ path: String) -> [String] {
        guard let stream = opendir(path) else { return ["(unreadable)"] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private func made(_ path: String, mode: UInt32, owner: UInt32 = 0, group: UInt32 = 0) {
        #expect(mkdir(path, 0o700) == 0 && chown(path, owner, group) == 0 && chmod(path, mode) == 0)
    }

    /// The refusal `create` throws (nil when it succeeds).
    private func refusal(_ path: String, mode: UInt32 = 0o700, kind: FolderKind = .state) -> UnsafeFolder? {
        do {
            try Directories.create(path, mode: mode, kind: kind)
            return nil
        } catch let refusal as UnsafeFolder {
            return refusal
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    /// A folder refused at start is the configuration's fault: EX_CONFIG (78), which the units list in
    /// RestartPreventExitStatus=; any other failure to start is 1, and systemd restarts it.
    @Test func aRefusedFolderStopsTheStartWithTheConfigurationStatus() throws {
        let sticky = try temporary()
        defer { try? DirectoryTree.remove(sticky) }
        made(sticky + "/state", mode: 0o700, owner: FolderCheckTests.nobody, group: FolderCheckTests.nobody)
        let refused = try #require(refusal(sticky + "/state"))
        #expect(DaemonRun.startFailureStatus(refused) == StartExitStatus.configurationError)
        #expect(DaemonRun.startFailureStatus(InstanceLockError.unsafe(refused)) == 78)
        #expect(DaemonRun.startFailureStatus(SystemError("create directory /x", code: EACCES)) == 1)
    }

    @Test func syncdMakesItsFolderBelowAStickyWorldWritableOne() throws {
        let sticky = try temporary()
        defer { try? DirectoryTree.remove(sticky) }
        #expect(refusal(sticky + "/state/nested") == nil)
        let info = try #require(status(sticky + "/state/nested"))
        #expect(info.st_uid == 0 && info.st_mode & 0o7777 == 0o700)
    }

    /// The folders above syncd's that it makes get 0755 exactly (syncd runs with umask 077, and makes them 0700
    /// until it sets their mode), so every user can reach the control socket and the cache folder below them; a
    /// folder that was there keeps its mode.
    @Test func foldersAboveThatSyncdMakesAre0755AndOthersKeepTheirMode() throws {
        let top = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(top) }
        #expect(refusal(top + "/made/deeper/run", mode: 0o755, kind: .runtime) == nil)
        for (folder, mode) in [("/made", UInt32(0o755)), ("/made/deeper", 0o755), ("/made/deeper/run", 0o755)] {
            let info = try #require(status(top + folder))
            #expect(info.st_uid == geteuid() && info.st_mode & 0o7777 == mode, "\(folder)")
        }
        made(top + "/kept", mode: 0o711)
        #expect(refusal(top + "/kept/new/state") == nil)
        #expect(status(top + "/kept").map { $0.st_mode & 0o7777 } == 0o711)
        #expect(status(top + "/kept/new").map { $0.st_mode & 0o7777 } == 0o755)
        #expect(status(top + "/kept/new/state").map { $0.st_mode & 0o7777 } == 0o700)
        // A user's instance (--user): 0700, as the XDG Base Directory Specification asks below $HOME.
        let user = Directories(state: nil, cache: nil, runtime: nil, userMode: true, environment: ["HOME": top + "/home"])
        #expect(user.parentMode == 0o700)
        #expect(Directories(state: nil, cache: nil, runtime: nil, userMode: false, environment: [:]).parentMode == 0o755)
        try Directories.create(user.state, mode: 0o700, kind: .state, parents: user.parentMode)
        #expect(user.state == top + "/home/.local/state/syncd")
        for folder in ["/home", "/home/.local", "/home/.local/state"] {
            #expect(status(top + folder).map { $0.st_mode & 0o7777 } == 0o700, "\(folder)")
        }
    }

    @Test func aFolderAnotherUserMadeFirstIsRefusedAndLeftAsItIs() throws {
        let sticky = try temporary()
        defer { try? DirectoryTree.remove(sticky) }
        made(sticky + "/state", mode: 0o755, owner: Self.nobody, group: Self.nobody)
        let found = try #require(refusal(sticky + "/state"))
        #expect(found.problem == .foreignOwner(uid: Self.nobody) && found.parent == nil && found.kind == "state directory")
        #expect(found.description.hasPrefix("Failed to use state directory \(sticky)/state: owned by uid 65534 (nobody), not by root"))
        #expect(status(sticky + "/state").map { $0.st_mode & 0o7777 } == 0o755)  // not chmod'ed
        #expect(entries(sticky + "/state").isEmpty)
        // The same folder, checked without creating anything (a reload's new directories).
        #expect(throws: UnsafeFolder.self) { try FolderCheck.inspect(sticky + "/state", kind: .state, mode: 0o700, followingLinks: true) }
        #expect(throws: Never.self) { try FolderCheck.inspect(sticky + "/missing", kind: .state, mode: 0o700, followingLinks: true) }
        #expect(status(sticky + "/missing") == nil)
    }

    @Test(arguments: [UInt32(0o777), 0o1777, 0o703])
    func aFolderEveryUserMayWriteInIsRefusedEvenRootsAndSticky(_ mode: UInt32) throws {
        let parent = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(parent) }
        made(parent + "/cache", mode: mode)
        let found = try #require(refusal(parent + "/cache", mode: 0o750, kind: .cache))
        #expect(found.problem == .writableByEveryone(mode: mode))
        // A sticky one is shared (as /tmp is): a folder of syncd's own below it, never a chmod of it.
        #expect(found.reason.hasSuffix(mode == 0o1777
            ? "not one of syncd's own; set CacheDirectory= to a folder of syncd's own below it (CacheDirectory=\(parent)/cache/syncd-cache): syncd creates it"
            : "if only syncd keeps files there, chmod it (chmod 0750 \(parent)/cache), else set CacheDirectory= to a folder of syncd's own elsewhere"))
        #expect(status(parent + "/cache").map { $0.st_mode & 0o7777 } == mode)
    }

    @Test func groupWriteIsRefusedForAnotherGroupAndRemovedForSyncdsOwn() throws {
        let parent = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(parent) }
        made(parent + "/other", mode: 0o770, group: 100)
        #expect(try #require(refusal(parent + "/other")).problem == .writableByGroup(gid: 100, mode: 0o770))
        made(parent + "/own", mode: 0o770, group: getegid())
        #expect(refusal(parent + "/own") == nil)
        #expect(status(parent + "/own").map { $0.st_mode & 0o7777 } == 0o700)
    }

    @Test func aFolderAboveThatOthersCanReplaceItInIsNamed() throws {
        let top = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(top) }
        made(top + "/open", mode: 0o777)
        let open = try #require(refusal(top + "/open/state"))
        #expect(open.parent == top + "/open" && open.problem == .writableByEveryone(mode: 0o777))
        made(top + "/theirs", mode: 0o755, owner: Self.nobody)
        made(top + "/theirs/deeper", mode: 0o755)
        let theirs = try #require(refusal(top + "/theirs/deeper/state"))
        #expect(theirs.parent == top + "/theirs" && theirs.problem == .foreignOwner(uid: Self.nobody))
        #expect(status(top + "/theirs/deeper/state") == nil)  // refused before anything was made in their folder
    }

    @Test func aLinkedDirectoryIsCheckedWhereItPoints() throws {
        let top = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(top) }
        made(top + "/target", mode: 0o700, owner: Self.nobody)
        #expect(symlink(top + "/target", top + "/state") == 0)
        let found = try #require(refusal(top + "/state"))
        #expect(found.problem == .foreignOwner(uid: Self.nobody) && found.target == top + "/target" && found.entry == .folder)
        // The advice names the folder the link leads to: chown -R given the link would change the link alone.
        #expect(found.reason.hasPrefix("use state directory \(top)/state (which leads to \(top)/target): owned by uid 65534"))
        #expect(found.reason.hasSuffix("chown it (chown -R root \(top)/target)"))
        #expect(status(top + "/target").map { $0.st_mode & 0o7777 } == 0o700)
        // Root's link to a shared sticky folder: a folder of syncd's own below where it leads, never a chmod.
        made(top + "/shared", mode: 0o1777)
        #expect(symlink(top + "/shared", top + "/cache") == 0)
        let shared = try #require(refusal(top + "/cache", mode: 0o750, kind: .cache))
        #expect(shared.target == top + "/shared" && shared.reason.hasSuffix(
            "set CacheDirectory= to a folder of syncd's own below it (CacheDirectory=\(top)/shared/syncd-cache): syncd creates it"))
        #expect(status(top + "/shared").map { $0.st_mode & 0o7777 } == 0o1777)
        // Spelled with a trailing slash, the folder itself is no link.
        #expect(try #require(refusal(top + "/shared/", mode: 0o750, kind: .cache)).target == nil)
    }

    /// A link another user planted where syncd's folder goes (before syncd made it) is not followed, even to a
    /// folder of root's that would pass: the folder it points to keeps its mode and gets nothing.
    @Test func aLinkAnotherUserPlantedIsNotFollowed() throws {
        let sticky = try temporary()
        defer { try? DirectoryTree.remove(sticky) }
        made(sticky + "/roots", mode: 0o755)
        #expect(symlink(sticky + "/roots", sticky + "/state") == 0 && lchown(sticky + "/state", Self.nobody, Self.nobody) == 0)
        let found = try #require(refusal(sticky + "/state"))
        #expect(found.problem == .foreignOwner(uid: Self.nobody) && found.parent == nil && found.path == sticky + "/state")
        #expect(found.entry == .link && found.reason == "use state directory \(sticky)/state: it is a symbolic link owned by uid "
                + "65534 (nobody), not by root (syncd's user), so that user could point it elsewhere; remove the link (rm "
                + "\(sticky)/state): syncd creates the folder itself")
        #expect(status(sticky + "/roots").map { $0.st_mode & 0o7777 } == 0o755)
        #expect(entries(sticky + "/roots").isEmpty)
        // One on the way to the folder is refused the same way, naming it.
        let below = try #require(refusal(sticky + "/state/deeper"))
        #expect(below.parent == sticky + "/state" && below.problem == .foreignOwner(uid: Self.nobody) && below.entry == .link)
        #expect(entries(sticky + "/roots").isEmpty)
        // Root's own link is followed.
        #expect(unlink(sticky + "/state") == 0 && symlink(sticky + "/roots", sticky + "/state") == 0)
        #expect(refusal(sticky + "/state") == nil)
        #expect(status(sticky + "/roots").map { $0.st_mode & 0o7777 } == 0o700)
    }

    /// A system folder (root's, 0755: it passes as to owner and mode) is never taken as syncd's own, also through a
    /// link. Checked with `inspect`, which changes nothing, so a regression cannot chmod the host's /usr.
    @Test func aSystemFolderIsRefusedAndNotChanged() throws {
        let top = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(top) }
        #expect(symlink("/usr", top + "/state") == 0)
        let before = try #require(status("/usr"))
        for (path, target) in [("/usr/", String?.none), (top + "/state", "/usr")] {
            do {
                try FolderCheck.inspect(path, kind: .state, mode: 0o700, followingLinks: true)
                Issue.record("\(path) passed")
            } catch let refusal as UnsafeFolder {
                #expect(refusal.problem == .systemFolder && refusal.target == target)
                #expect(refusal.reason.hasSuffix("; set StateDirectory= to a folder of syncd's own below it (StateDirectory=/usr/syncd-state): syncd creates it"))
            }
        }
        #expect(status("/usr").map { ($0.st_mode, $0.st_uid) } ?? (0, 1) == (before.st_mode, before.st_uid))
    }

    @Test func aStateDatabaseAnotherUserOwnsIsRefusedUnopened() throws {
        let top = try temporary(mode: 0o755)
        defer { try? DirectoryTree.remove(top) }
        let directories = Directories(state: top + "/state", cache: top + "/cache", runtime: top + "/run", userMode: false, environment: [:])
        made(top + "/state", mode: 0o700)
        made(top + "/state/alice", mode: 0o700)
        let fd = open(top + "/state/alice/state.db", O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0 && write(fd, "theirs", 6) == 6 && fchown(fd, Self.nobody, Self.nobody) == 0)
        close(fd)
        do {
            _ = try AccountStorage.openStore(directories: directories, account: "alice", logger: Logger(environment: [:]),
                                             now: Timestamp(secondsSinceEpoch: 0))
            Issue.record("opened a database uid 65534 owns")
        } catch let refusal as UnsafeFolder {
            #expect(refusal.kind == "state database" && refusal.problem == .foreignOwner(uid: Self.nobody))
            #expect(refusal.entry == .file && refusal.reason.hasSuffix("; if it is syncd's, chown it (chown root \(top)/state/alice/state.db)"))
        }
        #expect(entries(top + "/state/alice") == ["state.db"])  // not moved aside, no -wal or -shm
        #expect(status(top + "/state/alice/state.db")?.st_size == 6)
    }
}
