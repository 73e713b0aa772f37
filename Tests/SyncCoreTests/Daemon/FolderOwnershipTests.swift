import Testing
@testable import SyncCore

/// Whether syncd may use a folder it keeps data in, and what it says when it may not (docs/syncd.8.md, FILES).
@Suite("FolderOwnership")
struct FolderOwnershipTests {
    static let root = ProcessIdentity(uid: 0, gid: 0)
    static let service = ProcessIdentity(uid: 995, gid: 993)

    struct Case: Sendable, CustomTestStringConvertible {
        let uid: UInt32, gid: UInt32, mode: UInt32
        let identity: ProcessIdentity
        let own: OwnershipProblem?
        let parent: OwnershipProblem?
        var testDescription: String { "uid \(uid) gid \(gid) mode \(String(mode, radix: 8)) as uid \(identity.uid)" }
    }

    static let cases: [Case] = [
        // syncd's user or root, not writable by others: fine as a folder and as a parent.
        Case(uid: 0, gid: 0, mode: 0o700, identity: root, own: nil, parent: nil),
        Case(uid: 0, gid: 0, mode: 0o755, identity: service, own: nil, parent: nil),
        Case(uid: 995, gid: 993, mode: 0o750, identity: service, own: nil, parent: nil),
        // Another user's: never, as a folder or a parent, whatever the mode.
        Case(uid: 65534, gid: 65534, mode: 0o700, identity: root, own: .foreignOwner(uid: 65534), parent: .foreignOwner(uid: 65534)),
        Case(uid: 65534, gid: 65534, mode: 0o1777, identity: root, own: .foreignOwner(uid: 65534), parent: .foreignOwner(uid: 65534)),
        // The service's folder is another user's to a root run (only the effective uid and root count).
        Case(uid: 995, gid: 993, mode: 0o700, identity: root, own: .foreignOwner(uid: 995), parent: .foreignOwner(uid: 995)),
        Case(uid: 1000, gid: 1000, mode: 0o755, identity: service, own: .foreignOwner(uid: 1000), parent: .foreignOwner(uid: 1000)),
        // Writable by every user: never syncd's folder, even sticky; a parent only when sticky (/var/tmp, /tmp).
        Case(uid: 0, gid: 0, mode: 0o777, identity: root, own: .writableByEveryone(mode: 0o777), parent: .writableByEveryone(mode: 0o777)),
        Case(uid: 0, gid: 0, mode: 0o1777, identity: root, own: .writableByEveryone(mode: 0o1777), parent: nil),
        Case(uid: 995, gid: 993, mode: 0o703, identity: service, own: .writableByEveryone(mode: 0o703), parent: .writableByEveryone(mode: 0o703)),
        // Writable by a group: fine when it is syncd's own group, else like every user.
        Case(uid: 995, gid: 993, mode: 0o770, identity: service, own: nil, parent: nil),
        Case(uid: 0, gid: 0, mode: 0o775, identity: root, own: nil, parent: nil),
        Case(uid: 0, gid: 100, mode: 0o770, identity: root, own: .writableByGroup(gid: 100, mode: 0o770),
             parent: .writableByGroup(gid: 100, mode: 0o770)),
        Case(uid: 0, gid: 50, mode: 0o2775, identity: service, own: .writableByGroup(gid: 50, mode: 0o2775),
             parent: .writableByGroup(gid: 50, mode: 0o2775)),
        Case(uid: 0, gid: 100, mode: 0o1770, identity: root, own: .writableByGroup(gid: 100, mode: 0o1770), parent: nil),
        // Read or search permission for others is no risk.
        Case(uid: 995, gid: 100, mode: 0o755, identity: service, own: nil, parent: nil),
    ]

    @Test(arguments: cases)
    func decision(_ c: Case) {
        let entry = FileOwnership(uid: c.uid, gid: c.gid, mode: c.mode)
        #expect(FolderOwnership.problem(with: entry, for: c.identity) == c.own)
        #expect(FolderOwnership.problem(withParent: entry, for: c.identity) == c.parent)
    }

    /// The refusal as syncd, root or the service user uid 995, says it.
    private func reason(_ kind: String, _ path: String, parent: String? = nil, _ problem: OwnershipProblem, mode: UInt32 = 0o700,
                        as identity: ProcessIdentity = root, entry: UnsafeFolder.Entry = .folder,
                        homes: [UInt32: String] = [:]) -> String {
        UnsafeFolder(kind: kind, path: path, parent: parent, problem: problem, mode: mode, identity: identity,
                     userNames: [65534: "nobody", 0: "root", 995: "syncd", 1000: "alice", 112: "postgres"],
                     groupNames: [100: "users", 8: "mail", 50: "staff"], entry: entry, homes: homes).reason
    }

