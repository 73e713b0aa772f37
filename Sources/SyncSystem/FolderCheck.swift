// The ownership check of what syncd writes (docs/syncd.8.md, FILES, "Ownership"): the decision is SyncCore's
// `FolderOwnership`; this reads what it decides on, through descriptors. A folder syncd uses is reached from "/" one
// folder at a time (as systemd's chase() does): each folder on the way is checked before the next name is looked
// up in it, each symbolic link on the way is followed only when it is syncd's user's or root's, missing folders are
// made with mkdirat(2) in the folder just checked, and the folder itself is checked with fstat(2) on the descriptor
// syncd then changes its mode through. So a folder another user created first below a sticky /var/tmp is seen as
// theirs, and no name can be swapped under syncd between the check and the use: whoever could swap it owns, or may
// write in, a folder that was checked.
public import Glibc
import SyncCore

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

public enum FolderCheck {
    /// `O_PATH` (Linux, <bits/fcntl-linux.h>): a descriptor for fstat(2) and openat(2) that needs only search
    /// permission. Declared only under _GNU_SOURCE, which Swift's Glibc module lacks; the value is the kernel ABI's.
    public static let openPathOnly: Int32 = 0o10_000_000
    /// Links followed in one path at most, as the kernel's own limit (ELOOP past it).
    public static let maxLinks = 40

    /// syncd's effective identity.
    public static var identity: ProcessIdentity { ProcessIdentity(uid: geteuid(), gid: getegid()) }

