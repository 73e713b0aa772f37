internal import Glibc

/// Who may call what on the control socket (docs/control-api.md): root, the daemon's own user
/// and members of `ControlGroup` may call everything; anyone else only
/// `io.syncd.Manager.GetStatus` and `org.varlink.service.*`.
public struct AccessPolicy: Sendable, Equatable {
    /// Name of the group whose members are privileged (`ControlGroup=`); nil or a group that
    /// does not exist means no members.
    public var controlGroup: String?
    /// The daemon's effective user ID.
    public var daemonUID: UInt32

    /// Creates a policy; `daemonUID` defaults to the running process's effective user.
    public init(controlGroup: String?, daemonUID: UInt32? = nil) {
        self.controlGroup = controlGroup
        self.daemonUID = daemonUID ?? geteuid()
    }

    /// Whether `peer` may call every method.
    ///
    /// Group membership counts when the peer runs with the group as its effective group,
    /// when it is the primary group of the peer user's passwd entry, or when the user is
    /// listed as a member (`getgrouplist(3)`, which consults NSS like login does).
    public func isPrivileged(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let controlGroup, let groupID = AccessPolicy.groupID(named: controlGroup) else { return false }
        if peer.gid == groupID { return true }
        return AccessPolicy.groups(ofUser: peer.uid).contains(groupID)
    }

    /// Whether a caller with this privilege may call `method` (fully qualified).
    public static func allows(method: String, privileged: Bool) -> Bool {
        if privileged { return true }
        if method.hasPrefix("org.varlink.service.") { return true }
        let prefix = ManagerInterface.name + "."
        guard method.hasPrefix(prefix) else { return false }
        return ManagerInterface.unprivilegedMethods.contains(String(method.dropFirst(prefix.count)))
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
