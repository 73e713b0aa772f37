// Time for the scheduler: a monotonic instant the daemon injects. The
// scheduler never reads a clock (CONVENTIONS "Time is injected"); the daemon
// converts `ContinuousClock` readings with `init(offset:)` and back with
// `offset`, relative to an origin it took once at start-up.

/// A point on the daemon's monotonic clock, in nanoseconds since an origin the
/// daemon chose (for example the `ContinuousClock.now` read at start-up).
///
/// Arithmetic saturates at zero and at `UInt64.max` instead of trapping, so a
/// huge configured delay can never crash the daemon.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the daemon's origin.
    public var nanoseconds: UInt64

    /// Creates an instant `nanoseconds` after the origin.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// Creates the instant `offset` after the origin; a negative offset is the origin.
    ///
    /// The daemon writes `MonotonicInstant(offset: ContinuousClock.now - origin)`.
    public init(offset: Duration) {
        self.nanoseconds = UInt64(max(0, SchedulingTime.nanoseconds(offset)))
    }

    /// The origin itself.
    public static let zero = MonotonicInstant(nanoseconds: 0)

    /// The time since the origin, for converting back: `origin + instant.offset`.
    public var offset: Duration {
        SchedulingTime.duration(nanoseconds: nanoseconds)
    }

    /// This instant moved by `duration` (which may be negative), saturating.
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let delta = SchedulingTime.nanoseconds(duration)
        if delta >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(delta))
            return MonotonicInstant(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return MonotonicInstant(nanoseconds: nanoseconds > magnitude ? nanoseconds - magnitude : 0)
    }

    /// The signed time from this instant to `other`.
    public func duration(to other: MonotonicInstant) -> Duration {
        if other.nanoseconds >= nanoseconds {
            return SchedulingTime.duration(nanoseconds: other.nanoseconds - nanoseconds)
        }
        return .zero - SchedulingTime.duration(nanoseconds: nanoseconds - other.nanoseconds)
    }

    /// `lhs` moved by `rhs`, saturating.
    public static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        lhs.advanced(by: rhs)
    }

    /// The signed time from `rhs` to `lhs`.
    public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        rhs.duration(to: lhs)
    }

    /// Orders instants by time.
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// Seconds since the origin with millisecond precision, e.g. `12.345s`.
    public var description: String {
        let millis = nanoseconds / 1_000_000
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
    }
}

/// Exact, saturating conversions between `Duration` and integer nanoseconds
/// (`Duration` itself stores attoseconds in 128 bits).
enum SchedulingTime {
    /// `duration` in whole nanoseconds, truncated toward zero, saturating at `Int64`'s range.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }

    /// `nanoseconds` as a `Duration`.
    static func duration(nanoseconds: UInt64) -> Duration {
        .seconds(Int64(nanoseconds / 1_000_000_000)) + .nanoseconds(Int64(nanoseconds % 1_000_000_000))
    }

    /// `duration` clamped below at zero.
    static func nonNegative(_ duration: Duration) -> Duration {
        duration < .zero ? .zero : duration
    }

    /// `lower + fraction × (upper − lower)`, with `fraction` clamped to [0, 1].
    static func interpolate(_ lower: Duration, _ upper: Duration, fraction: Double) -> Duration {
        let low = nanoseconds(lower)
        let span = nanoseconds(upper) - low
        guard span > 0 else { return lower }
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        // Int64(_:) truncates toward zero, which is floor here (non-negative);
        // `.rounded()` would pull in libm, which SyncCore does not link.
        let extra = Int64(Double(span) * clamped)
        return .nanoseconds(low + min(extra, span))
    }
}
