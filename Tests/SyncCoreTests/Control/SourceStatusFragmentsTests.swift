import Testing
import SyncCore

/// The `GetStatus` fragment cache: a source's serialised object is made once and copied until its source is
/// marked changed; the assembled reply is byte for byte the plain serialisation.
@Suite struct SourceStatusFragmentsTests {
    static let idle = SourceStatus(
        name: "posts", url: "https://example.com/posts", state: .idle, records: 20, pending: 0, conflicts: 0,
        lastSuccess: "2026-11-30T20:00:38Z", lastAttempt: "2026-11-30T20:00:38Z", lastError: nil, stale: false,
        attempt: 0, nextAttempt: nil)

    static func named(_ name: String) -> SourceStatus {
        var status = idle
        status.name = name
        return status
    }

    /// The statuses as `JSONValue` would write the `sources` array's elements.
    static func fresh(_ statuses: [SourceStatus]) -> String {
        statuses.map { JSONValue.object($0.json).serialized() }.joined(separator: ",")
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func anUnmarkedSourceIsNotSerialisedAgain() {
        var statuses = ["a", "b"].map(Self.named)
        var fragments = SourceStatusFragments(sources: ["a", "b"])
        let first = fragments.sources { statuses[$0] }
        #expect(Self.text(first) == Self.fresh(statuses))
        // A status that changed without a mark is not looked at: the kept bytes are served.
        statuses[0].records = 99
        for _ in 0..<3 { #expect(fragments.sources { statuses[$0] } == first) }
        #expect(fragments.serializedCount == 2)
    }

    @Test func aMarkedSourceIsMadeAnewAndTheOthersCopied() {
        var statuses = ["a", "b", "c"].map(Self.named)
        var fragments = SourceStatusFragments(sources: ["a", "b", "c"])
        _ = fragments.sources { statuses[$0] }
        statuses[1].state = .syncing
        var changes = SourceChanges()
        changes.insert("b")
        changes.insert("not-configured")
        fragments.invalidate(changes)
        var asked: [Int] = []
        let served = fragments.sources { position in
            asked.append(position)
            return statuses[position]
        }
        #expect(asked == [1])
        #expect(Self.text(served) == Self.fresh(statuses))
        #expect(fragments.serializedCount == 4)
    }

    @Test func markingEverySourceOrSettingTheSourcesMakesThemAllAnew() {
        var statuses = ["a", "b"].map(Self.named)
        var fragments = SourceStatusFragments(sources: ["a", "b"])
        _ = fragments.sources { statuses[$0] }
        statuses[0].url = "https://example.com/a?v=2"
        statuses[1].url = "https://example.com/b?v=2"
        var all = SourceChanges()
        all.insertAll()
        all.insert("b")
        #expect(all.all && all.names.isEmpty)
        fragments.invalidate(all)
        #expect(Self.text(fragments.sources { statuses[$0] }) == Self.fresh(statuses))
        // A reload that removes a source and adds another.
        statuses = ["b", "c"].map(Self.named)
        fragments.setSources(["b", "c"])
        #expect(Self.text(fragments.sources { statuses[$0] }) == Self.fresh(statuses))
        #expect(fragments.serializedCount == 6)
    }

    @Test func aTableMarksWhatIsSet() {
        var table = SourceTable<Int>(["a": 1, "b": 2])
        #expect(table.changes.isEmpty)
        table["a"] = 1
        table["c"] = 3
        #expect(table["b"] == 2)
        #expect(table.changes.take().names == ["a", "c"])
        #expect(table.changes.isEmpty)
        #expect(table.removeValue(forKey: "b") == 2)
        #expect(table.keys.sorted() == ["a", "c"] && table.count == 2)
        #expect(table.changes.take().names == ["b"])
        table.replaceAll(with: [:])
        #expect(table.changes.all)
        #expect(table.values.isEmpty)
    }

    @Test(arguments: [0, 1, 3])
    func theAssembledReplyIsThePlainSerialisation(sourceCount: Int) throws {
        let daemon = DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable", reachable: nil,
                                  uptimeSec: 82, reloadRejected: "/etc/syncd/syncd.conf:3: bad \"value\"")
        let sources = (0..<sourceCount).map { index -> SourceStatus in
            var status = Self.named("s\(index)")
            status.lastError = index == 1 ? "Failed to parse posts: control byte \u{1} at 4\n" : nil
            status.warnings = index == 2 ? ["é", "😀"] : []
            return status
        }
        let failed = [FailedSourceStatus(name: "bad", file: "/etc/syncd/sources.d/bad.source", problem: "bad.source:1: no URL=")]
        let status = ManagerStatus(daemon: daemon, sources: sources, failed: sourceCount == 0 ? [] : failed)
        var fragments = SourceStatusFragments(sources: sources.map(\.name))
        let assembled = StatusReplyWriter.reply(daemon: daemon, sources: fragments.sources { sources[$0] }, failed: status.failed)
        #expect(Self.text(assembled) == JSONValue.object(status.json).serialized())
        #expect(try ManagerStatus(json: #require(JSONValue(parsing: assembled).objectValue)) == status)
    }
}
