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
    /// A system folder (`UnsafeFolder.systemFolders`: /var/lib, /etc, /run, …) named as the state, cache or runtime
    /// directory: whoever owns it, syncd would set its mode (0700, 0750, 0755) on it.
    case systemFolder
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

    /// The problem with `path`, where the state, cache or runtime directory leads (links resolved), once its owner
    /// and mode passed: a system folder is never syncd's own, since syncd sets its folders' modes.
    public static func problem(withOwnFolderAt path: String) -> OwnershipProblem? {
        UnsafeFolder.isSystemFolder(path) ? .systemFolder : nil
    }

    private static func foreignOwner(_ entry: FileOwnership, _ identity: ProcessIdentity) -> OwnershipProblem? {
        entry.uid == identity.uid || entry.uid == 0 ? nil : .foreignOwner(uid: entry.uid)
    }
}

/// A folder or file syncd refuses to use, with what to do about it: "Failed to use state directory /var/tmp/x:
/// owned by uid 65534 (nobody), not by syncd's user (uid 0, root) or root; …".
///
/// The advice must never do harm where syncd is wrong about what the folder is for: it never says to chmod or
/// chown a system folder (/tmp, /var/tmp, /dev/shm, /var/lib, …), a folder every user shares (sticky and writable by
/// every user) or another user's home folder, but to name a folder of syncd's own (below it, where that would pass);
/// it never says to chown a symbolic link (chown without -R changes what it points to, chown -R the link alone) but
/// to remove the link, and of a folder reached through a link it names where the link leads; it says to remove a folder
/// only with rmdir(1), which removes nothing but an empty folder; a chmod or chown of a folder it is not sure is
/// syncd's comes with the condition under which it is right.
public struct UnsafeFolder: FailureReason, Sendable, Equatable {
    /// What the entry at fault (`parent` if set, else `path`) is.
    public enum Entry: Sendable, Equatable {
        /// A folder.
        case folder
        /// A file (state.db, syncd.lock).
        case file
        /// A symbolic link (its owner is the problem).
        case link
    }

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
    /// What the entry at fault is.
    public var entry: Entry
    /// Home folders of the uids involved (the owner's), where the system knows them.
    public var homes: [UInt32: String]
    /// The folder `path` leads to through symbolic links (of root's or syncd's user), when it is not `path`: the
    /// folder at fault, which the advice names (chown -R does not follow a link given to it, chmod does).
    public var target: String?

    /// Creates the refusal.
    public init(kind: String, path: String, parent: String? = nil, problem: OwnershipProblem, mode: UInt32,
                identity: ProcessIdentity, userNames: [UInt32: String] = [:], groupNames: [UInt32: String] = [:],
                entry: Entry = .folder, homes: [UInt32: String] = [:]) {
        self.kind = kind
        self.path = path
        self.parent = parent
        self.problem = problem
        self.mode = mode
        self.identity = identity
        self.userNames = userNames
        self.groupNames = groupNames
        self.entry = entry
        self.homes = homes
    }

    public var reason: String {
        "use \(kind) \(shown(path))" + (target.map { " (which leads to \(shown($0)))" } ?? "") + ": "
            + (parent.map(parentReason) ?? ownReason)
    }

    public var description: String { "Failed to \(reason)" }

    /// Folders the system or every user shares: never one of syncd's own, whoever owns them and whatever their
    /// mode, so never chmod'ed or chown'ed on syncd's advice.
    public static let systemFolders: Set<String> = [
        "/", "/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/dev", "/run", "/run/lock", "/run/user", "/var", "/var/lib",
        "/var/cache", "/var/log", "/var/lock", "/var/mail", "/var/spool", "/var/local", "/var/opt", "/var/crash",
        "/var/backups", "/home", "/root", "/srv", "/opt", "/mnt", "/media", "/usr", "/usr/local", "/etc", "/boot",
        "/proc", "/sys", "/bin", "/sbin", "/lib", "/lib64",
    ]

    /// Whether `path` is a system folder: one of `systemFolders`, or a user's runtime folder (/run/user/UID).
    public static func isSystemFolder(_ path: String) -> Bool {
        let normal = FolderPath.normalized(path)
        if systemFolders.contains(normal) { return true }
        let parts = normal.split(separator: "/")
        return parts.count == 3 && parts[0] == "run" && parts[1] == "user"
    }

    /// The folder the advice names: where `path` leads.
    private var folder: String { target ?? path }

    /// `folder` as the start of a path below it, shown.
    private var below: String { shown(FolderPath.normalized(folder) == "/" ? "" : FolderPath.normalized(folder)) }

