internal import Glibc

/// A failed system call: what we tried, on what, and errno.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    /// The operation, e.g. "write cache file /var/cache/syncd/default/posts.json".
    public let operation: String
    /// errno from the call.
    public let code: Int32

    /// Creates an error from errno as it is now.
    public init(_ operation: String) {
        self.operation = operation
        self.code = errno
    }

    /// Creates an error with an explicit errno value.
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "Failed to \(operation): \(String(cString: strerror(code)))" }
}

/// Retries a system call while it fails with EINTR (the swift-nio habit); returns its result.
@discardableResult
public func retryingEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}
