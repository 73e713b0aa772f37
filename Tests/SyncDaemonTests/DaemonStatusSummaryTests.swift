import SyncCore
import Testing
@testable import SyncDaemon

/// STATUS= names the sources that were left out because of a configuration error.
@Suite("ManagerStatus summary")
struct DaemonStatusSummaryTests {
    @Test func failedSourcesComeFirst() {
        let daemon = DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable",
                                  reachable: nil, uptimeSec: 1)
        let posts = SourceStatus(
            name: "posts", url: "http://h/posts", state: .idle, records: 2, pending: 0, conflicts: 0, lastSuccess: nil,
            lastAttempt: nil, lastError: nil, stale: false, attempt: 0, nextAttempt: nil)
        var snapshot = ManagerStatus(daemon: daemon, sources: [posts])
        #expect(snapshot.summary == "Online; 1 source up to date")
        let problem = ConfigurationProblem(location: SourceLocation(file: "/etc/syncd/sources.d/users.source", line: 2),
                                           message: "URL: missing")
        let failed = FailedSource(name: "users", file: "/etc/syncd/sources.d/users.source", problems: [problem])
        snapshot.failed = [FailedSourceStatus(name: failed.name, file: failed.file, problem: failed.problem)]
        #expect(snapshot.summary == "1 source not loaded (configuration error: users); Online; 1 source up to date")
        let sent = snapshot.json["failed"]?.arrayValue?.compactMap { $0.objectValue?["problem"]?.stringValue }
        #expect(sent == ["/etc/syncd/sources.d/users.source:2: URL: missing"])
    }
}
