// Whether syncd may use a folder (or a file) it keeps data in, from its owner and mode alone (docs/syncd.8.md,
// FILES, "Ownership"). The daemon reads the owner and mode with fstat(2) on a descriptor it opened (so the answer
// is about the folder it then uses, not about a path someone can swap) and asks here.
//
// The rules:
// - syncd's own folders (the state, cache and runtime directories, the account folders in them) and the files it
//   keeps there (state.db, syncd.lock) must belong to syncd's user (the effective uid) or to root: another owner can
//   delete the state database or replace the published cache files, whatever their modes say.
// - They must not be writable by every user, sticky or not (a sticky /tmp-like folder still lets anyone add files
//   or folders next to syncd's, under names syncd uses).
// - Group write is allowed only for syncd's own group (its effective gid; the syncd group of the shipped unit has
//   no other member): syncd then sets its own mode (0700, 0750, 0755), which removes it. Any other group that may
//   write there could do what another owner can.
// - Every folder above one of syncd's must belong to root or syncd's user, and must not be writable by others
//   (every user, or a group not syncd's) unless it is sticky: whoever may rename entries in a parent can replace
//   syncd's folder with their own. A sticky world-writable folder such as /var/tmp is a fine parent (others cannot
//   rename or remove what syncd created there), never the folder itself.

/// A folder's or file's owner and permission bits, as stat(2) reports them.
public struct FileOwnership: Sendable, Equatable {
    /// The owning user (`st_uid`).
    public var uid: UInt32
    /// The owning group (`st_gid`).
    public var gid: UInt32
    /// The permission bits with set-id and sticky bits (`st_mode & 07777`).
    public var mode: UInt32

    /// Creates the description.
    public init(uid: UInt32, gid: UInt32, mode: UInt32) {
        self.uid = uid
        self.gid = gid
        self.mode = mode
    }

    /// The sticky bit (`S_ISVTX`): only an entry's owner (or the folder's, or root) may rename or remove it.
    public var isSticky: Bool { mode & 0o1000 != 0 }
}

/// The user and group syncd runs as (effective IDs).
public struct ProcessIdentity: Sendable, Equatable {
    /// `geteuid()`.
    public var uid: UInt32
    /// `getegid()`.
    public var gid: UInt32

    /// Creates the identity.
    public init(uid: UInt32, gid: UInt32) {
        self.uid = uid
        self.gid = gid
    }
}

/// Why a folder or file may not be used (`FolderOwnership`).
public enum OwnershipProblem: Sendable, Equatable {
    /// Owned by a user who is neither syncd's nor root.
    case foreignOwner(uid: UInt32)
    /// Every user may write in it (mode shown).
    case writableByEveryone(mode: UInt32)
    /// A group that is not syncd's may write in it (its gid and the mode shown).
    case writableByGroup(gid: UInt32, mode: UInt32)
}

/// The decision (see the rules at the top of this file).
public enum FolderOwnership {
    /// The problem with one of syncd's own folders or files, or nil when syncd may use it.
    public static func problem(with own: FileOwnership, for identity: ProcessIdentity) -> OwnershipProblem? {
        if let owner = foreignOwner(own, identity) { return owner }
        if own.mode & 0o002 != 0 { return .writableByEveryone(mode: own.mode) }
        if own.mode & 0o020 != 0, own.gid != identity.gid { return .writableByGroup(gid: own.gid, mode: own.mode) }
        return nil
    }

    /// The problem with a folder above one of syncd's, or nil when it cannot be used to replace syncd's.
    public static func problem(withParent parent: FileOwnership, for identity: ProcessIdentity) -> OwnershipProblem? {
        if let owner = foreignOwner(parent, identity) { return owner }
        if parent.isSticky { return nil }
        if parent.mode & 0o002 != 0 { return .writableByEveryone(mode: parent.mode) }
        if parent.mode & 0o020 != 0, parent.gid != identity.gid { return .writableByGroup(gid: parent.gid, mode: parent.mode) }
        return nil
    }

