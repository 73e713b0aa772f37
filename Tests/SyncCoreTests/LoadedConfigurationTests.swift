import SyncCore
import Testing

/// One broken `.source` file disables that source only; `syncd.conf` errors refuse the whole.
@Suite("LoadedConfiguration")
struct LoadedConfigurationTests {
    static func load(main: String? = nil, sources: [(String, String)]) -> Result<LoadedConfiguration, ConfigurationErrors> {
        Configuration.load(
            main: main.map { ConfigurationFile(path: "syncd.conf", text: $0) }, dropIns: [],
            sources: sources.map { ConfigurationFile(path: $0.0, text: $0.1) })
    }

    @Test("a source with an error is left out and named with its problem; the others run")
    func brokenSourceIsSkipped() throws {
        let loaded = try Self.load(sources: [
            ("sources.d/a.source", "[Source]\nURL=http://localhost/a\n"),
            ("sources.d/b.source", "[Source]\nName=bee\nURL=ftp://x/b\n"),
            ("sources.d/c.source", "[Source]\nURL=http://localhost/c\nBogus=1\n"),
        ]).get()
        #expect(loaded.configuration.sources.map(\.name) == ["a"])
        #expect(loaded.failedSources.map(\.name) == ["bee", "c"])
        #expect(loaded.failedSources.map(\.problem) == [
            "sources.d/b.source:3: URL: unsupported URL scheme \"ftp\"; use http, https or file",
            "sources.d/c.source:3: unknown key \"Bogus\" in [Source]; known keys: Name, URL, IDField, VersionField, "
                + "RecordsPath, Pagination, NextPath, CursorPath, CursorParameter, PageParameter, LimitParameter, OffsetParameter, TotalPath, HasMorePath, NextHeader, MaxPages, ListingTimeoutSec, StagePagesAfterSec, AllowedOrigins, "
                + "ItemURL, ClientIDField, SendClientID, LostCreateWaitSec, Header, BearerTokenCredential, TimeoutSec, MaxBytes, MaxRecordBytes, AllowEmpty, Writable, ConflictPolicy, "
                + "DiscardedRetentionSec, RecordEnvelope, Delta, DeltaField, DeltaQuery, DeltaTokenPath, DeletedPath, DeletedValue, DeltaExpired, "
                + "FullResyncIntervalSec",
        ].map { $0 })
    }

    @Test("the failed source keeps its Name= when that was valid")
    func failedSourceKeepsItsName() throws {
        let loaded = try Self.load(sources: [("sources.d/file.source", "[Source]\nName=posts\nTimeoutSec=soon\nURL=http://h/\n")]).get()
        #expect(loaded.failedSources.map(\.name) == ["posts"])
        #expect(loaded.failedSources.first?.file == "sources.d/file.source")
        #expect(loaded.configuration.sources.isEmpty)
    }

    @Test("several problems in one file: the first, and how many more")
    func severalProblems() throws {
        let loaded = try Self.load(sources: [("sources.d/x.source", "[Source]\nURL=gopher://h/\nTimeoutSec=soon\n")]).get()
        let failed = try #require(loaded.failedSources.first)
        #expect(failed.problems.count == 2)
        #expect(failed.problem.hasSuffix("(and 1 more; run 'syncd --check-config')"))
    }

    @Test("an error in syncd.conf refuses everything and reports the sources' problems too")
    func mainErrorRefuses() {
        let result = Self.load(main: "[Refresh]\nIntervalSec=soon\n", sources: [
            ("sources.d/a.source", "[Source]\nURL=http://localhost/a\n"),
            ("sources.d/b.source", "[Source]\nURL=ftp://x/b\n"),
        ])
        guard case .failure(let errors) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(errors.problems.map(\.location.description) == ["syncd.conf:2", "sources.d/b.source:2"])
    }

    @Test("a duplicate name fails the second file only")
    func duplicateName() throws {
        let loaded = try Self.load(sources: [
            ("sources.d/a.source", "[Source]\nName=same\nURL=http://localhost/a\n"),
            ("sources.d/b.source", "[Source]\nName=same\nURL=http://localhost/b\n"),
        ]).get()
        #expect(loaded.configuration.sources.map(\.url) == ["http://localhost/a"])
        #expect(loaded.failedSources.map(\.file) == ["sources.d/b.source"])
    }

    @Test("X- keys and [X-…] sections are ignored, as systemd does")
    func extensionKeysAreIgnored() throws {
        let loaded = try Self.load(
            main: "[X-Site]\nOwner=ops\n[Daemon]\nX-Ticket=1234\nAccount=a\n",
            sources: [("sources.d/a.source", "[X-Before]\nFoo=1\n[Source]\nX-Owner=web team\nURL=http://localhost/a\n[X-Notes]\nWhatever=x\n")]
        ).get()
        #expect(loaded.failedSources.isEmpty)
        #expect(loaded.configuration.daemon.account == "a")
        #expect(loaded.configuration.sources.map(\.url) == ["http://localhost/a"])
        // A key that merely contains "X-" is still checked.
        let bad = try Self.load(sources: [("sources.d/b.source", "[Source]\nURL=http://h/\nMyX-Key=1\n")]).get()
        #expect(bad.failedSources.count == 1)
    }

    @Test("NUL and control bytes in a value are escaped in the message")
    func controlBytesAreEscaped() throws {
        let loaded = try Self.load(sources: [("sources.d/a.source", "[Source]\nURL=http://h/\u{0}x\u{1B}[2J\n")]).get()
        let problem = try #require(loaded.failedSources.first?.problem)
        #expect(problem.contains("\\x00x\\x1b[2J"))
        #expect(!problem.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }
}

