/// How long a create whose answer was lost still waits before it may be sent again (docs/local-changes.md,
/// "No duplicate creates"), as a pure function of when its request began and now.
///
/// Both are read on the boot clock (`CLOCK_BOOTTIME`, which counts suspend and never steps) of one boot
/// (`/proc/sys/kernel/random/boot_id`), not on the wall clock: a wall clock that was behind when the POST went
/// out (a machine without an RTC, before NTP) would make the wait end at once, one that was ahead would freeze
/// it. An attempt of another boot, or of a build that did not keep these, is stamped anew: its wait starts then.
public enum LostCreateWait {
    /// Where the wait stands.
    public enum Verdict: Sendable, Equatable {
        /// The attempt's time is of another boot or unknown: stamp it now; the whole wait lies ahead.
        case restamp
        /// The wait ends in `remainingMilliseconds`.
        case waiting(remainingMilliseconds: Int64)
        /// The wait is over: a listing read from now on that lacks the record shows it is not coming.
        case elapsed
    }

    /// The verdict for an attempt stamped `attemptUptime` milliseconds after the start of boot `attemptBoot`,
    /// at `uptime` milliseconds into boot `boot`, for a wait of `wait`.
    public static func verdict(attemptBoot: String?, attemptUptime: Int64?, boot: String, uptime: Int64, wait: Duration) -> Verdict {
        guard let attemptBoot, let attemptUptime, attemptBoot == boot, attemptUptime <= uptime else { return .restamp }
        let (seconds, attoseconds) = wait.components
        let waitMilliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let elapsed = uptime - attemptUptime
        return elapsed >= waitMilliseconds ? .elapsed : .waiting(remainingMilliseconds: waitMilliseconds - elapsed)
    }

    /// The milliseconds until the wait ends: the whole wait for `.restamp`, none once it is over.
    public static func remainingMilliseconds(_ verdict: Verdict, wait: Duration) -> Int64 {
        switch verdict {
        case .restamp:
            let (seconds, attoseconds) = wait.components
            return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        case .waiting(let remaining): return remaining
        case .elapsed: return 0
        }
    }
}