    private static func foreignOwner(_ entry: FileOwnership, _ identity: ProcessIdentity) -> OwnershipProblem? {
        entry.uid == identity.uid || entry.uid == 0 ? nil : .foreignOwner(uid: entry.uid)
    }
}

/// A folder or file syncd refuses to use, with what to do about it: "Failed to use state directory /var/tmp/x:
/// owned by uid 65534 (nobody), not by syncd's user (uid 0, root) or root; …".
public struct UnsafeFolder: FailureReason, Sendable, Equatable {
    /// What it is to syncd: "state directory", "cache directory", "runtime directory", "account folder",
    /// "state database", "lock file".
    public var kind: String
    /// The folder or file syncd was to use.
    public var path: String
    /// The folder above it that is at fault, when it is not `path` itself.
    public var parent: String?
    /// What is wrong.
    public var problem: OwnershipProblem
    /// The mode syncd gives `path` (for the `chmod` it suggests).
    public var mode: UInt32
    /// syncd's identity.
    public var identity: ProcessIdentity
    /// User names of the uids involved (the owner, syncd's), where the system knows them.
    public var userNames: [UInt32: String]
    /// Group names of the gids involved, where the system knows them.
    public var groupNames: [UInt32: String]

    /// Creates the refusal.
    public init(kind: String, path: String, parent: String? = nil, problem: OwnershipProblem, mode: UInt32,
                identity: ProcessIdentity, userNames: [UInt32: String] = [:], groupNames: [UInt32: String] = [:]) {
        self.kind = kind
        self.path = path
        self.parent = parent
        self.problem = problem
        self.mode = mode
        self.identity = identity
        self.userNames = userNames
        self.groupNames = groupNames
    }

    public var reason: String {
        "use \(kind) \(shown(path)): " + (parent.map(parentReason) ?? ownReason)
    }

    public var description: String { "Failed to \(reason)" }

    private var ownReason: String {
        let remove = "remove it (syncd creates it itself)"
        switch problem {
        case .foreignOwner(let uid):
            return "owned by \(user(uid)), not by \(syncdUser), so that user could change or delete syncd's data; "
                + "\(remove) or, if it holds syncd's own data, chown it (chown -R \(userNames[identity.uid] ?? String(identity.uid)) \(shown(path)))"
        case .writableByEveryone(let mode):
            return "its mode \(octal(mode)) lets every user write in it; \(remove) or chmod it (chmod \(octal(self.mode)) \(shown(path)))"
        case .writableByGroup(let gid, let mode):
            return "its mode \(octal(mode)) lets \(group(gid)) write in it, which is not syncd's group; "
                + "\(remove) or chmod it (chmod \(octal(self.mode)) \(shown(path)))"
        }
    }

    private func parentReason(_ parent: String) -> String {
        let place = "a \(kind) below folders that only root or syncd's user can change"
        let choose = "or choose \(place)"
        switch problem {
        case .foreignOwner(let uid):
            return "the folder above it, \(shown(parent)), is owned by \(user(uid)), not by \(syncdUser), so that user "
                + "could replace it; choose \(place)"
        case .writableByEveryone(let mode):
            return "the folder above it, \(shown(parent)), has mode \(octal(mode)): every user could replace it; "
                + "make that folder sticky or not writable by others (chmod o-w \(shown(parent))), \(choose)"
        case .writableByGroup(let gid, let mode):
            return "the folder above it, \(shown(parent)), has mode \(octal(mode)): \(group(gid)) could replace it; "
                + "make that folder sticky or not writable by its group (chmod g-w \(shown(parent))), \(choose)"
        }
    }

    private var syncdUser: String {
        identity.uid == 0 ? "root (syncd's user)" : "syncd's user (\(user(identity.uid))) or root"
    }

    private func user(_ uid: UInt32) -> String {
        userNames[uid].map { "uid \(uid) (\(PrintableText.escaping($0)))" } ?? "uid \(uid)"
    }

    private func group(_ gid: UInt32) -> String {
        groupNames[gid].map { "group \(gid) (\(PrintableText.escaping($0)))" } ?? "group \(gid)"
    }

    private func shown(_ path: String) -> String { PrintableText.escaping(path) }

    private func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
