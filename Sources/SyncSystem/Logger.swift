internal import Glibc

/// syslog(3) priorities, as journald reads them from a `<N>` line prefix (sd-daemon(3)).
public enum LogPriority: Int, Sendable, Comparable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    public static func < (a: LogPriority, b: LogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Writes log lines to stderr: `<N>`-prefixed when stderr is the journal, plain otherwise.
///
/// Lines are written with one `write(2)` each so concurrent lines never interleave.
public struct Logger: Sendable {
    /// True when stderr is connected to journald (`$JOURNAL_STREAM` names stderr's device and inode).
    public let journal: Bool
    /// Lines above this priority are dropped.
    public let threshold: LogPriority

    /// A logger configured from the environment (`JOURNAL_STREAM`, `SYNCD_LOG_LEVEL=debug`).
    public init(environment: [String: String]) {
        journal = Logger.stderrIsJournal(environment["JOURNAL_STREAM"])
        threshold = environment["SYNCD_LOG_LEVEL"] == "debug" ? .debug : .info
    }

    /// A logger with explicit settings (tests).
    public init(journal: Bool, threshold: LogPriority) {
        self.journal = journal
        self.threshold = threshold
    }

    /// Logs `message` at `priority`.
    public func log(_ priority: LogPriority, _ message: String) {
        guard priority <= threshold else { return }
        var line = journal ? "<\(priority.rawValue)>" : ""
        if !journal {
            switch priority {
            case .error: line += "error: "
            case .warning: line += "warning: "
            default: break
            }
        }
        // One message, one line: embedded newlines would split it in the journal.
        line += message.replacingNewlines() + "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = retryingEINTR { write(2, buffer.baseAddress! + offset, buffer.count - offset) }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// Logs an error.
    public func error(_ message: String) { log(.error, message) }
    /// Logs a warning.
    public func warning(_ message: String) { log(.warning, message) }
    /// Logs a notice: a normal but significant event.
    public func notice(_ message: String) { log(.notice, message) }
    /// Logs information.
    public func info(_ message: String) { log(.info, message) }
    /// Logs debugging detail.
    public func debug(_ message: String) { log(.debug, message) }

    /// systemd.exec(5): `$JOURNAL_STREAM` is `DEV:INODE` of the stream; trust it only if stderr still is that stream.
    static func stderrIsJournal(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        guard contains(where: { $0 == "\n" || $0 == "\r" }) else { return self }
        return String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