@Suite("PrintableText")
struct PrintableTextTests {
    @Test func escapesControlCharacters() {
        #expect(PrintableText.escaping("a\u{0}b\tc\u{7F}") == "a\\x00b\\x09c\\x7f")
        #expect(PrintableText.escaping("a\tb", keepingTabs: true) == "a\tb")
        #expect(PrintableText.escaping("plain ünïcode") == "plain ünïcode")
    }

    /// C1 controls (U+0080–U+009F) act like ESC sequences on a terminal: U+009B is CSI, U+009D OSC, U+009C ST.
    /// Each is written as its UTF-8 bytes, so it reads apart from an invalid byte `\x9b`.
    @Test(arguments: [
        ("\u{9B}2J", "\\xc2\\x9b2J"),
        ("\u{9D}0;owned\u{9C}", "\\xc2\\x9d0;owned\\xc2\\x9c"),
        ("\u{80}..\u{9F}", "\\xc2\\x80..\\xc2\\x9f"),
        ("\u{A0}nbsp é", "\u{A0}nbsp é"),   // U+00A0 is printable: kept
    ])
    func escapesC1ControlCharacters(_ text: String, _ shown: String) {
        #expect(PrintableText.escaping(text) == shown)
    }

    @Test func escapesInvalidUTF8() {
        #expect(PrintableText.escapingInvalidUTF8(Array("ok.source".utf8)) == nil)
        #expect(PrintableText.escapingInvalidUTF8([0x61, 0xFF, 0x62] + Array("é".utf8) + [0xC3]) == "a\\xffbé\\xc3")
        // An invalid lone 0x9B and a valid U+009B (C2 9B) read apart.
        #expect(PrintableText.escapingInvalidUTF8([0x9B, 0x20, 0xC2, 0x9B]) == "\\x9b \\xc2\\x9b")
    }
}

@Suite("LoadedConfiguration order")
struct LoadedConfigurationOrderTests {
    @Test("a failed source's problems are in line order, syntax problems included")
    func problemsByLine() throws {
        let loaded = try LoadedConfigurationTests.load(sources: [
            ("sources.d/a.source", "[Source]\nURL=gopher://h/\nTimeoutSec=soon\nnot an assignment\n"),
        ]).get()
        #expect(loaded.failedSources.first?.problems.map(\.location.line) == [2, 3, 4])
    }
}
