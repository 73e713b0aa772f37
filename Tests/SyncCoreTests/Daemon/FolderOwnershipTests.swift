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

    @Test func aFolderAnotherUserOwnsNamesThemAndSaysWhatToDo() {
        let refusal = UnsafeFolder(kind: "state directory", path: "/var/tmp/x", problem: .foreignOwner(uid: 65534), mode: 0o700,
                                   identity: Self.root, userNames: [65534: "nobody", 0: "root"])
        #expect(refusal.description == "Failed to use state directory /var/tmp/x: owned by uid 65534 (nobody), not by root "
                + "(syncd's user), so that user could change or delete syncd's data; remove it (syncd creates it itself) or, "
                + "if it holds syncd's own data, chown it (chown -R root /var/tmp/x)")
        let unnamed = UnsafeFolder(kind: "lock file", path: "/s/syncd.lock", problem: .foreignOwner(uid: 4242), mode: 0o600,
                                   identity: Self.service, userNames: [995: "syncd"])
        #expect(unnamed.reason == "use lock file /s/syncd.lock: owned by uid 4242, not by syncd's user (uid 995 (syncd)) or root, "
                + "so that user could change or delete syncd's data; remove it (syncd creates it itself) or, if it holds "
                + "syncd's own data, chown it (chown -R syncd /s/syncd.lock)")
    }

    @Test func writableFoldersSayTheModeAndTheChmod() {
        let everyone = UnsafeFolder(kind: "cache directory", path: "/srv/c", problem: .writableByEveryone(mode: 0o1777), mode: 0o750,
                                    identity: Self.root)
        #expect(everyone.reason == "use cache directory /srv/c: its mode 1777 lets every user write in it; remove it "
                + "(syncd creates it itself) or chmod it (chmod 0750 /srv/c)")
        let group = UnsafeFolder(kind: "account folder", path: "/s/alice", problem: .writableByGroup(gid: 100, mode: 0o770), mode: 0o700,
                                 identity: Self.root, groupNames: [100: "users"])
        #expect(group.reason == "use account folder /s/alice: its mode 0770 lets group 100 (users) write in it, which is not "
                + "syncd's group; remove it (syncd creates it itself) or chmod it (chmod 0700 /s/alice)")
    }

    @Test func aParentAtFaultIsNamed() {
        let owner = UnsafeFolder(kind: "state directory", path: "/var/tmp/d/state", parent: "/var/tmp/d", problem: .foreignOwner(uid: 65534),
                                 mode: 0o700, identity: Self.root, userNames: [65534: "nobody"])
        #expect(owner.reason == "use state directory /var/tmp/d/state: the folder above it, /var/tmp/d, is owned by uid 65534 "
                + "(nobody), not by root (syncd's user), so that user could replace it; choose a state directory below "
                + "folders that only root or syncd's user can change")
        let open = UnsafeFolder(kind: "runtime directory", path: "/srv/open/run", parent: "/srv/open", problem: .writableByEveryone(mode: 0o777),
                                mode: 0o755, identity: Self.root)
        #expect(open.reason == "use runtime directory /srv/open/run: the folder above it, /srv/open, has mode 0777: every user "
                + "could replace it; make that folder sticky or not writable by others (chmod o-w /srv/open), or choose a "
                + "runtime directory below folders that only root or syncd's user can change")
        let group = UnsafeFolder(kind: "cache directory", path: "/srv/g/c", parent: "/srv/g", problem: .writableByGroup(gid: 50, mode: 0o2775),
                                 mode: 0o750, identity: Self.root, groupNames: [50: "staff"])
        #expect(group.reason == "use cache directory /srv/g/c: the folder above it, /srv/g, has mode 2775: group 50 (staff) could "
                + "replace it; make that folder sticky or not writable by its group (chmod g-w /srv/g), or choose a cache "
                + "directory below folders that only root or syncd's user can change")
    }

    @Test func controlCharactersInPathsAndNamesAreEscaped() {
        let refusal = UnsafeFolder(kind: "state directory", path: "/tmp/a\u{1b}[2Jb", problem: .foreignOwner(uid: 7), mode: 0o700,
                                   identity: Self.root, userNames: [7: "ev\u{7}il"])
        #expect(refusal.reason.hasPrefix("use state directory /tmp/a\\x1b[2Jb: owned by uid 7 (ev\\x07il), "))
        #expect(!refusal.reason.contains("\u{1b}") && !refusal.reason.contains("\u{7}"))
    }
}
