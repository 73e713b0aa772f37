internal import Glibc
import SyncSystem
import SyncEngine

/// Talks to systemd through `$NOTIFY_SOCKET` (sd_notify(3)): readiness, status, reload, stop, watchdog.
/// Without `$NOTIFY_SOCKET` every call is a no-op, so the daemon runs the same outside systemd.
public final class Notifier: Sendable {
    /// Interval at which to send `WATCHDOG=1` (half of `$WATCHDOG_USEC`), if the watchdog is enabled for us.
    public let watchdogInterval: Duration?

    /// Creates a notifier, reading the watchdog settings from the environment (sd_watchdog_enabled(3)):
    /// `$WATCHDOG_USEC`, and `$WATCHDOG_PID` which must be unset or name this process.
    public init(environment: [String: String]) {
        if let usecText = environment["WATCHDOG_USEC"], let usec = Int64(usecText), usec > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// `READY=1` plus the current status line.
    public func ready(status: String) { send("READY=1\nSTATUS=\(Notifier.clip(status))") }
    /// `STATUS=…`, a one-line human summary.
    public func status(_ text: String) { send("STATUS=\(Notifier.clip(text))") }
    /// `RELOADING=1` with `MONOTONIC_USEC=` (systemd 253+ needs it for Type=notify-reload; 252 ignores it).
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
        send("RELOADING=1\nMONOTONIC_USEC=\(usec)\nSTATUS=Reloading configuration")
    }
    /// `STOPPING=1`.
    public func stopping() { send("STOPPING=1\nSTATUS=Stopping") }
    /// `WATCHDOG=1`.
    public func watchdog() { send("WATCHDOG=1") }

    /// Sends `message` as one datagram to `$NOTIFY_SOCKET` (read when sending, as sd_notify(3) does); nothing
    /// without it. A failed send is not an error: systemd may have stopped listening.
    private func send(_ message: String) {
        guard let socket = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !socket.isEmpty else { return }
        _ = Datagram.send(Array(message.utf8), to: socket)
    }

    /// Status lines are kept well under systemd's 4 KiB datagram buffer and on one line.
    static func clip(_ text: String) -> String {
        let line = String(text.map { $0.isNewline ? " " : $0 })
        guard line.utf8.count > 1024 else { return line }
        var clipped = ""
        for character in line {
            if clipped.utf8.count + character.utf8.count > 1020 { break }
            clipped.append(character)
        }
        return clipped + "…"
    }
}