    /// Opens the folder at `path`, checked (see the top of this file), for reading (`O_RDONLY`, so its mode can be
    /// set through it) or with `O_PATH` when `readable` is false. With `creating`, missing folders are made (the
    /// last with `mode`, which the caller sets exactly; each folder above it that syncd makes gets `parentMode`
    /// exactly, whatever the umask: 0755, so every user can reach the socket and the cache files below it as
    /// syncd(8) FILES says (`Directories.parentMode`); a folder that was there keeps its mode); without, a missing one
    /// gives nil. `followingLinks: false` refuses a link
    /// as the last name (ELOOP). Throws `UnsafeFolder` or `SystemError`.
    public static func open(_ path: String, kind: FolderKind, mode: UInt32, creating: Bool, followingLinks: Bool,
                     readable: Bool, parentMode: UInt32 = 0o755) throws -> Int32? {
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        var pending = Array(components(of: absolute).reversed())
        var fd = try openRoot()
        var shown = ""  // where `fd` is, links resolved; "" is "/"
        var links = 0
        do {
            while let name = pending.popLast() {
                if name == "." { continue }
                let isLast = pending.isEmpty
                // The folder that holds the next name: no one else may replace what is in it.
                try checkParent(fd, at: shown.isEmpty ? "/" : shown, of: path, kind: kind, mode: mode)
                if name == ".." {
                    fd = try replace(fd, with: openat(fd, "..", openPathOnly | O_DIRECTORY | O_CLOEXEC), path)
                    shown = shown.lastIndex(of: "/").map { String(shown[..<$0]) } ?? ""
                    continue
                }
                let entry = shown + "/" + name
                var info = stat()
                var made = false  // syncd made this folder just now
                if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                    guard errno == ENOENT else { throw SystemError("read the status of \(entry)") }
                    guard creating else {
                        close(fd)
                        return nil
                    }
                    // 0700 until its mode is set through a descriptor (below, or by the caller for the last).
                    if mkdirat(fd, name, isLast ? mode : 0o700) == 0 {
                        made = true
                    } else if errno != EEXIST {
                        throw SystemError("create directory \(entry)")
                    }
                    guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw SystemError("read the status of \(entry)") }
                }
                switch info.st_mode & S_IFMT {
                case S_IFLNK:
                    guard followingLinks || !isLast else { throw SystemError("use \(path) as a directory", code: ELOOP) }
                    var link = ownership(info)
                    link.mode = 0  // a link's own mode means nothing
                    if let problem = FolderOwnership.problem(with: link, for: identity) {
                        throw refusal(kind: kind.rawValue, path: path, parent: isLast ? nil : entry, problem: problem, mode: mode,
                                      entry: .link)
                    }
                    links += 1
                    guard links <= Self.maxLinks else { throw SystemError("resolve \(path)", code: ELOOP) }
                    let target = try readLink(fd, name, shownAs: entry)
                    if target.hasPrefix("/") {
                        fd = try replace(fd, with: try openRoot(), path)
                        shown = ""
                    }
                    pending.append(contentsOf: components(of: target).reversed())
                case S_IFDIR:
                    let flags = (isLast && readable) || (made && !isLast) ? O_RDONLY : openPathOnly
                    var next = openat(fd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    if next < 0, errno == EACCES, isLast {
                        // Not readable by syncd: say whose it is when that is the problem, else why it cannot be opened.
                        next = openat(fd, name, openPathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                        if next >= 0 {
                            defer { close(next) }
                            try checkOwn(next, path: path, at: entry, kind: kind, mode: mode)
                            throw SystemError("open directory \(path)", code: EACCES)
                        }
                    }
                    guard next >= 0 else {
                        let code = errno
                        throw SystemError(code == ENOTDIR || code == ELOOP ? "use \(path) as a directory" : "open \(entry)", code: code)
                    }
                    fd = try replace(fd, with: next, path)
                    shown = entry
                    if made && !isLast, fchmod(fd, parentMode) != 0 { throw SystemError("set mode of \(entry)") }
                default:
                    throw SystemError("use \(path) as a directory", code: ENOTDIR)
                }
            }
            try checkOwn(fd, path: path, at: shown.isEmpty ? "/" : shown, kind: kind, mode: mode)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Checks an existing folder without creating or changing anything (a reload's new directories); a folder
    /// that does not exist passes (syncd creates it at start, and checks it then).
    public static func inspect(_ path: String, kind: FolderKind, mode: UInt32, followingLinks: Bool) throws {
        if let fd = try open(path, kind: kind, mode: mode, creating: false, followingLinks: followingLinks, readable: false) {
            close(fd)
        }
    }

    /// Checks a file syncd keeps in one of its folders (state.db, syncd.lock) from its status: only its owner
    /// matters. Its mode does not: the folder it is in, checked already, lets no one else reach it (0700).
    public static func check(file info: stat, path: String, kind: String, mode: UInt32) throws(UnsafeFolder) {
        var own = ownership(info)
        own.mode &= ~0o022
        if let problem = FolderOwnership.problem(with: own, for: identity) {
            throw refusal(kind: kind, path: path, parent: nil, problem: problem, mode: mode, entry: .file)
        }
    }

    /// Checks the file at `path`, when there is one, like `check(file:path:kind:mode:)` (a link is checked, not followed).
    public static func checkIfPresent(file path: String, kind: String, mode: UInt32) throws(UnsafeFolder) {
        var info = stat()
        if lstat(path, &info) == 0 { try check(file: info, path: path, kind: kind, mode: mode) }
    }

    /// `at`: where `path` led, links resolved (the folder a chmod or chown must name).
    private static func checkOwn(_ fd: Int32, path: String, at resolved: String, kind: FolderKind, mode: UInt32) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("read the status of \(path)") }
        // A system folder is never one of syncd's own (checked before the caller sets its mode).
        let problem = FolderOwnership.problem(with: ownership(info), for: identity)
            ?? (kind == .account ? nil : FolderOwnership.problem(withOwnFolderAt: resolved))
        if let problem {
            var refused = refusal(kind: kind.rawValue, path: path, parent: nil, problem: problem, mode: mode)
            if resolved != FolderPath.normalized(path) { refused.target = resolved }
            throw refused
        }
    }

    private static func checkParent(_ fd: Int32, at shown: String, of path: String, kind: FolderKind, mode: UInt32) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("read the status of \(shown)") }
        if let problem = FolderOwnership.problem(withParent: ownership(info), for: identity) {
            throw refusal(kind: kind.rawValue, path: path, parent: shown, problem: problem, mode: mode)
        }
    }

    private static func openRoot() throws -> Int32 {
        let fd = Glibc.open("/", openPathOnly | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open /") }
        return fd
    }

    /// Closes `old` for `new` (a descriptor just opened, or -1 with errno set).
    private static func replace(_ old: Int32, with new: Int32, _ path: String) throws -> Int32 {
        guard new >= 0 else { throw SystemError("open a folder on the way to \(path)") }
        close(old)
        return new
    }

    private static func readLink(_ fd: Int32, _ name: String, shownAs entry: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(fd, name, &buffer, buffer.count - 1)
        guard count > 0 else { throw SystemError("read the symbolic link \(entry)") }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func components(of path: String) -> [String] {
        path.split(separator: "/").map(String.init)
    }

    private static func currentDirectory() -> String {
        guard let pointer = getcwd(nil, 0) else { return "." }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    private static func ownership(_ info: stat) -> FileOwnership {
        FileOwnership(uid: info.st_uid, gid: info.st_gid, mode: info.st_mode & 0o7777)
    }

    private static func refusal(kind: String, path: String, parent: String?, problem: OwnershipProblem, mode: UInt32,
                                entry: UnsafeFolder.Entry = .folder) -> UnsafeFolder {
        let identity = self.identity
        var users: [UInt32: String] = [:], groups: [UInt32: String] = [:], homes: [UInt32: String] = [:]
        for uid in [identity.uid] + (problem.uid.map { [$0] } ?? []) {
            users[uid] = user(uid, \.pw_name)
            homes[uid] = user(uid, \.pw_dir)
        }
        if case .writableByGroup(let gid, _) = problem { groups[gid] = groupName(gid) }
        return UnsafeFolder(kind: kind, path: path, parent: parent, problem: problem, mode: mode, identity: identity,
                            userNames: users, groupNames: groups, entry: entry, homes: homes)
    }

    /// A field of the user's passwd entry (name, home folder).
    private static func user(_ uid: UInt32, _ field: KeyPath<passwd, UnsafeMutablePointer<CChar>?>) -> String? {
        guard let entry = getpwuid(uid), let value = entry.pointee[keyPath: field] else { return nil }
        return String(cString: value)
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