    @Test func aFolderAnotherUserOwnsNamesThemAndSaysWhatToDo() {
        let refusal = UnsafeFolder(kind: "state directory", path: "/var/tmp/x", problem: .foreignOwner(uid: 65534), mode: 0o700,
                                   identity: Self.root, userNames: [65534: "nobody", 0: "root"], homes: [65534: "/nonexistent"])
        #expect(refusal.description == "Failed to use state directory /var/tmp/x: owned by uid 65534 (nobody), not by root "
                + "(syncd's user), so that user could change or delete syncd's data; if syncd did not make it, remove it if "
                + "it is empty (rmdir /var/tmp/x): syncd creates it itself, or set StateDirectory= to another folder; if it "
                + "holds syncd's own data, chown it (chown -R root /var/tmp/x)")
        let unnamed = UnsafeFolder(kind: "cache directory", path: "/s/c", problem: .foreignOwner(uid: 4242), mode: 0o750,
                                   identity: Self.service, userNames: [995: "syncd"])
        #expect(unnamed.reason == "use cache directory /s/c: owned by uid 4242, not by syncd's user (uid 995 (syncd)) or root, "
                + "so that user could change or delete syncd's data; if syncd did not make it, remove it if it is empty "
                + "(rmdir /s/c): syncd creates it itself, or set CacheDirectory= to another folder; if it holds syncd's own "
                + "data, chown it (chown -R syncd /s/c)")
        #expect(reason("account folder", "/s/alice", .foreignOwner(uid: 65534))
                == "use account folder /s/alice: owned by uid 65534 (nobody), not by root (syncd's user), so that user could "
                + "change or delete syncd's data; if it holds nothing, remove it if it is empty (rmdir /s/alice): syncd "
                + "creates it itself; if it holds syncd's own data, chown it (chown -R root /s/alice)")
    }

    /// A link is named as one, and never chown'ed (chown -R would follow it): removing the link is safe.
    @Test func aLinkAnotherUserOwnsIsNamedAsALinkAndRemoved() {
        #expect(reason("state directory", "/var/tmp/state", .foreignOwner(uid: 65534), entry: .link)
                == "use state directory /var/tmp/state: it is a symbolic link owned by uid 65534 (nobody), not by root "
                + "(syncd's user), so that user could point it elsewhere; remove the link (rm /var/tmp/state): syncd creates "
                + "the folder itself")
        #expect(reason("state directory", "/var/tmp/state/deeper", parent: "/var/tmp/state", .foreignOwner(uid: 65534), entry: .link)
                == "use state directory /var/tmp/state/deeper: the symbolic link above it, /var/tmp/state, is owned by uid "
                + "65534 (nobody), not by root (syncd's user), so that user could point it elsewhere; choose a state "
                + "directory below folders that only root or syncd's user can change, with no other user's links on the way")
    }

    /// A file is never removed on syncd's advice (state.db is the data), and chown'ed without -R.
    @Test func aFileAnotherUserOwnsIsChownedAlone() {
        #expect(reason("state database", "/s/alice/state.db", .foreignOwner(uid: 4242), mode: 0o600, as: Self.service, entry: .file)
                == "use state database /s/alice/state.db: owned by uid 4242, not by syncd's user (uid 995 (syncd)) or root, "
                + "so that user could change or delete syncd's data; if it is syncd's, chown it (chown syncd /s/alice/state.db)")
    }

    /// A system folder or another user's home is never chown'ed, removed or chmod'ed on syncd's advice.
    @Test func aSystemFolderOrAHomeAnotherUserOwnsIsNeverChangedOnAdvice() {
        #expect(reason("state directory", "/srv/", .foreignOwner(uid: 1000), homes: [1000: "/home/alice"])
                == "use state directory /srv/: owned by uid 1000 (alice), not by root (syncd's user): it is a system folder, "
                + "not one of syncd's own; set StateDirectory= to a folder of syncd's own elsewhere")
        #expect(reason("cache directory", "/home/alice", .foreignOwner(uid: 1000), homes: [1000: "/home/alice/"])
                == "use cache directory /home/alice: owned by uid 1000 (alice), not by root (syncd's user): it is the home "
                + "folder of uid 1000 (alice), not one of syncd's own; set CacheDirectory= to a folder of syncd's own elsewhere")
        #expect(reason("state directory", "/var/lib/postgresql/15", .foreignOwner(uid: 112), homes: [112: "/var/lib/postgresql"])
                == "use state directory /var/lib/postgresql/15: owned by uid 112 (postgres), not by root (syncd's user): it "
                + "is in the home folder of uid 112 (postgres), not one of syncd's own; set StateDirectory= to a folder of "
                + "syncd's own elsewhere")
        #expect(reason("runtime directory", "/run/user/1000", .foreignOwner(uid: 1000))
                == "use runtime directory /run/user/1000: owned by uid 1000 (alice), not by root (syncd's user): it is a "
                + "system folder, not one of syncd's own; set RuntimeDirectory= to a folder of syncd's own elsewhere")
    }

    /// /var/tmp as syncd's own folder: never "chmod 0750 /var/tmp", but a folder of syncd's own below it.
    @Test func aSharedStickyFolderGetsAFolderOfSyncdsOwnBelowIt() {
        #expect(reason("cache directory", "/var/tmp", .writableByEveryone(mode: 0o1777), mode: 0o750)
                == "use cache directory /var/tmp: its mode 1777 lets every user write in it: it is a system folder, not one "
                + "of syncd's own; set CacheDirectory= to a folder of syncd's own below it (CacheDirectory=/var/tmp/syncd-cache): "
                + "syncd creates it")
        #expect(reason("state directory", "/tmp/", .writableByEveryone(mode: 0o1777))
                == "use state directory /tmp/: its mode 1777 lets every user write in it: it is a system folder, not one of "
                + "syncd's own; set StateDirectory= to a folder of syncd's own below it (StateDirectory=/tmp/syncd-state): "
                + "syncd creates it")
        #expect(reason("runtime directory", "/srv/drop", .writableByEveryone(mode: 0o1777), mode: 0o755)
                == "use runtime directory /srv/drop: its mode 1777 lets every user write in it: it is a folder every user "
                + "shares, as /tmp is, not one of syncd's own; set RuntimeDirectory= to a folder of syncd's own below it "
                + "(RuntimeDirectory=/srv/drop/syncd-run): syncd creates it")
        // Below a system folder that is not sticky, syncd's folder would be refused: elsewhere.
        #expect(reason("cache directory", "/srv", .writableByEveryone(mode: 0o777), mode: 0o750)
                == "use cache directory /srv: its mode 0777 lets every user write in it: it is a system folder, not one of "
                + "syncd's own; set CacheDirectory= to a folder of syncd's own elsewhere")
        #expect(reason("state directory", "/var/mail", .writableByGroup(gid: 8, mode: 0o2775))
                == "use state directory /var/mail: its mode 2775 lets group 8 (mail) write in it, which is not syncd's group: "
                + "it is a system folder, not one of syncd's own; set StateDirectory= to a folder of syncd's own elsewhere")
    }

    @Test func writableFoldersSayTheModeAndTheChmodOnlyOnCondition() {
        #expect(reason("cache directory", "/srv/c", .writableByEveryone(mode: 0o777), mode: 0o750)
                == "use cache directory /srv/c: its mode 0777 lets every user write in it; if only syncd keeps files there, "
                + "chmod it (chmod 0750 /srv/c), else set CacheDirectory= to a folder of syncd's own elsewhere")
        #expect(reason("state directory", "/srv/g", .writableByGroup(gid: 100, mode: 0o770))
                == "use state directory /srv/g: its mode 0770 lets group 100 (users) write in it, which is not syncd's group; "
                + "if only syncd keeps files there, chmod it (chmod 0700 /srv/g), else set StateDirectory= to a folder of "
                + "syncd's own elsewhere")
        // The account folders are syncd's own (in a folder only root or syncd's user can change): chmod them.
        #expect(reason("account folder", "/s/alice", .writableByEveryone(mode: 0o1777))
                == "use account folder /s/alice: its mode 1777 lets every user write in it; chmod it (chmod 0700 /s/alice)")
        #expect(reason("account folder", "/s/alice", .writableByGroup(gid: 100, mode: 0o770))
                == "use account folder /s/alice: its mode 0770 lets group 100 (users) write in it, which is not syncd's "
                + "group; chmod it (chmod 0700 /s/alice)")
    }

    @Test func aParentAtFaultIsNamed() {
        #expect(reason("state directory", "/var/tmp/d/state", parent: "/var/tmp/d", .foreignOwner(uid: 65534))
                == "use state directory /var/tmp/d/state: the folder above it, /var/tmp/d, is owned by uid 65534 "
                + "(nobody), not by root (syncd's user), so that user could replace it; choose a state directory below "
                + "folders that only root or syncd's user can change")
        #expect(reason("state directory", "/home/alice/s", parent: "/home/alice", .foreignOwner(uid: 1000), homes: [1000: "/home/alice"])
                == "use state directory /home/alice/s: the folder above it, /home/alice, is owned by uid 1000 (alice), not "
                + "by root (syncd's user), so that user could replace it; choose a state directory below folders that only "
                + "root or syncd's user can change")
        #expect(reason("runtime directory", "/srv/open/run", parent: "/srv/open", .writableByEveryone(mode: 0o777), mode: 0o755)
                == "use runtime directory /srv/open/run: the folder above it, /srv/open, has mode 0777: every user could "
                + "replace it; if no one else needs to write in it, make it not writable by others (chmod o-w /srv/open); "
                + "else choose a runtime directory below folders that only root or syncd's user can change")
        #expect(reason("cache directory", "/srv/g/c", parent: "/srv/g", .writableByGroup(gid: 50, mode: 0o2775), mode: 0o750)
                == "use cache directory /srv/g/c: the folder above it, /srv/g, has mode 2775: group 50 (staff) could "
                + "replace it; if no one else needs to write in it, make it not writable by its group (chmod g-w /srv/g); "
                + "else choose a cache directory below folders that only root or syncd's user can change")
        // A system folder above is never chmod'ed on advice.
        #expect(reason("state directory", "/var/mail/s", parent: "/var/mail", .writableByGroup(gid: 8, mode: 0o2775))
                == "use state directory /var/mail/s: the folder above it, /var/mail, has mode 2775: group 8 (mail) could "
                + "replace it; choose a state directory below folders that only root or syncd's user can change")
        #expect(reason("state directory", "/srv/s", parent: "/srv", .writableByEveryone(mode: 0o777))
                == "use state directory /srv/s: the folder above it, /srv, has mode 0777: every user could replace it; "
                + "choose a state directory below folders that only root or syncd's user can change")
    }

    /// Reached through a link (root's), the advice names the folder it leads to: a system folder there is one.
    @Test func theFolderALinkLeadsToIsTheOneAdvisedOn() {
        var refusal = UnsafeFolder(kind: "cache directory", path: "/srv/mine", problem: .writableByEveryone(mode: 0o1777), mode: 0o750,
                                   identity: Self.root)
        refusal.target = "/var/tmp"
        #expect(refusal.reason == "use cache directory /srv/mine (which leads to /var/tmp): its mode 1777 lets every user "
                + "write in it: it is a system folder, not one of syncd's own; set CacheDirectory= to a folder of syncd's "
                + "own below it (CacheDirectory=/var/tmp/syncd-cache): syncd creates it")
        refusal.problem = .foreignOwner(uid: 65534)
        refusal.target = "/srv/theirs"
        #expect(refusal.reason == "use cache directory /srv/mine (which leads to /srv/theirs): owned by uid 65534, not by root "
                + "(syncd's user), so that user could change or delete syncd's data; if syncd did not make it, remove it if "
                + "it is empty (rmdir /srv/theirs): syncd creates it itself, or set CacheDirectory= to another folder; if it "
                + "holds syncd's own data, chown it (chown -R 0 /srv/theirs)")
    }

    /// A system folder root owns passes as to its owner and mode, yet syncd would set its mode (StateDirectory=/var/lib
    /// would make /var/lib 0700): refused, with a folder of syncd's own below it.
    @Test func aSystemFolderIsNeverSyncdsOwn() {
        #expect(FolderOwnership.problem(withOwnFolderAt: "/var/lib/") == .systemFolder)
        #expect(FolderOwnership.problem(withOwnFolderAt: "/var/lib/syncd") == nil)
        #expect(reason("state directory", "/var/lib/", .systemFolder)
                == "use state directory /var/lib/: it is a system folder, not one of syncd's own, and syncd would set its "
                + "mode to 0700; set StateDirectory= to a folder of syncd's own below it (StateDirectory=/var/lib/syncd-state): "
                + "syncd creates it")
        #expect(reason("runtime directory", "/", .systemFolder, mode: 0o755)
                == "use runtime directory /: it is a system folder, not one of syncd's own, and syncd would set its mode to "
                + "0755; set RuntimeDirectory= to a folder of syncd's own below it (RuntimeDirectory=/syncd-run): syncd creates it")
    }

    @Test(arguments: [("/tmp", true), ("/var/tmp/", true), ("/var//tmp", true), ("/dev/shm", true), ("/", true),
                      ("/run/user/1000", true), ("/run/user/1000/syncd", false), ("/var/tmp/x", false), ("/srv/c", false)])
    func systemFolders(_ path: String, _ system: Bool) {
        #expect(UnsafeFolder.isSystemFolder(path) == system)
    }

    @Test func controlCharactersInPathsAndNamesAreEscaped() {
        let refusal = UnsafeFolder(kind: "state directory", path: "/tmp/a\u{1b}[2Jb", problem: .foreignOwner(uid: 7), mode: 0o700,
                                   identity: Self.root, userNames: [7: "ev\u{7}il"])
        #expect(refusal.reason.hasPrefix("use state directory /tmp/a\\x1b[2Jb: owned by uid 7 (ev\\x07il), "))
        #expect(!refusal.reason.contains("\u{1b}") && !refusal.reason.contains("\u{7}"))
    }
}