    private var ownReason: String {
        let key = Self.keys[kind]
        switch (entry, problem) {
        case (.link, .foreignOwner(let uid)):
            return "it is a symbolic link owned by \(user(uid)), not by \(syncdUser), so that user could point it elsewhere; "
                + "remove the link (rm \(shown(folder))): syncd creates the folder itself"
        case (.file, .foreignOwner(let uid)):
            return "owned by \(user(uid)), not by \(syncdUser), so that user could change or delete syncd's data; if it "
                + "is syncd's, chown it (chown \(syncdUserName) \(shown(folder)))"
        case (_, .foreignOwner(let uid)):
            let owned = "owned by \(user(uid)), not by \(syncdUser)"
            if let key, let whose = othersFolder(uid) {
                return "\(owned): it is \(whose), not one of syncd's own; set \(key) to a folder of syncd's own elsewhere"
            }
            let remove = "remove it if it is empty (rmdir \(shown(folder))): syncd creates it itself"
            let chown = "if it holds syncd's own data, chown it (chown -R \(syncdUserName) \(shown(folder)))"
            return "\(owned), so that user could change or delete syncd's data; "
                + (key.map { "if syncd did not make it, \(remove), or set \($0) to another folder; \(chown)" }
                    ?? "if it holds nothing, \(remove); \(chown)")
        case (_, .systemFolder):
            // It passed as a folder of syncd's own, so one below it passes as well.
            return "it is a system folder, not one of syncd's own, and syncd would set its mode to \(octal(mode))"
                + (key.map { "; set \($0) to a folder of syncd's own below it (\($0)\(below)/\(Self.ownNames[kind] ?? "syncd")): syncd creates it" } ?? "")
        case (_, .writableByEveryone(let mode)):
            return "its mode \(octal(mode)) lets every user write in it" + advice(mode: mode, key: key)
        case (_, .writableByGroup(let gid, let mode)):
            return "its mode \(octal(mode)) lets \(group(gid)) write in it, which is not syncd's group" + advice(mode: mode, key: key)
        }
    }

    /// After "its mode … lets … write in it": name a folder of syncd's own for a shared or system one, else chmod it.
    private func advice(mode: UInt32, key: String?) -> String {
        let chmod = "chmod it (chmod \(octal(self.mode)) \(shown(folder)))"
        guard let key else { return "; \(chmod)" }
        let everyone = mode & 0o002 != 0
        let sticky = mode & 0o1000 != 0
        if Self.isSystemFolder(folder) || (everyone && sticky) {
            let what = Self.isSystemFolder(folder) ? "a system folder" : "a folder every user shares, as /tmp is"
            // Below a sticky folder syncd's own passes (FolderOwnership); below one that is not, it would not.
            let place = sticky ? "below it (\(key)\(below)/\(Self.ownNames[kind] ?? "syncd")): syncd creates it" : "elsewhere"
            return ": it is \(what), not one of syncd's own; set \(key) to a folder of syncd's own \(place)"
        }
        return "; if only syncd keeps files there, \(chmod), else set \(key) to a folder of syncd's own elsewhere"
    }

    private func parentReason(_ parent: String) -> String {
        let choose = "choose a \(kind) below folders that only root or syncd's user can change"
        let above = "the folder above it, \(shown(parent)),"
        // A chmod of the folder above only on the condition that no one else needs it: never of a system folder.
        func change(_ what: String, _ chmod: String) -> String {
            Self.isSystemFolder(parent) ? choose
                : "if no one else needs to write in it, make it \(what) (\(chmod) \(shown(parent))); else \(choose)"
        }
        switch (entry, problem) {
        case (.link, .foreignOwner(let uid)):
            return "the symbolic link above it, \(shown(parent)), is owned by \(user(uid)), not by \(syncdUser), so that "
                + "user could point it elsewhere; \(choose), with no other user's links on the way"
        case (_, .foreignOwner(let uid)):
            return "\(above) is owned by \(user(uid)), not by \(syncdUser), so that user could replace it; \(choose)"
        case (_, .writableByEveryone(let mode)):
            return "\(above) has mode \(octal(mode)): every user could replace it; \(change("not writable by others", "chmod o-w"))"
        case (_, .writableByGroup(let gid, let mode)):
            return "\(above) has mode \(octal(mode)): \(group(gid)) could replace it; \(change("not writable by its group", "chmod g-w"))"
        case (_, .systemFolder):
            return "\(above) is a system folder; \(choose)"  // not a parent's problem (FolderOwnership)
        }
    }

    /// The configuration key of the kinds it names.
    private static let keys = [
        "state directory": "StateDirectory=", "cache directory": "CacheDirectory=", "runtime directory": "RuntimeDirectory=",
    ]

    /// The folder name suggested below a shared one.
    private static let ownNames = ["state directory": "syncd-state", "cache directory": "syncd-cache", "runtime directory": "syncd-run"]

    /// What `path` is when it is not syncd's to change: a system folder, or (in) the owner's home folder.
    private func othersFolder(_ uid: UInt32) -> String? {
        if Self.isSystemFolder(folder) { return "a system folder" }
        guard let home = homes[uid].map(FolderPath.normalized), home != "/" else { return nil }
        let normal = FolderPath.normalized(folder)
        if normal == home { return "the home folder of \(user(uid))" }
        return normal.hasPrefix(home + "/") ? "in the home folder of \(user(uid))" : nil
    }

    private var syncdUser: String {
        identity.uid == 0 ? "root (syncd's user)" : "syncd's user (\(user(identity.uid))) or root"
    }

    private var syncdUserName: String { userNames[identity.uid].map { PrintableText.escaping($0) } ?? String(identity.uid) }

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
