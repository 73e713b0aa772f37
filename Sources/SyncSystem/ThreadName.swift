internal import Glibc

/// Names the daemon's threads, so that `ps -L`, `top -H` and `/proc/PID/task/TID/comm` tell them apart
/// (syncd(8): the refresh lanes run at a lower priority than the rest, and an admin can see which is which).
public enum ThreadName {
    /// Names the calling thread `name` (its first 15 bytes: the kernel keeps no more). Written to
    /// `/proc/thread-self/comm`, which is what `pthread_setname_np` does for another thread and needs no
    /// C shim. Best effort: a thread whose name cannot be set keeps the process's name.
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { raw in retryingEINTR { write(fd, raw.baseAddress, raw.count) } }
    }
}
