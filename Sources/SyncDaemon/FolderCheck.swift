// The ownership check of what syncd writes (docs/syncd.8.md, FILES, "Ownership"): the decision is SyncCore's
// `FolderOwnership`; this reads what it decides on. Each folder is checked through a descriptor: its own owner and
// mode with fstat(2) on the descriptor syncd then changes the mode through, and the folders above it by opening
// ".." from there (O_PATH: search permission is enough), so a folder someone else created first below a sticky
// /var/tmp is seen as theirs, whatever the path says by the time it is checked.
internal import Glibc
import SyncCore
import SyncSystem

/// What a folder is to syncd, as messages name it.
public enum FolderKind: String, Sendable {
    /// `StateDirectory=`.
    case state = "state directory"
    /// `CacheDirectory=`.
    case cache = "cache directory"
    /// `RuntimeDirectory=`.
    case runtime = "runtime directory"
    /// `STATE/<account>` or `CACHE/<account>`.
    case account = "account folder"
}

enum FolderCheck {
    /// `O_PATH` (Linux, <bits/fcntl-linux.h>): a descriptor for fstat(2) and openat(2) that needs only search
    /// permission. Declared only under _GNU_SOURCE, which Swift's Glibc module lacks; the value is the kernel ABI's.
    static let openPathOnly: Int32 = 0o10_000_000

    /// syncd's effective identity.
    static var identity: ProcessIdentity { ProcessIdentity(uid: geteuid(), gid: getegid()) }

    /// Checks the open folder `fd` (at `path`, to get `mode`) and every folder above it.
    static func check(folder fd: Int32, info: stat, path: String, kind: String, mode: UInt32) throws(UnsafeFolder) {
        let identity = self.identity
        if let problem = FolderOwnership.problem(with: ownership(info), for: identity) {
            throw refusal(kind: kind, path: path, parent: nil, problem: problem, mode: mode)
        }
        try checkParents(of: fd, info: info, path: path, kind: kind, mode: mode)
    }

    /// Checks a file syncd keeps in one of its folders (state.db, syncd.lock) from its status: only its owner
    /// matters. Its mode does not: the folder it is in, checked already, lets no one else reach it (0700).
    static func check(file info: stat, path: String, kind: String, mode: UInt32) throws(UnsafeFolder) {
        var own = ownership(info)
        own.mode &= ~0o022
        if let problem = FolderOwnership.problem(with: own, for: identity) {
            throw refusal(kind: kind, path: path, parent: nil, problem: problem, mode: mode)
        }
    }

    /// Checks an existing folder without creating or changing anything (a reload's new directories): nil when
    /// `path` does not exist (syncd creates it at start, and checks it then).
    static func inspect(_ path: String, kind: FolderKind, mode: UInt32, followingLinks: Bool) throws(UnsafeFolder) {
        let fd = retryingEINTR { open(path, openPathOnly | O_DIRECTORY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)) }
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        try check(folder: fd, info: info, path: path, kind: kind.rawValue, mode: mode)
    }

    /// Walks up from `fd` to the root, checking each folder above it.
    private static func checkParents(of fd: Int32, info: stat, path: String, kind: String, mode: UInt32) throws(UnsafeFolder) {
        let identity = self.identity
        var names = ancestorNames(of: path)
        var current = dup(fd)
        var currentInfo = info
        guard current >= 0 else { return }
        defer { close(current) }
        while true {
            let parent = retryingEINTR { openat(current, "..", openPathOnly | O_DIRECTORY | O_CLOEXEC) }
            guard parent >= 0 else { return }  // only a folder without search permission: nothing syncd could use anyway
            var parentInfo = stat()
            let read = fstat(parent, &parentInfo) == 0
            close(current)
            current = parent
            // The root is its own parent.
            guard read, parentInfo.st_dev != currentInfo.st_dev || parentInfo.st_ino != currentInfo.st_ino else { return }
            let name = names.isEmpty ? "(a folder above \(path))" : names.removeFirst()
            if let problem = FolderOwnership.problem(withParent: ownership(parentInfo), for: identity) {
                throw refusal(kind: kind, path: path, parent: name, problem: problem, mode: mode)
            }
            currentInfo = parentInfo
        }
    }

    /// `/a/b/c` → `/a/b`, `/a`, `/` (of the path with links resolved, to name what ".." reaches).
    private static func ancestorNames(of path: String) -> [String] {
        let resolved = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        var names: [String] = []
        var current = resolved
        while let slash = current.lastIndex(of: "/"), current != "/" {
            current = slash == current.startIndex ? "/" : String(current[..<slash])
            names.append(current)
        }
        return names
    }

    private static func ownership(_ info: stat) -> FileOwnership {
        FileOwnership(uid: info.st_uid, gid: info.st_gid, mode: info.st_mode & 0o7777)
    }

    private static func refusal(kind: String, path: String, parent: String?, problem: OwnershipProblem, mode: UInt32) -> UnsafeFolder {
        let identity = self.identity
        var users: [UInt32: String] = [:], groups: [UInt32: String] = [:]
        for uid in [identity.uid] + (problem.uid.map { [$0] } ?? []) { users[uid] = userName(uid) }
        if case .writableByGroup(let gid, _) = problem { groups[gid] = groupName(gid) }
        return UnsafeFolder(kind: kind, path: path, parent: parent, problem: problem, mode: mode, identity: identity,
                            userNames: users, groupNames: groups)
    }

    private static func userName(_ uid: UInt32) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    private static func groupName(_ gid: UInt32) -> String? {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return nil }
        return String(cString: name)
    }
}

extension OwnershipProblem {
    /// The foreign owner, if that is the problem.
    var uid: UInt32? {
        if case .foreignOwner(let uid) = self { return uid }
        return nil
    }
}
