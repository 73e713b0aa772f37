/// When the cache file is rewritten after a local change (docs/syncd.8.md, "Local changes and the cache
/// file"). A rewrite replaces the whole file (apps read one complete document, replaced atomically), so
/// its cost follows the file's size, not the change's. A small file is rewritten before `put` returns, so
/// the change shows at once; a large one is rewritten once for a burst of changes, `delay` after the first
/// change that found no rewrite scheduled: queuing a change then costs the change alone, whatever is
/// already queued, and the file shows every acknowledged change within `delay` plus one rewrite.
public struct CacheFileCoalescing: Sendable, Equatable {
    /// Files up to this size are rewritten before the change's reply.
    public var immediateBytes: Int64
    /// How long after the first change of a burst a large file is rewritten.
    public var delay: Duration

    /// The daemon's rule: files up to 256 KiB at once, larger ones 250 ms after the burst began.
    public static let daemon = CacheFileCoalescing(immediateBytes: 256 << 10, delay: .milliseconds(250))

    /// Every rewrite at once (`syncd --once`, which has no timer to run a later one).
    public static let never = CacheFileCoalescing(immediateBytes: .max, delay: .zero)

    /// Creates a rule.
    public init(immediateBytes: Int64, delay: Duration) {
        self.immediateBytes = immediateBytes
        self.delay = delay
    }

    /// What to do about one local change.
    public enum Decision: Equatable, Sendable {
        /// Rewrite the file now, before the change's reply.
        case now
        /// Schedule one rewrite after this long; changes made meanwhile join it.
        case schedule(after: Duration)
        /// A rewrite is already scheduled and will show this change too.
        case joinScheduled
    }

    /// The decision for a change to a source whose cache file has `fileBytes` bytes (nil: none written
    /// yet), while a rewrite of it is or is not `scheduled`.
    public func decide(fileBytes: Int64?, scheduled: Bool) -> Decision {
        if scheduled { return .joinScheduled }
        guard let fileBytes, fileBytes > immediateBytes else { return .now }
        return .schedule(after: delay)
    }
}
