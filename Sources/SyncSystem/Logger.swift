internal import Glibc
import SyncCore

/// syslog(3) priorities, as journald reads them from a `<N>` line prefix (sd-daemon(3)).
public enum LogPriority: Int, Sendable, Comparable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    public static func < (a: LogPriority, b: LogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// The events an admin filters the journal on (`journalctl MESSAGE_ID=…`), listed in syncd(8).
/// The IDs were made once with `systemd-id128 new` and never change.
public enum LogMessageID: String, Sendable, CaseIterable {
    /// A refresh failed; the cached copy is kept.
    case refreshFailed = "8a704ae683b94d20b280c348ce02a23f"
    /// A source refreshed successfully after failing.
    case sourceRecovered = "9d06ba59b61e4ff89dbe4bc32504e50a"
    /// A configuration (at start or reload) or one `.source` file was rejected.
    case configurationRejected = "00411ed163d948e1b0d9ddbd73b6a8ea"
}

/// Writes log lines: to the journal with structured fields when stderr is the journal, else to stderr
/// (`<N>`-prefixed when `$JOURNAL_STREAM` names it but the native protocol fails, plain otherwise).
///
/// Lines are written with one `write(2)` (or one journal datagram) each, so concurrent lines never interleave.
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

    /// Logs `message` at `priority`; `source` and `messageID` become the journal fields
    /// `SYNCD_SOURCE=` and `MESSAGE_ID=`, `location` `CONFIG_FILE=` and `CONFIG_LINE=` (as systemd's own).
    public func log(_ priority: LogPriority, _ message: String, source: String? = nil, messageID: LogMessageID? = nil,
                    location: SourceLocation? = nil) {
        switch output(priority, message, source: source, messageID: messageID, location: location) {
        case nil: return
        case .journal(let fields)?:
            if Logger.sendToJournal(fields) { return }
            writeLine(Logger.streamLine(priority: priority, message: Logger.singleLine(message), journal: true))
        case .stream(let line)?: writeLine(line)
        }
    }

    /// Logs an error.
    public func error(_ message: String, source: String? = nil, messageID: LogMessageID? = nil, location: SourceLocation? = nil) {
        log(.error, message, source: source, messageID: messageID, location: location)
    }
    /// Logs a warning.
    public func warning(_ message: String, source: String? = nil, messageID: LogMessageID? = nil) {
        log(.warning, message, source: source, messageID: messageID)
    }
    /// Logs a notice: a normal but significant event.
    public func notice(_ message: String, source: String? = nil, messageID: LogMessageID? = nil) {
        log(.notice, message, source: source, messageID: messageID)
    }
    /// Logs information.
    public func info(_ message: String, source: String? = nil) { log(.info, message, source: source) }
    /// Logs debugging detail.
    public func debug(_ message: String, source: String? = nil) { log(.debug, message, source: source) }

    /// A logger for the messages about one source: each begins with `NAME: ` and carries `SYNCD_SOURCE=NAME`,
    /// so `journalctl SYNCD_SOURCE=NAME` tells that source's whole story, at every priority.
    public func forSource(_ name: String) -> SourceLogger { SourceLogger(logger: self, name: name) }

    /// Where `log` sends a line: the journal's fields, or the stderr line (pure; what `log` does, unit-tested).
    enum Output: Equatable {
        case journal([String])
        case stream(String)
    }

    /// What `log` would send for these arguments, nil when the priority is above the threshold.
    func output(_ priority: LogPriority, _ message: String, source: String? = nil, messageID: LogMessageID? = nil,
                location: SourceLocation? = nil) -> Output? {
        guard priority <= threshold else { return nil }
        let text = Logger.singleLine(message)
        if journal {
            return .journal(Logger.journalFields(priority: priority, message: text, source: source, messageID: messageID,
                                                 location: location))
        }
        return .stream(Logger.streamLine(priority: priority, message: text, journal: false))
    }

    // MARK: Encoding (pure, unit-tested)

    /// The `FIELD=value` items of one journal entry (systemd.journal-fields(7)).
    static func journalFields(priority: LogPriority, message: String, source: String?, messageID: LogMessageID?,
                              location: SourceLocation?) -> [String] {
        var fields = ["MESSAGE=" + message, "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=syncd"]
        if let messageID { fields.append("MESSAGE_ID=" + messageID.rawValue) }
        if let source { fields.append("SYNCD_SOURCE=" + PrintableText.escaping(source)) }
        if let location {
            fields.append("CONFIG_FILE=" + PrintableText.escaping(location.file))
            if location.line > 0 { fields.append("CONFIG_LINE=\(location.line)") }
        }
        return fields
    }

    /// The stderr line: `<N>message` for the journal's stream, else `error: message` / `warning: message` / `message`.
    static func streamLine(priority: LogPriority, message: String, journal: Bool) -> String {
        if journal { return "<\(priority.rawValue)>" + message + "\n" }
        switch priority {
        case .error: return "error: " + message + "\n"
        case .warning: return "warning: " + message + "\n"
        default: return message + "\n"
        }
    }

    /// One message, one line: line breaks become spaces (they would split it in the journal), other control
    /// characters `\xNN` (a NUL would cut it short, an escape sequence repaint a terminal). A URL in it loses
    /// its user information and credential query values (`Redaction`, syncd(8), SECURITY, "Secrets").
    static func singleLine(_ message: String) -> String {
        let joined = message.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
            ? String(message.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 }) : message
        return PrintableText.escaping(Redaction.scrubbingURLs(in: joined), keepingTabs: true)
    }

    // MARK: Output

    /// journald's native protocol socket (systemd-journald.service(8)).
    static let journalSocket = "/run/systemd/journal/socket"

    /// Sends one entry over journald's native protocol (`Datagram.journalEntry`). False when the socket is
    /// missing or refused the entry (e.g. one larger than a datagram); the caller then writes to stderr.
    static func sendToJournal(_ fields: [String]) -> Bool {
        var status = stat()
        guard stat(journalSocket, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        return Datagram.send(Datagram.journalEntry(fields), to: journalSocket)
    }

    func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let n = retryingEINTR { write(2, base + offset, buffer.count - offset) }
                if n <= 0 { return }
                offset += n
            }
        }
    }

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

/// The messages about one source (`Logger.forSource`): the text after `NAME: `, the journal field
/// `SYNCD_SOURCE=NAME` always set, so no call site can log about a source without it.
public struct SourceLogger: Sendable {
    /// The logger lines go to.
    public let logger: Logger
    /// The source's name.
    public let name: String

    /// `NAME: message`, with `SYNCD_SOURCE=NAME`.
    public func log(_ priority: LogPriority, _ message: String, messageID: LogMessageID? = nil) {
        logger.log(priority, text(message), source: name, messageID: messageID)
    }

    /// What `log` would send (tests).
    func output(_ priority: LogPriority, _ message: String, messageID: LogMessageID? = nil) -> Logger.Output? {
        logger.output(priority, text(message), source: name, messageID: messageID)
    }

    private func text(_ message: String) -> String { name + ": " + message }

    /// Logs an error.
    public func error(_ message: String, messageID: LogMessageID? = nil) { log(.error, message, messageID: messageID) }
    /// Logs a warning.
    public func warning(_ message: String, messageID: LogMessageID? = nil) { log(.warning, message, messageID: messageID) }
    /// Logs a notice.
    public func notice(_ message: String, messageID: LogMessageID? = nil) { log(.notice, message, messageID: messageID) }
    /// Logs information.
    public func info(_ message: String) { log(.info, message) }
    /// Logs debugging detail.
    public func debug(_ message: String) { log(.debug, message) }
}
