import SyncCore
import Testing
@testable import SyncControl

/// The one-pass table (`StatusTable`) prints what the tree path (`ManagerStatus(json:)` + `StatusFormatter`) prints,
/// byte for byte, and leaves every reply it does not fully read to the tree path.
@Suite("Status table in one pass")
struct StatusTableTests {
    /// A fixed-seed generator (SplitMix64): the same statuses on every run.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let now = Timestamp(secondsSinceEpoch: 1_795_000_000)
    static let names = ["posts", "a", "very-long-source-name-here", "café", "日本語", "tab\there", #"quote"d\back"#, "e\u{301}x"]
    static let times: [String?] = [nil, "2026-11-29T10:00:00Z", "2026-11-18T07:41:00.123+01:00", "not a time", "2030-01-01T00:00:00Z"]
    static let errors: [String?] = [nil, "HTTP 503 from server", "Failed to \"read\" /x: é\nnext line"]
    static let counts: [Int64] = [0, 1, 2, 999, 1000, 12_345, 1_234_567_890, Int64.max, -5]

    static func randomStatus(_ random: inout Seeded) -> ManagerStatus {
        let sources = (0..<Int.random(in: 0...40, using: &random)).map { _ in
            SourceStatus(name: names.randomElement(using: &random) ?? "", url: "http://h/" + (names.randomElement(using: &random) ?? ""),
                         state: SourceStateName.allCases.randomElement(using: &random) ?? .idle,
                         records: counts.randomElement(using: &random) ?? 0, pending: Bool.random(using: &random) ? 0 : 3,
                         parked: Bool.random(using: &random) ? 0 : 1, conflicts: [0, 1, 2].randomElement(using: &random) ?? 0,
                         warnings: Bool.random(using: &random) ? [] : ["page 2 skipped", "é \"w\""],
                         lastSuccess: times.randomElement(using: &random) ?? nil, lastAttempt: times.randomElement(using: &random) ?? nil,
                         lastError: errors.randomElement(using: &random) ?? nil, stale: Int.random(in: 0..<4, using: &random) == 0,
                         attempt: 2, nextAttempt: times.randomElement(using: &random) ?? nil)
        }
        let failed = (0..<Int.random(in: 0...2, using: &random)).map { index in
            FailedSourceStatus(name: names[index + 3], file: "/etc/syncd/sources.d/x.source", problem: "x.source:3: bad URL=")
        }
        var daemon = DaemonStatus(version: "1.0.0", account: "default", online: Bool.random(using: &random), links: "routable",
                                  reachable: [true, false, nil].randomElement(using: &random) ?? nil, uptimeSec: 3725)
        if Int.random(in: 0..<4, using: &random) == 0 { daemon.reloadRejected = "sources.d/x.source:2: unknown key" }
        return ManagerStatus(daemon: daemon, sources: sources, failed: failed)
    }

    @Test("randomized replies: the one-pass table equals the tree path's, compact and pretty JSON, every option")
    func sameAsTreePath() throws {
        var random = Seeded(state: 13)
        for round in 0..<300 {
            let status = Self.randomStatus(&random)
            let formatter = StatusFormatter(now: Self.now, color: round % 2 == 0, noLegend: round % 3 == 0, unicode: round % 5 != 0)
            let style: JSONStyle = round % 4 == 0 ? .pretty : .compact
            let text = JSONValue.object(status.json).serializedBytes(style)
            let fast = try #require(StatusTable.format(text[...], with: formatter), "round \(round) left to the tree path")
            let tree = try #require(try JSONValue(parsing: text).objectValue)
            #expect(fast == formatter.format(try ManagerStatus(json: tree)), "round \(round)")
            // The whole reply message as syncd writes it reads the same.
            let message = Array(#"{"parameters":"#.utf8) + text + Array("}".utf8)
            #expect(StatusTable.format(message[...], envelope: true, with: formatter) == fast, "round \(round)")
        }
    }

    @Test("a message of another shape than {\"parameters\":{…}} is left to the frame check")
    func envelope() {
        let formatter = StatusFormatter(now: Self.now, color: false, noLegend: false)
        let parameters = #"{"daemon":\#(Self.daemon),"sources":[\#(Self.source)]}"#
        #expect(StatusTable.format(Array(#"{"parameters":\#(parameters)}"#.utf8)[...], envelope: true, with: formatter) != nil)
        for message in [#"{"parameters":\#(parameters),"continues":true}"#, #"{"parameters":\#(parameters),"error":"x"}"#,
                        #"{"parameters":\#(parameters)} x"#, #"{"parameters":\#(parameters)"#, #"{"continues":false,"parameters":\#(parameters)}"#] {
            #expect(StatusTable.format(Array(message.utf8)[...], envelope: true, with: formatter) == nil, "\(message)")
        }
        #expect(StatusTable.format(Array((parameters + " {").utf8)[...], with: formatter) == nil, "text after the parameters")
    }

    @Test("members in another order, unknown members and a missing optional one are read as the tree path reads them")
    func memberOrder() throws {
        let text = #"{"failed":[],"extra":{"a":[1,{"b":null}]},"sources":[{"url":"http://h/p","stale":false,"attempt":0,"conflicts":1,"#
            + #""pending":0,"records":1,"state":"backoff","name":"p","future":[true],"lastError":null}],"daemon":{"version":"1","#
            + #""account":"default","online":true,"links":"carrier","uptimeSec":5}}"#
        let formatter = StatusFormatter(now: Self.now, color: false, noLegend: false)
        let fast = try #require(StatusTable.format(Array(text.utf8)[...], with: formatter))
        let tree = try #require(try JSONValue(parsing: text).objectValue)
        #expect(fast == formatter.format(try ManagerStatus(json: tree)))
        #expect(fast.contains("● p  backoff  1 record  never synced\n    1 conflict\n    http://h/p\n"))
    }

    /// Replies the tree path refuses (or reads differently) are not formatted here, so `syncctl status` keeps the tree
    /// path's error for them.
    @Test("a reply this reader does not fully read is left to the tree path", arguments: [
        #"{"daemon":{},"sources":[]}"#,
        #"{"sources":[]}"#,
        #"{"daemon":\#(daemon)}"#,
        #"{"daemon":\#(daemon),"sources":{}}"#,
        #"{"daemon":\#(daemon),"sources":[1]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""records":2"#, with: #""records":"2""#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""records":2"#, with: #""records":2.5"#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""state":"idle""#, with: #""state":"sleeping""#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""name":"p","#, with: ""))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""name":"p""#, with: #""name":"p","name":"q""#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""stale":false"#, with: #""stale":0"#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source.replacingOccurrences(of: #""lastError":null"#, with: #""lastError":5"#))]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source)],"failed":[1]}"#,
        #"{"daemon":\#(daemon),"sources":[\#(source)"#,
    ])
    func leftToTreePath(reply: String) throws {
        let formatter = StatusFormatter(now: Self.now, color: false, noLegend: false)
        #expect(StatusTable.format(Array(reply.utf8)[...], with: formatter) == nil)
        // The tree path refuses these with a message naming the field (or the JSON error) — nothing is printed.
        let value = try? JSONValue(parsing: reply)
        if let object = value?.objectValue, !reply.contains(#""records":2.5"#), !reply.contains(#""name":"q""#) {
            #expect(throws: ReplyShapeError.self) { try ManagerStatus(json: object) }
        }
    }

    static let daemon = #"{"version":"1","account":"default","online":true,"links":"carrier","uptimeSec":5}"#
    static let source = #"{"name":"p","url":"http://h/p","state":"idle","records":2,"pending":0,"conflicts":0,"stale":false,"#
        + #""attempt":0,"lastError":null}"#

    @Test("the width of a count is that of HumanFormat.count")
    func countWidth() {
        for value in Self.counts + [10, 100, 1_000_000, -1000, Int64.min] {
            #expect(StatusTableWriter.countWidth(value) == HumanFormat.count(value).count, "\(value)")
        }
    }
}
