internal import Glibc
import SyncStore

/// The clocks the engine reads, injected: the daemon passes `.system`; tests pass a clock they move by hand,
/// so every rule about time (a lost create's wait, a refresh's deadline) is checked without sleeping.
public struct EngineClock: Sendable {
    /// The wall clock, for timestamps people see and stored dates.
    public var wall: @Sendable () -> Timestamp
    /// The time since boot (`CLOCK_BOOTTIME`: counts suspend, never steps): deadlines and a lost create's wait.
    public var sinceBoot: @Sendable () -> Duration
    /// This boot's ID, which tells whether a stored boot-clock reading is of this boot.
    public var bootID: String

    /// Creates a clock from its three readings.
    public init(wall: @escaping @Sendable () -> Timestamp, sinceBoot: @escaping @Sendable () -> Duration, bootID: String) {
        self.wall = wall
        self.sinceBoot = sinceBoot
        self.bootID = bootID
    }

    /// The machine's clocks.
    public static let system = EngineClock(wall: currentTimestamp, sinceBoot: BootClock.sinceBoot, bootID: BootClock.bootID)

    /// Milliseconds since boot, as outbox attempts store them.
    public func uptimeMilliseconds() -> Int64 {
        let (seconds, attoseconds) = sinceBoot().components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Now, as an attempt's time on the boot clock (the wait of a lost create).
    func attemptTime() -> AttemptTime {
        AttemptTime(boot: bootID, uptime: uptimeMilliseconds())
    }
}

/// The wall clock, for timestamps shown to people.
public func currentTimestamp() -> Timestamp {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Timestamp(secondsSinceEpoch: Int64(now.tv_sec))
}
