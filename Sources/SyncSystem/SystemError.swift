internal import Glibc
import SyncCore

/// A failed system call: what we tried, on what, and errno.
public struct SystemError: FailureReason, Sendable {
    /// The operation, e.g. "write cache file /var/cache/syncd/default/posts.json".
    public let operation: String
    /// errno from the call.
    public let code: Int32

    /// Creates an error from errno as it is now. Prefer `systemCall(_:_:)`, which captures errno at
    /// the call before anything else can change it.
    public init(_ operation: String) {
        self.operation = operation
        self.code = errno
    }

    /// Creates an error with an explicit errno value.
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// "OPERATION: strerror", to quote after another "Failed to …:" message.
    public var reason: String { "\(operation): \(String(cString: strerror(code)))" }

    public var description: String { "Failed to \(reason)" }
}

/// The one system-call helper: calls `call` again while it fails with `EINTR` (the swift-nio habit)
/// and returns its result; on another failure errno is still the call's when this returns.
@discardableResult
public func retryingEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}

/// `retryingEINTR`'s form for a call that returns `-errno` on failure instead of setting errno (`copy_file_range`
/// through the C shim, netlink requests): called again while it returns `-EINTR`.
@discardableResult
public func retryingMinusEINTR<T: SignedInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -T(EINTR) { continue }
        return result
    }
}

/// Runs a system call that returns a negative value and sets errno on failure, retrying `EINTR`;
/// a failure throws a `SystemError` for `operation` with errno captured at the call.
@discardableResult
public func systemCall<T: BinaryInteger>(_ operation: @autoclosure () -> String, _ call: () -> T) throws(SystemError) -> T {
    let result = retryingEINTR(call)
    guard result >= 0 else { throw SystemError(operation(), code: errno) }
    return result
}
