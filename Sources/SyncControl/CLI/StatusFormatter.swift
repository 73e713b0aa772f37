import SyncCore

/// Renders `GetStatus` like `systemctl status`: a header for the daemon, one block per source.
public struct StatusFormatter: Sendable {
    /// Wall-clock now, for relative times.
    public var now: Timestamp
    /// Colour the dots.
    public var color: Bool
    /// Leave out the header lines.
    public var noLegend: Bool
    /// `●` and `—`; else `*` and `-` (a locale that cannot show them).
    public var unicode: Bool

    /// Creates a formatter.
    public init(now: Timestamp, color: Bool, noLegend: Bool, unicode: Bool = true) {
        self.now = now
        self.color = color
        self.noLegend = noLegend
        self.unicode = unicode
    }

    /// The whole status text.
    public func format(_ status: ManagerStatus) -> String {
        let status = status.printable
        var lines: [String] = []
        if !noLegend {
            lines.append(header(status.daemon))
            if let rejected = status.daemon.reloadRejected {
                lines.append("    reload rejected, previous configuration kept: \(rejected)")
            }
            if !status.sources.isEmpty || !status.failed.isEmpty { lines.append("") }
        }
        let nameWidth = status.sources.map(\.name.count).max() ?? 0
        let stateWidth = status.sources.map(\.state.rawValue.count).max() ?? 0
        // "1 record" is shorter than "12 records": numbers right-aligned, the word padded, so "synced" lines up.
        let numberWidth = status.sources.map { HumanFormat.count($0.records).count }.max() ?? 0
        let wordWidth = status.sources.map { Self.recordWord($0.records).count }.max() ?? 0
        for (position, source) in status.sources.enumerated() {
            if position > 0 { lines.append("") }
            lines += block(source, nameWidth: nameWidth, stateWidth: stateWidth, numberWidth: numberWidth, wordWidth: wordWidth)
        }
        let failedWidth = max(nameWidth, status.failed.map(\.name.count).max() ?? 0)
        for (position, failed) in status.failed.enumerated() {
            if position > 0 || !status.sources.isEmpty { lines.append("") }
            // Not a state of a running source: it never started. One line, the problem says where and what.
            lines.append("\(DotColor.red.cross(enabled: color, unicode: unicode)) \(pad(failed.name, failedWidth))  failed: \(failed.problem)")
        }
        if status.sources.isEmpty, status.failed.isEmpty, !noLegend { lines.append("No sources configured.") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `● syncd — online (links: routable, reachable: yes), account default, up 12s`.
    func header(_ daemon: DaemonStatus) -> String {
        let reachable = daemon.reachable.map { $0 ? "yes" : "no" } ?? "unknown"
        let dot = (daemon.online ? DotColor.green : .red).dot(enabled: color, unicode: unicode)
        return "\(dot) syncd \(unicode ? "—" : "-") \(daemon.online ? "online" : "offline") (links: \(daemon.links), reachable: \(reachable)), "
            + "account \(daemon.account), up \(HumanFormat.span(seconds: daemon.uptimeSec))"
    }

    /// The lines of one source.
    func block(_ source: SourceStatus, nameWidth: Int, stateWidth: Int, numberWidth: Int = 0, wordWidth: Int = 0) -> [String] {
        let source = source.printable
        let dotColor = Self.dotColor(of: source)
        let synced = source.lastSuccess.flatMap(Timestamp.init(rfc3339:)).map { "synced " + HumanFormat.relative($0, now: now) } ?? "never synced"
        var lines = ["\(dotColor.dot(enabled: color, unicode: unicode)) \(pad(source.name, nameWidth))  \(pad(source.state.rawValue, stateWidth))  "
            + "\(padLeft(HumanFormat.count(source.records), numberWidth)) \(pad(Self.recordWord(source.records), wordWidth))  \(synced)"]
        if source.stale || source.lastError != nil {
            var details: [String] = []
            if let error = source.lastError { details.append(error) }
            if let next = source.nextAttempt.flatMap(Timestamp.init(rfc3339:)) {
                details.append("retry " + (next > now ? HumanFormat.relative(next, now: now) : "due"))
            }
            let since = source.lastSuccess.flatMap(Timestamp.init(rfc3339:)).map { " since " + HumanFormat.localTime($0, now: now) } ?? ""
            let suffix = details.isEmpty ? "" : " (" + details.joined(separator: ", ") + ")"
            lines.append("    " + (source.stale ? "stale\(since)" : "last attempt failed") + suffix)
        }
        var counts: [String] = []
        if source.pending > 0 { counts.append("\(HumanFormat.count(source.pending)) pending") }
        if source.parked > 0 { counts.append("\(HumanFormat.count(source.parked)) parked (see 'syncctl outbox')") }
        if source.conflicts > 0 { counts.append("\(HumanFormat.count(source.conflicts)) \(source.conflicts == 1 ? "conflict" : "conflicts")") }
        if !counts.isEmpty { lines.append("    " + counts.joined(separator: ", ")) }
        for warning in source.warnings { lines.append("    warning: " + warning) }
        lines.append("    " + source.url)
        return lines
    }

    /// Red for an error or a stale copy, green when idle, else yellow (syncing, backoff, offline).
    static func dotColor(of source: SourceStatus) -> DotColor {
        switch source.state {
        case .error: return .red
        case _ where source.stale: return .red
        case .idle: return .green
        default: return .yellow
        }
    }

    private static func recordWord(_ count: Int64) -> String { count == 1 ? "record" : "records" }

    private func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

extension ManagerStatus {
    /// Every text from syncd (a server's error, the configuration's problems and URLs) safe for a terminal
    /// (`HumanFormat.printable`), as the fast path (`StatusTable`) decodes them.
    var printable: ManagerStatus {
        ManagerStatus(daemon: daemon.printable, sources: sources.map(\.printable), failed: failed.map(\.printable))
    }
}

extension DaemonStatus {
    /// The account and the rejected reload's problem safe for a terminal.
    var printable: DaemonStatus {
        DaemonStatus(version: HumanFormat.printable(version), account: HumanFormat.printable(account), online: online,
                     links: HumanFormat.printable(links), reachable: reachable, uptimeSec: uptimeSec,
                     reloadRejected: reloadRejected.map(HumanFormat.printable))
    }
}

extension FailedSourceStatus {
    /// The name and the problem safe for a terminal.
    var printable: FailedSourceStatus {
        FailedSourceStatus(name: HumanFormat.printable(name), file: HumanFormat.printable(file), problem: HumanFormat.printable(problem))
    }
}

extension SourceStatus {
    /// The texts a server or the configuration wrote (error, warnings, URL) safe for a terminal (`HumanFormat.printable`).
    var printable: SourceStatus {
        var copy = self
        copy.name = HumanFormat.printable(name)
        copy.url = HumanFormat.printable(url)
        copy.lastError = lastError.map(HumanFormat.printable)
        copy.warnings = warnings.map(HumanFormat.printable)
        copy.cacheFile = cacheFile.map(HumanFormat.printable)
        return copy
    }
}
