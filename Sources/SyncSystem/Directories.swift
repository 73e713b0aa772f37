internal import Glibc
import SyncCore

/// Where the daemon keeps its state, cache and sockets (syncd.conf(5), `[Daemon]`).
public struct Directories: Sendable, Equatable {
    /// `StateDirectory`: the SQLite database, mode 0700.
    public var state: String
    /// `CacheDirectory`: the published JSON files, folders 0750.
    public var cache: String
    /// `RuntimeDirectory`: the control socket.
    public var runtime: String
    /// The mode of the folders above these three that syncd creates (`parentMode(userMode:)`).
    public var parentMode: UInt32

    /// Resolves the directories: configuration first, then systemd's `$STATE_DIRECTORY` etc., then the defaults
    /// (`/var/lib/syncd`, `/var/cache/syncd`, `/run/syncd`; user mode: `$XDG_STATE_HOME/syncd`,
    /// `$XDG_CACHE_HOME/syncd`, `$XDG_RUNTIME_DIR/syncd`).
    public init(state: String?, cache: String?, runtime: String?, userMode: Bool, environment: [String: String]) {
        func systemd(_ key: String) -> String? {
            // systemd passes a colon-separated list when a unit names several; ours names one.
            environment[key].flatMap { $0.split(separator: ":").first.map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let home = environment["HOME"] ?? "/"
        func xdg(_ key: String, _ fallback: String) -> String {
            if let value = environment[key], value.hasPrefix("/") { return value + "/syncd" }
            return fallback + "/syncd"
        }
        let uid = getuid()
        self.state = state ?? systemd("STATE_DIRECTORY")
            ?? (userMode ? xdg("XDG_STATE_HOME", home + "/.local/state") : "/var/lib/syncd")
        self.cache = cache ?? systemd("CACHE_DIRECTORY")
            ?? (userMode ? xdg("XDG_CACHE_HOME", home + "/.cache") : "/var/cache/syncd")
        self.runtime = runtime ?? systemd("RUNTIME_DIRECTORY")
            ?? (userMode ? xdg("XDG_RUNTIME_DIR", "/run/user/\(uid)") : "/run/syncd")
        self.parentMode = Self.parentMode(userMode: userMode)
    }

    /// Resolves the directories `[Daemon]` names (`StateDirectory=`, `CacheDirectory=`, `RuntimeDirectory=`).
    public init(_ daemon: DaemonSettings, userMode: Bool, environment: [String: String]) {
        self.init(state: daemon.stateDirectory, cache: daemon.cacheDirectory, runtime: daemon.runtimeDirectory,
                  userMode: userMode, environment: environment)
    }

    /// The paths of `account`'s files below these directories.
    public func paths(of account: String) -> AccountPaths {
        AccountPaths(stateDirectory: state, cacheDirectory: cache, runtimeDirectory: runtime, account: account)
    }

    /// The mode of a missing folder above the state, cache or runtime directory that syncd creates: 0755, so every
    /// user can reach the control socket and the cache folder (syncd(8), FILES); with `--user` 0700, as the XDG Base
    /// Directory Specification asks of the folders below `$HOME` it names (no other user reaches a user's instance).
    public static func parentMode(userMode: Bool) -> UInt32 { userMode ? 0o700 : 0o755 }

    /// Creates `path` (and missing parents, with `parents` exactly) with `mode` and optionally `group`;
    /// an existing directory gets `mode` enforced. Before anything is changed or written, the folder and every
    /// folder on the way to it are checked (`FolderCheck`, docs/syncd.8.md FILES): one that is another user's, or
    /// that others may write in, is refused with `UnsafeFolder`, also when someone created it first. With
    /// `followingLinks: false` a symbolic link at `path` fails (the account folders, which syncd makes itself).
    public static func create(_ path: String, mode: UInt32, group: UInt32? = nil, kind: FolderKind,
                              followingLinks: Bool = true, parents: UInt32 = 0o755) throws {
        guard let fd = try FolderCheck.open(path, kind: kind, mode: mode, creating: true, followingLinks: followingLinks,
                                            readable: true, parentMode: parents) else {
            throw SystemError("create directory \(path)", code: ENOENT)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("read the status of \(path)") }
        if info.st_mode & 0o7777 != mode, fchmod(fd, mode) != 0 {
            throw SystemError("set mode of \(path)")
        }
        if let group, info.st_gid != group, fchown(fd, uid_t.max, group) != 0 {
            throw SystemError("set group of \(path)")
        }
    }

    /// The group ID of `name` if the daemon may give files to it (it is root or a member); nil otherwise.
    public static func usableGroup(named name: String) -> UInt32? {
        guard !name.isEmpty, let entry = getgrnam(name) else { return nil }
        let gid = entry.pointee.gr_gid
        if geteuid() == 0 || getegid() == gid { return gid }
        let count = getgroups(0, nil)
        guard count > 0 else { return nil }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let n = getgroups(count, &groups)
        return groups.prefix(Int(max(0, n))).contains(gid) ? gid : nil
    }
}
