import Testing
import SyncCore
@testable import SyncControl

/// `syncctl status SOURCE`: one source in full, exact text, with an injected clock.
@Suite("Source detail")
struct SourceDetailFormatterTests {
    static let now = Timestamp(rfc3339: "2026-11-29T10:05:00Z")!
    let formatter = SourceDetailFormatter(now: SourceDetailFormatterTests.now, color: false)

    static let idle = SourceStatus(
        name: "posts", url: "http://localhost:3000/posts", state: .idle, records: 12_000, pending: 0, conflicts: 0,
        lastSuccess: "2026-11-29T10:00:00Z", lastAttempt: "2026-11-29T10:00:00Z", lastError: nil, stale: false, attempt: 0,
        nextAttempt: nil, cacheFile: "/var/cache/syncd/default/posts.json",
        mode: SourceMode(writable: false, pagination: "none", conflictPolicy: nil))

    static func entry(_ seq: Int64, _ state: String, error: String? = nil, status: Int64? = nil) -> OutboxEntry {
        OutboxEntry(seq: seq, source: "posts", id: "\(seq)", operation: "update", createdAt: "2026-11-29T09:00:00Z",
                    state: state, attempts: 1, lastStatus: status, lastError: error)
    }

    /// A parked change a newer one superseded is history: named as such, not counted or shown as parked.
    @Test func aSupersededChangeIsNamedApartFromParkedOnes() {
        var superseded = Self.entry(7, "parked", error: "superseded by a newer change; was: HTTP 400")
        superseded.superseded = true
        let outbox = [superseded, Self.entry(8, "parked", status: 422)]
        let text = formatter.format(Self.idle, outbox: .init(entries: outbox))
        #expect(text.contains("Outbox: 2 changes (1 superseded, 1 parked); 'syncctl outbox posts' lists them\n"))
        #expect(text.contains("parked update of 8 (outbox 8): HTTP 422"))
        #expect(!text.contains("update of 7"))
    }

    /// `Delta=`: the mode and the checkpoint's times, or that the next refresh lists whole; the JSON round trip keeps them.
    @Test(arguments: [
        (DeltaStatus(mode: "watermark", lastDelta: "2026-11-29T10:04:00Z", lastFullListing: "2026-11-29T08:05:00Z"),
         "Delta: watermark, last delta 2026-11-29T10:04:00Z (1min ago), last full listing 2026-11-29T08:05:00Z (2h ago)\n"),
        (DeltaStatus(mode: "token", lastDelta: nil, lastFullListing: "2026-11-29T10:00:00Z"),
         "Delta: token, last full listing 2026-11-29T10:00:00Z (5min ago), no delta since\n"),
        (DeltaStatus(mode: "watermark", lastDelta: nil, lastFullListing: nil),
         "Delta: watermark, no checkpoint: the next refresh lists the whole collection\n"),
    ])
    func aDeltaSourceShowsItsCheckpoint(delta: DeltaStatus, line: String) throws {
        var source = Self.idle
        source.delta = delta
        #expect(formatter.format(source, outbox: .init(entries: [])).contains("        Mode: read-only, Pagination=none\n       " + line))
        #expect(try SourceStatus(json: source.json).delta == delta)
        #expect(!formatter.format(Self.idle, outbox: .init(entries: [])).contains("Delta"))
    }

