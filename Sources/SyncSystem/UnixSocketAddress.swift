internal import Glibc

/// A Unix socket path as `sockaddr_un` (unix(7)): built once for the client's `connect` and the
/// server's `bind` alike.
public struct UnixSocketAddress: Sendable {
    /// The path.
    public let path: String
    private let address: sockaddr_un

    /// The address of `path`; `nil` when the path is empty or does not fit `sun_path` (`ENAMETOOLONG`).
    public init?(path: String) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard !path.isEmpty, path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        self.path = path
        self.address = address
    }

    /// The length to pass with the address: up to and including the path's terminating NUL.
    private var length: socklen_t { socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + path.utf8.count + 1) }

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
