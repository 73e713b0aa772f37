internal import Glibc

/// The machine's boot clock, for `EngineClock.system`: `CLOCK_BOOTTIME` (counts suspend, never steps, unlike the
/// wall clock) and the kernel's `boot_id`, which tells whether a stored reading is of this boot.
enum BootClock {
    /// This boot's ID; "unknown" where /proc is not mounted (every stored reading then counts as this boot's,
    /// and a reboot shows as a boot clock that went back, which `LostCreateWait` stamps anew).
    static let bootID: String = {
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "unknown" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "unknown" }
        return String(decoding: bytes[..<count], as: UTF8.self).filter { !$0.isWhitespace }
    }()

    /// `CLOCK_BOOTTIME`.
    @Sendable static func sinceBoot() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }
}