    /// An interrupted listing: where the next refresh resumes, or that this one is resuming; the JSON round trip keeps it.
    @Test func anInterruptedListingSaysWhereItResumes() throws {
        var source = Self.idle
        source.resume = ResumeStatus(records: 2_500, pages: 5, began: "2026-11-29T10:03:00Z")
        #expect(formatter.format(source, outbox: .init(entries: [])).contains(
            "     Listing: interrupted: the next refresh resumes at record 2,501 (page 6), begun 2026-11-29T10:03:00Z (2min ago)\n"))
        source.state = .syncing
        #expect(formatter.format(source, outbox: .init(entries: [])).contains(
            "     Listing: resuming at record 2,501 (page 6), begun 2026-11-29T10:03:00Z (2min ago)\n"))
        #expect(try SourceStatus(json: source.json).resume == source.resume)
        #expect(try SourceStatus(json: Self.idle.json).resume == nil)
        #expect(!formatter.format(Self.idle, outbox: .init(entries: [])).contains("Listing"))
    }

    @Test func anIdleSourceInFull() {
        #expect(formatter.format(Self.idle, outbox: .init(entries: [])) == """
            ● posts — idle
                     URL: http://localhost:3000/posts
                 Records: 12,000 cached, 0 pending, 0 parked, 0 conflicts
            Last success: 2026-11-29T10:00:00Z (5min ago)
            Last attempt: 2026-11-29T10:00:00Z (5min ago)
                   Error: none
                Next try: at the next periodic refresh
                    Mode: read-only, Pagination=none
              Cache file: /var/cache/syncd/default/posts.json
                  Outbox: empty

            """)
    }

    @Test func aFailingWritableSourceWithWarningsAndAnOutbox() {
        var source = Self.idle
        source.state = .backoff
        source.stale = true
        source.lastAttempt = "2026-11-29T10:04:00Z"
        source.lastError = "HTTP 503 from GET http://localhost:3000/posts"
        source.attempt = 2
        source.nextAttempt = "2026-11-29T10:05:30Z"
        source.pending = 1
        source.parked = 2
        source.conflicts = 1
        source.warnings = ["the next page at /next was not followed (Pagination=none)"]
        source.mode = SourceMode(writable: true, pagination: "link", conflictPolicy: "client-wins")
        let outbox = [Self.entry(3, "queued"), Self.entry(4, "parked", error: "HTTP 422 from PUT http://localhost:3000/posts/4: bad"),
                      Self.entry(5, "parked", status: 409)]
        #expect(formatter.format(source, outbox: .init(entries: outbox)) == """
            ● posts — backoff, stale
                     URL: http://localhost:3000/posts
                 Records: 12,000 cached, 1 pending, 2 parked, 1 conflict
            Last success: 2026-11-29T10:00:00Z (5min ago)
            Last attempt: 2026-11-29T10:04:00Z (1min ago)
                   Error: HTTP 503 from GET http://localhost:3000/posts (2 failed attempts in a row)
                Next try: 2026-11-29T10:05:30Z (in 30s)
                    Mode: writable (ConflictPolicy=client-wins), Pagination=link
                 Warning: the next page at /next was not followed (Pagination=none)
              Cache file: /var/cache/syncd/default/posts.json
                  Outbox: 3 changes (1 queued, 2 parked); 'syncctl outbox posts' lists them
                          parked update of 4 (outbox 4): HTTP 422 from PUT http://localhost:3000/posts/4: bad
                          parked update of 5 (outbox 5): HTTP 409

            """)
    }

    @Test func aNeverSyncedSourceFromAnOlderDaemonAndAnOutboxNotReadable() {
        // No cacheFile and no mode (a daemon older than them): their lines are left out.
        let source = SourceStatus(name: "users", url: "https://example.com/users", state: .syncing, records: 0, pending: 2, parked: 1,
                                  conflicts: 0, lastSuccess: nil, lastAttempt: nil, lastError: nil, stale: false, attempt: 0,
                                  nextAttempt: nil)
        #expect(formatter.format(source, outbox: .init(entries: nil)) == """
            ● users — syncing
                     URL: https://example.com/users
                 Records: 0 cached, 2 pending, 1 parked, 0 conflicts
            Last success: never
            Last attempt: never
                   Error: none
                Next try: now (refreshing)
                  Outbox: 2 pending, 1 parked (listing them needs root or membership in group "syncd")

            """)
    }

    @Test func aDueRetryManyParkedChangesAndPlainCharacters() {
        var source = Self.idle
        source.state = .error
        source.lastError = "HTTP 401"
        source.attempt = 1
        source.nextAttempt = "2026-11-29T10:04:00Z"
        let plain = SourceDetailFormatter(now: Self.now, color: false, unicode: false)
        let parked = (1...7).map { Self.entry(Int64($0), "parked", status: 422) }
        let text = plain.format(source, outbox: .init(entries: parked))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "* posts - error")
        #expect(lines[5] == "       Error: HTTP 401 (1 failed attempt in a row)")
        #expect(lines[6] == "    Next try: 2026-11-29T10:04:00Z (due)")
        #expect(lines[9] == "      Outbox: 7 changes (7 parked); 'syncctl outbox posts' lists them")
        #expect(Array(lines[10...]) == (1...5).map { "              parked update of \($0) (outbox \($0)): HTTP 422" }
            + ["              … and 2 more parked"])
        var offline = Self.idle
        offline.state = .offline
        #expect(formatter.format(offline, outbox: .init(entries: [])).contains("\n    Next try: when the network is back\n"))
        // Coloured, the dot is red for an error.
        let colored = SourceDetailFormatter(now: Self.now, color: true).format(source, outbox: .init(entries: []))
        #expect(colored.hasPrefix("\u{1B}[0;1;31m●\u{1B}[0m posts — error\n"))
    }

    /// Server text reaches the terminal escaped (a window title, a screen clear), in every field of the view.
    @Test func escapeSequencesFromAServerArePrintedEscaped() {
        var source = Self.idle
        source.lastError = "HTTP 500 from GET http://localhost:3000/posts: \u{1B}]2;owned\u{07}\u{1B}[2J"
        source.warnings = ["next page \u{1B}[31mred"]
        var parked = Self.entry(4, "parked", error: "HTTP 422: \u{1B}[2J")
        parked.id = "id\u{1B}[2J"
        let text = formatter.format(source, outbox: .init(entries: [parked]))
        #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"))
        #expect(text.contains("Error: HTTP 500 from GET http://localhost:3000/posts: \\x1b]2;owned\\x07\\x1b[2J"))
        #expect(text.contains("Warning: next page \\x1b[31mred"))
        #expect(text.contains("parked update of id\\x1b[2J (outbox 4): HTTP 422: \\x1b[2J"))
        let failed = formatter.format(FailedSourceStatus(name: "bad", file: "/etc/syncd/sources.d/bad.source",
                                                         problem: "URL= \u{1B}[2J"))
        #expect(failed.contains("Problem: URL= \\x1b[2J"))
    }

    @Test func aSourceLeftOutByAConfigurationError() {
        let failed = FailedSourceStatus(name: "bad", file: "/etc/syncd/sources.d/bad.source",
                                        problem: "/etc/syncd/sources.d/bad.source:2: URL: missing")
        #expect(formatter.format(failed) == """
            × bad — failed: not loaded because of a configuration error
               File: /etc/syncd/sources.d/bad.source
            Problem: /etc/syncd/sources.d/bad.source:2: URL: missing

            """)
    }

    @Test(arguments: [
        ("postz", ["posts", "users"], "posts"),
        ("Posts", ["posts", "users"], "posts"),
        ("user", ["posts", "users"], "users"),
        ("pots", ["posts", "pots2"], "posts"),
        ("weather", ["posts", "users"], nil),
        ("p", ["q"], nil),
        ("x", [], nil),
    ] as [(String, [String], String?)])
    func theNearestConfiguredName(name: String, names: [String], expected: String?) {
        #expect(SourceNameSuggestion.nearest(to: name, in: names) == expected)
    }

    @Test func unknownNamesAreFoundAndExplained() {
        let status = ManagerStatus(daemon: FakeStatus.daemon, sources: [Self.idle],
                                   failed: [FailedSourceStatus(name: "bad", file: "/f", problem: "/f:1: x")])
        #expect(SourceStatusView.find("posts", in: status) == .running(Self.idle))
        #expect(SourceStatusView.find("bad", in: status) == .failed(status.failed[0]))
        #expect(SourceStatusView.find("postz", in: status) == .unknown(suggestion: "posts"))
        #expect(SourceStatusView.find("bsd", in: status) == .unknown(suggestion: "bad"))
        #expect(SourceStatusView.unknownMessage("postz", suggestion: "posts") == "no such source: postz; did you mean 'posts'?")
        #expect(SourceStatusView.unknownMessage("zzz", suggestion: nil)
            == "no such source: zzz; 'syncctl status' lists the configured sources")
    }
}
