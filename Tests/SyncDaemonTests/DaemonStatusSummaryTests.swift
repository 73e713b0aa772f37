import SyncCore
import Testing
@testable import SyncDaemon

/// STATUS= names the sources that were left out because of a configuration error.
@Suite("DaemonStatusSnapshot summary")
struct DaemonStatusSummaryTests {
    @Test func failedSourcesComeFirst() {
        let daemon = DaemonStatusSnapshot.Daemon(version: "1.0.0", account: "default", online: true, links: "routable",
                                                 reachable: nil, uptimeSec: 1)
        let posts = DaemonStatusSnapshot.Source(
            name: "posts", url: "http://h/posts", state: .idle, records: 2, pending: 0, conflicts: 0, lastSuccess: nil,
            lastAttempt: nil, lastError: nil, stale: false, attempt: 0, nextAttempt: nil)
        var snapshot = DaemonStatusSnapshot(daemon: daemon, sources: [posts])
        #expect(snapshot.summary == "Online; 1 source up to date")
        let problem = ConfigurationProblem(location: SourceLocation(file: "/etc/syncd/sources.d/users.source", line: 2),
                                           message: "URL: missing")
        snapshot.failed = [FailedSource(name: "users", file: "/etc/syncd/sources.d/users.source", problems: [problem])]
        #expect(snapshot.summary == "1 source not loaded (configuration error: users); Online; 1 source up to date")
        #expect(snapshot.managerStatus.failed.map(\.problem) == ["/etc/syncd/sources.d/users.source:2: URL: missing"])
    }
}
