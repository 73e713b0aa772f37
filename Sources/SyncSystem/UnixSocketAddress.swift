internal import Glibc

/// A Unix socket path as `sockaddr_un` (unix(7)): built once for the client's `connect` and the
/// server's `bind` alike.
public struct UnixSocketAddress: Sendable {
    /// The path (`@name` for an address in the abstract namespace).
    public let path: String
    private let address: sockaddr_un
    /// The length to pass with the address: a path up to and including its terminating NUL; an abstract
    /// name up to its last byte.
    private let length: socklen_t

    /// The address of `path`; `nil` when the path is empty or does not fit `sun_path` (`ENAMETOOLONG`).
    public init?(path: String) {
        guard !path.isEmpty else { return nil }
        self.init(path, name: Array(path.utf8), terminated: true)
    }

    /// The address of a socket systemd names in an environment variable such as `$NOTIFY_SOCKET`
    /// (sd_notify(3)): an absolute path, or `@name` for `name` in the abstract namespace (a leading NUL,
    /// no terminating one). nil for anything else, or when it does not fit `sun_path`.
    public init?(systemdSocket value: String) {
        var name = Array(value.utf8)
        switch name.first {
        case UInt8(ascii: "/"):
            self.init(value, name: name, terminated: true)
        case UInt8(ascii: "@") where name.count > 1:
            name[0] = 0
            self.init(value, name: name, terminated: false)
        default:
            return nil
        }
    }

    /// `name`'s bytes in `sun_path`, with a terminating NUL when `terminated` (counted in the length).
    private init?(_ path: String, name: [UInt8], terminated: Bool) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let used = name.count + (terminated ? 1 : 0)
        guard used <= MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        self.path = path
        self.address = address
        length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + used)
    }

    /// Calls `body` with the address as `sockaddr` and its length (for `sendto(2)` and the like).
    func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = self.address
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }

    /// Connects `fd` to this address, retrying `EINTR`; 0 or -1 with errno set. The corresponding C call is `connect(2)`.
    public func connect(_ fd: Int32) -> Int32 {
        var address = self.address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in retryingEINTR { Glibc.connect(fd, pointer, length) } }
        }
    }

    /// Binds `fd` to this address; 0 or -1 with errno set. The corresponding C call is `bind(2)`.
    public func bind(_ fd: Int32) -> Int32 {
        var address = self.address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
    }
}
