/// An error whose cause can be quoted after another message that already says "Failed to …", so
/// that a wrapped error reads "Failed to publish x: flush x to disk: No space left on device" rather
/// than repeating "Failed to".
public protocol FailureReason: Error, CustomStringConvertible {
    /// What failed and why, without the leading "Failed to ".
    var reason: String { get }
}

/// The cause of `error` for quoting after a "Failed to …:" message: `reason` where the error has one,
/// its description otherwise.
public func failureReason(_ error: any Error) -> String {
    (error as? any FailureReason)?.reason ?? "\(error)"
}
