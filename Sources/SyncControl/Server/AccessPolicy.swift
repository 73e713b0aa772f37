internal import Glibc

/// How much a caller of the control socket may do (docs/control-api.md, "Permissions"), from least to most.
public enum AccessLevel: Int, Sendable, Comparable {
    /// Anyone who can reach the socket: `GetStatus` and `org.varlink.service`.
    case anyone
    /// Members of `ReadGroup=`: also `List`, `Get`, `Watch` and `Changes`.
    case reader
    /// Members of `ControlGroup=`: also refreshes and local changes (everything but `Logout` and `Reload`).
    case control
    /// Root and the daemon's own user: everything.
    case owner

    public static func < (a: AccessLevel, b: AccessLevel) -> Bool { a.rawValue < b.rawValue }

    /// Whether callers at this level see what only the control group sees: a server's own words in failures
    /// and its URLs (docs/control-api.md, "Secrets"). Readers read records, not the servers' answers.
    public var seesServerText: Bool { self >= .control }
}

/// Who may call what on the control socket (docs/control-api.md, "Permissions"): root and the daemon's own user
/// everything; members of `ControlGroup=` everything but `Logout` and `Reload`; members of `ReadGroup=` `GetStatus`,
/// `List`, `Get`, `Watch` and `Changes`; anyone else `GetStatus` and `org.varlink.service.*`.
public struct AccessPolicy: Sendable, Equatable {
    /// Name of the group whose members may control the daemon (`ControlGroup=`); nil or a group that
    /// does not exist means no members.
    public var controlGroup: String?
    /// Name of the group whose members may read records (`ReadGroup=`); nil when not configured.
    public var readGroup: String?
    /// The daemon's effective user ID.
    public var daemonUID: UInt32

    /// Creates a policy; `daemonUID` defaults to the running process's effective user.
    public init(controlGroup: String?, readGroup: String? = nil, daemonUID: UInt32? = nil) {
        self.controlGroup = controlGroup
        self.readGroup = readGroup
        self.daemonUID = daemonUID ?? geteuid()
    }

    /// What `peer` may do.
    ///
    /// Group membership counts when the peer runs with the group as its effective group,
    /// when it is the primary group of the peer user's passwd entry, or when the user is
    /// listed as a member (`getgrouplist(3)`, which consults NSS like login does).
    public func level(of peer: PeerCredentials) -> AccessLevel {
        if peer.uid == 0 || peer.uid == daemonUID { return .owner }
        let control = controlGroup.flatMap(AccessPolicy.groupID(named:))
        let read = readGroup.flatMap(AccessPolicy.groupID(named:))
        guard control != nil || read != nil else { return .anyone }
        let groups = [peer.gid] + AccessPolicy.groups(ofUser: peer.uid)
        if let control, groups.contains(control) { return .control }
        if let read, groups.contains(read) { return .reader }
        return .anyone
    }

    /// Whether `peer` counts as privileged for the connection limits (docs/syncd.8.md, "Control connections"):
    /// root, the daemon's user and the control group share the reserved connections.
    public func isPrivileged(_ peer: PeerCredentials) -> Bool { level(of: peer) >= .control }

    /// The level a method (fully qualified) needs.
    public static func requiredLevel(for method: String) -> AccessLevel {
        if method.hasPrefix("org.varlink.service.") { return .anyone }
        let prefix = ManagerInterface.name + "."
        guard method.hasPrefix(prefix) else { return .control }
        switch method.dropFirst(prefix.count) {
        case "GetStatus": return .anyone
        case "List", "Get", "Watch", "Changes": return .reader
        case "Logout", "Reload": return .owner
        default: return .control
        }
    }

    /// Whether a caller at `level` may call `method` (fully qualified).
    public static func allows(method: String, level: AccessLevel) -> Bool {
        level >= requiredLevel(for: method)
    }

    /// Who may call a method needing `level`, in words for the refused caller (`PermissionDenied`'s `needs`): the
    /// groups this daemon uses, by name, so the administrator knows which one to add the user to.
    public func whoMay(_ level: AccessLevel) -> String {
        let control = controlGroup.map { "group \"\($0)\" (ControlGroup=)" }
        let read = readGroup.map { "group \"\($0)\" (ReadGroup=)" }
        let groups: [String]
        switch level {
        case .owner: return "root or the user syncd runs as"
        case .control: groups = [control].compactMap { $0 }
        case .reader: groups = [read, control].compactMap { $0 }
        case .anyone: return "nothing: anyone may call it"
        }
        guard !groups.isEmpty else { return "root or the user syncd runs as" }
        return "root, the user syncd runs as, or membership in " + groups.joined(separator: " or ")
    }

    /// The ID of the group `name`, nil if there is none. The corresponding C call is `getgrnam_r(3)`.
    static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return group.gr_gid
    }

    /// Every group of the user `uid` (primary and supplementary); empty if the user has no
    /// passwd entry. The corresponding C calls are `getpwuid_r(3)` and `getgrouplist(3)`.
    static func groups(ofUser uid: UInt32) -> [UInt32] {
        var passwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        guard getpwuid_r(uid, &passwd, &buffer, buffer.count, &result) == 0, result != nil, let name = passwd.pw_name else {
            return []
        }
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let capacity = count
            if getgrouplist(name, passwd.pw_gid, &groups, &count) >= 0 {
                return Array(groups.prefix(Int(count)))
            }
            // Too small: count now holds the size needed (glibc); guard against a stuck count.
            if count <= capacity { count = capacity * 2 }
            if count > 65_536 { return [passwd.pw_gid] }
        }
    }
}
