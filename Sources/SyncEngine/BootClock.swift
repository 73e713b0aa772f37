internal import Glibc
import SyncStore

/// The boot clock of this boot, for `LostCreateWait`: `CLOCK_BOOTTIME` (counts suspend, never steps, unlike the
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

    /// Milliseconds of `CLOCK_BOOTTIME`.
    static func uptime() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

extension SyncEngine {
    /// Now, as an attempt's time on the boot clock (the wait of a lost create).
    func attemptTime() -> AttemptTime {
        AttemptTime(boot: BootClock.bootID, uptime: BootClock.uptime())
    }
}
