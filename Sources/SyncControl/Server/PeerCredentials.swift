internal import Glibc

/// Who is on the other end of a Unix socket, as the kernel reports it (`SO_PEERCRED`,
/// see unix(7)): the credentials at `connect(2)` time.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    /// Effective user ID.
    public let uid: UInt32
    /// Effective group ID.
    public let gid: UInt32
    /// Process ID.
    public let pid: Int32

    /// Creates credentials.
    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

    /// The peer of a connected Unix socket. The corresponding C call is `getsockopt(SO_PEERCRED)`.
    static func of(socket fd: Int32) throws(SystemError) -> PeerCredentials {
        // `struct ucred { pid_t pid; uid_t uid; gid_t gid; }` needs _GNU_SOURCE, which the Glibc
        // module does not define; three 32-bit words have the same layout.
        var credentials: [UInt32] = [0, 0, 0]
        var length = socklen_t(MemoryLayout<UInt32>.size * 3)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == socklen_t(MemoryLayout<UInt32>.size * 3) else {
            throw SystemError("read peer credentials of a control connection")
        }
        return PeerCredentials(uid: credentials[1], gid: credentials[2], pid: Int32(bitPattern: credentials[0]))
    }
}
