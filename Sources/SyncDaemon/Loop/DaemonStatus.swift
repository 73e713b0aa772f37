import SyncCore
import SyncStore
import SyncEngine

/// The daemon's own reading of `GetStatus` (the type itself is SyncCore's `ManagerStatus`,
/// which the daemon fills, the control server sends and `syncctl` formats; docs/control-api.md).
extension ManagerStatus {
    /// The one-line summary for systemd's `STATUS=` (no relative times: it must not need a wakeup to stay true).
    public var summary: String {
        let notLoaded = failed.isEmpty ? ""
            : "\(failed.count) \(failed.count == 1 ? "source" : "sources") not loaded (configuration error: "
                + failed.prefix(3).map(\.name).joined(separator: ", ") + "); "
        return notLoaded + sourcesSummary
    }

    /// The sources part of `summary`.
    var sourcesSummary: String {
        let count = sources.count
        let noun = count == 1 ? "source" : "sources"
        if count == 0 { return "No sources configured" }
        if !daemon.online {
            return "Offline (\(daemon.links == "none" ? "no link" : "no route")); serving cached data for \(count) \(noun)"
        }
        let syncing = sources.filter { $0.state == .syncing }.map(\.name)
        let failing = sources.filter { $0.stale || $0.state == .error || $0.state == .backoff }
        var parts: [String] = []
        if !syncing.isEmpty { parts.append("Syncing " + syncing.joined(separator: ", ")) }
        if failing.isEmpty {
            parts.append(syncing.isEmpty ? "Online; \(count) \(noun) up to date" : "\(count - syncing.count) of \(count) up to date")
        } else {
            let reasons = failing.prefix(3).map { "\($0.name): \(Self.shortReason($0.lastError))" }.joined(separator: "; ")
            parts.append("\(failing.count) of \(count) \(noun) stale (\(reasons)); serving cached data")
        }
        return parts.joined(separator: "; ")
    }

    static func shortReason(_ error: String?) -> String {
        guard let error else { return "waiting" }
        return error.count > 80 ? String(error.prefix(80)) + "…" : error
    }
}

extension DaemonLoop {
    /// Every source's status, for STATUS= and the `ready` summary: as everyone sees it, since every local user
    /// can read STATUS= (`systemctl status`).
    func snapshot() -> ManagerStatus {
        let now = monotonicNow()
        let wall = currentTimestamp()
        let sources = configuration.sources.map { sourceStatus(of: $0, now: now, wall: wall, audience: .everyone) }
        return ManagerStatus(daemon: daemonStatus(now: now), sources: sources, failed: failedSourceStatuses())
    }

    /// The parameters of the `GetStatus` reply, serialised: only the sources whose status changed since the
    /// last call are serialised again (docs/architecture.md, "Status at scale").
    func statusReply(audience: Redaction.Audience = .privileged) -> [UInt8] {
        let now = monotonicNow()
        let daemon = daemonStatus(now: now)
        let failed = failedSourceStatuses()
        return statusBoard.reply(core: &core, sources: configuration.sources, daemon: daemon, failed: failed, now: now,
                                 wall: currentTimestamp(), audience: audience)
    }

    /// The `STATUS=` line: the summary, after the reason of a rejected reload while the old configuration is kept.
    func statusLine() -> String {
        let summary = snapshot().summary
        guard let reloadFailure else { return summary }
        return "Reload failed (keeping previous configuration): \(reloadFailure); \(summary)"
    }

    func daemonStatus(now: MonotonicInstant) -> DaemonStatus {
        DaemonStatus(
            version: syncdVersion, account: configuration.daemon.account, online: core.online, links: linkState,
            reachable: core.reachable, uptimeSec: (now - .zero).components.seconds, reloadRejected: reloadFailure)
    }

    /// One source's status (`StatusBoard.status(of:)`).
    func sourceStatus(of source: SourceConfiguration, now: MonotonicInstant, wall: Timestamp,
                      audience: Redaction.Audience = .privileged) -> SourceStatus {
        statusBoard.status(of: source, core: core, now: now, wall: wall, audience: audience)
    }

    func failedSourceStatuses() -> [FailedSourceStatus] {
        failedSources.map { FailedSourceStatus(name: $0.name, file: PrintableText.escaping($0.file), problem: $0.problem) }
    }
}
