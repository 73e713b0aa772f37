import Testing
@testable import SyncCore

@Suite("INI syntax")
struct ConfigurationSyntaxTests {
    static let specExample = """
        # syncd.conf — every key optional; these are the defaults
        [Daemon]
        Account=default               # whose data this is; cache and state are kept per account
        StateDirectory=               # default $STATE_DIRECTORY, else /var/lib/syncd (user: $XDG_STATE_HOME/syncd)
        CacheDirectory=               # default $CACHE_DIRECTORY, else /var/cache/syncd (user: $XDG_CACHE_HOME/syncd)
        RuntimeDirectory=             # default $RUNTIME_DIRECTORY, else /run/syncd (user: $XDG_RUNTIME_DIR/syncd)
        ControlGroup=syncd            # members may refresh, read records and change data over the control socket

        [Network]
        WatchLinks=yes                # netlink link/address/route events
        Interfaces=                   # space-separated allow-list; empty = every non-loopback interface
        ReachabilityURL=              # probed with HEAD; empty = each failing source's URL
        ReachabilityIntervalSec=30s   # probe period while some source is failing; no probes while all are healthy
        DebounceSec=2s                # network events within this window cause one refresh

        [Refresh]
        IntervalSec=15min             # periodic refresh while healthy
        RandomizedDelaySec=30s        # random extra delay for periodic refreshes (spreads a fleet)

        [Retry]
        InitialDelaySec=1s
        MaxDelaySec=5min
        MaxAttempts=8                 # per refresh cycle; then the source rests until the next trigger

        """

    @Test("the documented syncd.conf defaults block, inline comments included, gives the defaults")
    func specBlock() {
        #expect(ConfigurationFixture.configuration(main: Self.specExample) == .defaults)
    }

    static func lines(_ text: String) -> [INILine.Kind] {
        INILexer.lex(ConfigurationFile(path: "t.conf", text: text)).lines.map(\.kind)
    }

    static func problems(_ text: String) -> [String] {
        INILexer.lex(ConfigurationFile(path: "t.conf", text: text)).problems.map(\.description)
    }

    @Test("comments", arguments: [
        ("Key=value # comment", "value"),
        ("Key=value\t; comment", "value"),
        ("Key=   # only a comment", ""),
        ("Key=a#b", "a#b"),
        ("Key=a;b", "a;b"),
        ("Key=http://h/p#frag", "http://h/p#frag"),
        ("Key=#x", "#x"),
        ("  Key = spaced value  ", "spaced value"),
        ("Key=a=b", "a=b"),
        ("Key=back\\slash", "back\\slash"),
    ])
    func inlineComments(line: String, value: String) {
        #expect(Self.lines(line) == [.assignment(key: "Key", value: value)])
    }

    @Test("whole-line comments and blank lines are skipped")
    func commentLines() {
        #expect(Self.lines("# a\n; b\n   # indented\n\n\t\n[S] # header comment\n") == [.section("S")])
    }

    @Test("line continuation joins lines with one space and reports the first line")
    func continuation() {
        let lexed = INILexer.lex(ConfigurationFile(path: "t.conf", text: "[S]\nKey=one \\\n   two\\\n# skipped\nthree\nNext=1\n"))
        #expect(lexed.lines == [
            INILine(kind: .section("S"), line: 1),
            INILine(kind: .assignment(key: "Key", value: "one two three"), line: 2),
            INILine(kind: .assignment(key: "Next", value: "1"), line: 6),
        ])
        #expect(lexed.problems.isEmpty)
    }

    @Test("a blank line ends a continuation")
    func continuationBlank() {
        #expect(Self.lines("Key=one \\\n\nOther=2") == [
            .assignment(key: "Key", value: "one"), .assignment(key: "Other", value: "2"),
        ])
    }

    @Test("a continuation at the end of the file is reported, the line still used")
    func continuationAtEnd() {
        #expect(Self.problems("[S]\nKey=one \\") == [
            "t.conf:2: line continuation (\"\\\" at the end of the line) at the end of the file; remove the \"\\\"",
        ])
        #expect(Self.lines("[S]\nKey=one \\") == [.section("S"), .assignment(key: "Key", value: "one")])
    }

    @Test("a comment after a continuation backslash hides it")
    func commentAfterBackslash() {
        #expect(Self.lines("Key=one \\ # comment\ntwo") == [.assignment(key: "Key", value: "one two")])
    }

    @Test("CRLF line ends and a byte order mark")
    func crlf() {
        #expect(Self.lines("\u{FEFF}[S]\r\nKey=value\r\n") == [.section("S"), .assignment(key: "Key", value: "value")])
        let configuration = ConfigurationFixture.configuration(main: "[Daemon]\r\nAccount=bob\r\n")
        #expect(configuration?.daemon.account == "bob")
    }

    @Test("line numbers count every physical line")
    func lineNumbers() {
        #expect(ConfigurationFixture.problems(main: "# c\n\n[Daemon]\n\n# c\nAccount=..\n").first?.hasPrefix("syncd.conf:6: ") == true)
    }

    @Test("the same key twice: the later one wins")
    func repeatedKey() {
        #expect(ConfigurationFixture.configuration(main: "[Daemon]\nAccount=a\n[Daemon]\nAccount=b\n")?.daemon.account == "b")
    }

    @Test("problem descriptions")
    func descriptions() {
        let first = ConfigurationProblem(location: SourceLocation(file: "/etc/syncd/syncd.conf", line: 3), message: "bad")
        let whole = ConfigurationProblem(location: SourceLocation(file: "/etc/syncd/x.conf", line: 0), message: "cannot read: Is a directory")
        #expect(first.description == "/etc/syncd/syncd.conf:3: bad")
        #expect(whole.description == "/etc/syncd/x.conf: cannot read: Is a directory")
        #expect(ConfigurationErrors(problems: [first, whole]).description
            == "/etc/syncd/syncd.conf:3: bad\n/etc/syncd/x.conf: cannot read: Is a directory")
    }
}
