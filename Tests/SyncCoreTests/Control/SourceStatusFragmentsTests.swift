import Testing
import SyncCore

/// The `GetStatus` fragment cache: a source's serialised object is reused while its status is equal and
/// made anew as soon as any field differs; the assembled reply is byte for byte the plain serialisation.
@Suite struct SourceStatusFragmentsTests {
    static let idle = SourceStatus(
        name: "posts", url: "https://example.com/posts", state: .idle, records: 20, pending: 0, conflicts: 0,
        lastSuccess: "2026-11-30T20:00:38Z", lastAttempt: "2026-11-30T20:00:38Z", lastError: nil, stale: false,
        attempt: 0, nextAttempt: nil)

    static func fresh(_ status: SourceStatus) -> String { JSONValue.object(status.json).serialized() }

    /// Fragments compared as text, so a failure shows JSON rather than bytes.
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func anUnchangedSourceIsNotSerialisedAgain() {
        var fragments = SourceStatusFragments()
        let first = fragments.fragment(for: Self.idle)
        #expect(Self.text(first) == Self.fresh(Self.idle))
        for _ in 0..<3 { #expect(fragments.fragment(for: Self.idle) == first) }
        #expect(fragments.serializedCount == 1)
    }

    /// Every field of the status, changed one at a time: the fragment served afterwards is the new status's
    /// serialisation (a cache that served the previous bytes fails here), and only that change costs a serialisation.
    @Test(arguments: [
        "state", "url", "records", "pending", "parked", "conflicts", "warnings", "lastSuccess", "lastAttempt",
        "lastError", "stale", "attempt", "nextAttempt",
    ])
    func anyChangedFieldGivesTheNewFragment(field: String) throws {
        var changed = Self.idle
        switch field {
        case "state": changed.state = .syncing
        case "url": changed.url = "https://example.com/posts?v=2"
        case "records": changed.records = 21
        case "pending": changed.pending = 1
        case "parked": changed.parked = 1
        case "conflicts": changed.conflicts = 1
        case "warnings": changed.warnings = ["next page not followed"]
        case "lastSuccess": changed.lastSuccess = "2026-11-30T20:15:38Z"
        case "lastAttempt": changed.lastAttempt = "2026-11-30T20:15:38Z"
        case "lastError": changed.lastError = "Failed to fetch posts: HTTP 503"
        case "stale": changed.stale = true
        case "attempt": changed.attempt = 2
        case "nextAttempt": changed.nextAttempt = "2026-11-30T20:16:00Z"
        default: Issue.record("unknown field \(field)")
        }
        #expect(changed != Self.idle)
        var fragments = SourceStatusFragments()
        let before = fragments.fragment(for: Self.idle)
        let after = fragments.fragment(for: changed)
        #expect(Self.text(after) == Self.fresh(changed))
        #expect(after != before)
        #expect(fragments.serializedCount == 2)
        // And back: the old status is serialised again, not served from the newer entry.
        #expect(fragments.fragment(for: Self.idle) == before)
        #expect(fragments.serializedCount == 3)
    }

    @Test func aChangeInOneSourceLeavesTheOthersCached() throws {
        var fragments = SourceStatusFragments()
        let sources = (0..<3).map { index -> SourceStatus in
            var status = Self.idle
            status.name = "s\(index)"
            return status
        }
        for status in sources { _ = fragments.fragment(for: status) }
        var round = sources
        round[1].state = .syncing
        let served = round.map { fragments.fragment(for: $0) }
        #expect(served.map(Self.text) == round.map(Self.fresh))
        #expect(try JSONValue(parsing: served[1])["state"] == "syncing")
        #expect(fragments.serializedCount == 4)
    }

    @Test func removedSourcesAreForgotten() {
        var fragments = SourceStatusFragments()
        var other = Self.idle
        other.name = "comments"
        _ = fragments.fragment(for: Self.idle)
        _ = fragments.fragment(for: other)
        fragments.keepOnly(["comments"])
        #expect(fragments.count == 1)
        _ = fragments.fragment(for: other)
        #expect(fragments.serializedCount == 2)
    }

    @Test(arguments: [0, 1, 3])
    func theAssembledReplyIsThePlainSerialisation(sourceCount: Int) throws {
        let daemon = DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable", reachable: nil,
                                  uptimeSec: 82, reloadRejected: "/etc/syncd/syncd.conf:3: bad \"value\"")
        let sources = (0..<sourceCount).map { index -> SourceStatus in
            var status = Self.idle
            status.name = "s\(index)"
            status.lastError = index == 1 ? "Failed to parse posts: control byte \u{1} at 4\n" : nil
            status.warnings = index == 2 ? ["é", "😀"] : []
            return status
        }
        let failed = [FailedSourceStatus(name: "bad", file: "/etc/syncd/sources.d/bad.source", problem: "bad.source:1: no URL=")]
        let status = ManagerStatus(daemon: daemon, sources: sources, failed: sourceCount == 0 ? [] : failed)
        var fragments = SourceStatusFragments()
        var writer = StatusReplyWriter(daemon: daemon)
        for source in sources { writer.appendSource(fragments.fragment(for: source)) }
        let assembled = writer.finish(failed: status.failed)
        #expect(Self.text(assembled) == JSONValue.object(status.json).serialized())
        #expect(try ManagerStatus(json: #require(JSONValue(parsing: assembled).objectValue)) == status)
    }
}
