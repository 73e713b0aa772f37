import Testing
@testable import SyncCore

/// Helpers shared by the configuration tests.
enum ConfigurationFixture {
    /// Parses `text` as `syncd.conf` (and `dropIns` as drop-ins).
    static func parse(main text: String?, dropIns: [(String, String)] = [], sources: [(String, String)] = [])
        -> Result<Configuration, ConfigurationErrors>
    {
        Configuration.parse(
            main: text.map { ConfigurationFile(path: "syncd.conf", text: $0) },
            dropIns: dropIns.map { ConfigurationFile(path: $0.0, text: $0.1) },
            sources: sources.map { ConfigurationFile(path: $0.0, text: $0.1) })
    }

    /// The problems as `FILE:LINE: message` lines; empty if the parse succeeded.
    static func problems(main text: String?, dropIns: [(String, String)] = [], sources: [(String, String)] = [])
        -> [String]
    {
        switch parse(main: text, dropIns: dropIns, sources: sources) {
        case .success: return []
        case .failure(let errors): return errors.problems.map(\.description)
        }
    }

    /// The configuration, recording an issue if it did not parse.
    static func configuration(
        main text: String?, dropIns: [(String, String)] = [], sources: [(String, String)] = [],
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) -> Configuration? {
        switch parse(main: text, dropIns: dropIns, sources: sources) {
        case .success(let configuration): return configuration
        case .failure(let errors):
            Issue.record("unexpected problems:\n\(errors)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

@Suite("syncd.conf and drop-ins")
struct ConfigurationParsingTests {
    @Test("nothing configured gives the defaults")
    func defaults() {
        #expect(ConfigurationFixture.configuration(main: nil) == Configuration.defaults)
        #expect(ConfigurationFixture.configuration(main: "") == Configuration.defaults)
        #expect(ConfigurationFixture.configuration(main: "# only a comment\n\n; and another\n") == .defaults)
        let defaults = Configuration.defaults
        #expect(defaults.daemon == DaemonSettings(
            account: "default", stateDirectory: nil, cacheDirectory: nil, runtimeDirectory: nil, controlGroup: "syncd"))
        #expect(defaults.network == NetworkSettings(
            watchLinks: true, interfaces: [], reachabilityURL: nil, reachabilityInterval: .seconds(30),
            debounce: .seconds(2)))
        #expect(defaults.refresh == RefreshSettings(interval: .seconds(900), randomizedDelay: .seconds(30)))
        #expect(defaults.retry == RetrySettings(initialDelay: .seconds(1), maxDelay: .seconds(300), maxAttempts: 8))
        #expect(defaults.sources.isEmpty)
    }

    @Test("every key is read")
    func everyKey() {
        let text = """
            [Daemon]
            Account=alice@example.com
            StateDirectory=/srv/state
            CacheDirectory=/srv/cache
            RuntimeDirectory=/run/other
            ControlGroup=sync-users
            ReadGroup=sync-readers
            [Network]
            WatchLinks=no
            Interfaces=eth0  wlan0
            ReachabilityURL=https://example.com/ping
            ReachabilityIntervalSec=1min
            DebounceSec=500ms
            [Refresh]
            IntervalSec=1h
            RandomizedDelaySec=0
            [Retry]
            InitialDelaySec=2s
            MaxDelaySec=10min
            MaxAttempts=3
            """
        let expected = Configuration(
            daemon: DaemonSettings(
                account: "alice@example.com", stateDirectory: "/srv/state", cacheDirectory: "/srv/cache",
                runtimeDirectory: "/run/other", controlGroup: "sync-users", readGroup: "sync-readers"),
            network: NetworkSettings(
                watchLinks: false, interfaces: ["eth0", "wlan0"], reachabilityURL: "https://example.com/ping",
                reachabilityInterval: .seconds(60), debounce: .milliseconds(500)),
            refresh: RefreshSettings(interval: .seconds(3600), randomizedDelay: .zero),
            retry: RetrySettings(initialDelay: .seconds(2), maxDelay: .seconds(600), maxAttempts: 3))
        #expect(ConfigurationFixture.configuration(main: text) == expected)
    }

    @Test("an empty value restores the default")
    func emptyResets() {
        let text = """
            [Daemon]
            Account=alice
            StateDirectory=/srv/state
            Account=
            StateDirectory=
            [Refresh]
            IntervalSec=1h
            IntervalSec=
            """
        #expect(ConfigurationFixture.configuration(main: text) == .defaults)
    }

    @Test("drop-ins override the main file, later drop-ins win")
    func dropInPrecedence() {
        let main = "[Daemon]\nAccount=main\nControlGroup=staff\n[Refresh]\nIntervalSec=1h\n"
        let configuration = ConfigurationFixture.configuration(main: main, dropIns: [
            ("syncd.conf.d/10-a.conf", "[Daemon]\nAccount=first\n[Refresh]\nIntervalSec=\n"),
            ("syncd.conf.d/20-b.conf", "[Daemon]\nAccount=second\n"),
        ])
        #expect(configuration?.daemon.account == "second")
        #expect(configuration?.daemon.controlGroup == "staff")
        #expect(configuration?.refresh.interval == .seconds(900))
    }

    @Test("drop-ins without a main file")
    func dropInsAlone() {
        let configuration = ConfigurationFixture.configuration(
            main: nil, dropIns: [("a.conf", "[Retry]\nMaxAttempts=2\n")])
        #expect(configuration?.retry.maxAttempts == 2)
    }

    @Test("bad values", arguments: [
        ("[Daemon]\nAccount=..", "syncd.conf:2: Account: invalid account \"..\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)"),
        ("[Daemon]\nAccount=a/b", "syncd.conf:2: Account: invalid account \"a/b\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)"),
        ("[Daemon]\nAccount=\(String(repeating: "a", count: 65))", "syncd.conf:2: Account: invalid account \"\(String(repeating: "a", count: 65))\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)"),
        ("[Daemon]\nStateDirectory=var/lib/syncd", "syncd.conf:2: StateDirectory: \"var/lib/syncd\" is not an absolute path; start it with \"/\""),
        ("[Daemon]\nCacheDirectory=cache", "syncd.conf:2: CacheDirectory: \"cache\" is not an absolute path; start it with \"/\""),
        ("[Daemon]\nRuntimeDirectory=~/run", "syncd.conf:2: RuntimeDirectory: \"~/run\" is not an absolute path; start it with \"/\""),
        ("[Daemon]\nControlGroup=1users", "syncd.conf:2: ControlGroup: invalid group name \"1users\": use a letter or \"_\" followed by up to 30 letters, digits, \"_\" or \"-\""),
        ("[Daemon]\nReadGroup=app readers", "syncd.conf:2: ReadGroup: invalid group name \"app readers\": use a letter or \"_\" followed by up to 30 letters, digits, \"_\" or \"-\""),
        ("[Network]\nWatchLinks=sometimes", "syncd.conf:2: WatchLinks: invalid boolean \"sometimes\"; use yes or no"),
        ("[Network]\nInterfaces=eth0 averyveryverylongname", "syncd.conf:2: Interfaces: invalid interface name \"averyveryverylongname\": use at most 15 characters without \"/\", \":\" or spaces, e.g. eth0"),
        ("[Network]\nInterfaces=eth0:1", "syncd.conf:2: Interfaces: invalid interface name \"eth0:1\": use at most 15 characters without \"/\", \":\" or spaces, e.g. eth0"),
        ("[Network]\nReachabilityURL=file:///tmp/x", "syncd.conf:2: ReachabilityURL: unsupported URL scheme \"file\"; use http or https"),
        ("[Network]\nReachabilityIntervalSec=5 parsecs", "syncd.conf:2: ReachabilityIntervalSec: invalid time span \"5 parsecs\": unknown unit \"parsecs\"; use ns, us, ms, s, min, h, d, w, M or y"),
        ("[Network]\nDebounceSec=-1s", "syncd.conf:2: DebounceSec: invalid time span \"-1s\": negative time spans are not allowed"),
        ("[Refresh]\nIntervalSec=0", "syncd.conf:2: IntervalSec: 0 is below the minimum of 10s; use at least 10s"),
        ("[Refresh]\nIntervalSec=1ns", "syncd.conf:2: IntervalSec: 1ns is below the minimum of 10s; use at least 10s"),
        ("[Refresh]\nIntervalSec=9s 999ms", "syncd.conf:2: IntervalSec: 9s 999ms is below the minimum of 10s; use at least 10s"),
        ("[Refresh]\nRandomizedDelaySec=500ms", "syncd.conf:2: RandomizedDelaySec: 500ms is below the minimum of 1s; use 0 to turn it off, or at least 1s"),
        ("[Network]\nReachabilityIntervalSec=1ns", "syncd.conf:2: ReachabilityIntervalSec: 1ns is below the minimum of 100ms; use 0 to turn it off, or at least 100ms"),
        ("[Retry]\nMaxDelaySec=10ms", "syncd.conf:2: MaxDelaySec: 10ms is below the minimum of 100ms; use at least 100ms"),
        ("[Refresh]\nRandomizedDelaySec=soon", "syncd.conf:2: RandomizedDelaySec: invalid time span \"soon\": expected a number at \"soon\""),
        ("[Retry]\nInitialDelaySec=0s", "syncd.conf:2: InitialDelaySec: 0 is below the minimum of 100ms; use at least 100ms"),
        ("[Retry]\nInitialDelaySec=99ms", "syncd.conf:2: InitialDelaySec: 99ms is below the minimum of 100ms; use at least 100ms"),
        ("[Retry]\nMaxAttempts=0", "syncd.conf:2: MaxAttempts: must be at least 1"),
        ("[Retry]\nMaxAttempts=-3", "syncd.conf:2: MaxAttempts: invalid number \"-3\": use a whole number such as 8"),
        ("[Retry]\nMaxAttempts=2.5", "syncd.conf:2: MaxAttempts: invalid number \"2.5\": use a whole number such as 8"),
    ])
    func badValue(text: String, problem: String) {
        #expect(ConfigurationFixture.problems(main: text) == [problem])
    }

    @Test("Interfaces=: a later assignment replaces the list, duplicates collapse, empty clears")
    func interfaces() {
        let replaced = ConfigurationFixture.configuration(main: "[Network]\nInterfaces=eth0\nInterfaces=wlan0 wlan0\tusb0\n")
        #expect(replaced?.network.interfaces == ["wlan0", "usb0"])
        let cleared = ConfigurationFixture.configuration(main: "[Network]\nInterfaces=eth0\nInterfaces=\n")
        #expect(cleared?.network.interfaces == [])
    }

    @Test("zero is allowed where syncd.conf(5) allows it")
    func zeroes() {
        let text = "[Network]\nReachabilityIntervalSec=0\nDebounceSec=0\n[Refresh]\nRandomizedDelaySec=0\n"
        let configuration = ConfigurationFixture.configuration(main: text)
        #expect(configuration?.network.reachabilityInterval == .zero)
        #expect(configuration?.network.debounce == .zero)
        #expect(configuration?.refresh.randomizedDelay == .zero)
    }

    @Test("structure problems", arguments: [
        ("Account=x", "syncd.conf:1: key \"Account\" outside a section; put it below [Daemon]"),
        ("Foo=x", "syncd.conf:1: key \"Foo\" outside a section; put it below a section header such as [Daemon]"),
        ("[Deamon]\nAccount=x", "syncd.conf:1: unknown section [Deamon]; did you mean [Daemon]?"),
        ("[daemon]", "syncd.conf:1: unknown section [daemon]; did you mean [Daemon]?"),
        ("[Whatever]\nFoo=1", "syncd.conf:1: unknown section [Whatever]; use [Daemon], [Network], [Refresh] or [Retry]"),
        ("[Source]\nURL=http://x/", "syncd.conf:1: [Source] does not belong in syncd.conf; put each source in its own file sources.d/NAME.source"),
        ("[Daemon]\naccount=x", "syncd.conf:2: unknown key \"account\" in [Daemon]; did you mean \"Account\"? (keys are case-sensitive)"),
        ("[Daemon]\nAcount=x", "syncd.conf:2: unknown key \"Acount\" in [Daemon]; did you mean \"Account\"? (keys are case-sensitive)"),
        ("[Daemon]\nIntervalSec=1h", "syncd.conf:2: key \"IntervalSec\" belongs in [Refresh], not [Daemon]"),
        ("[Retry]\nBogus=1", "syncd.conf:2: unknown key \"Bogus\" in [Retry]; known keys: InitialDelaySec, MaxDelaySec, MaxAttempts"),
        ("[Daemon]\njust words", "syncd.conf:2: expected \"Key=Value\", a [Section] header or a comment, not a line starting \"just\""),
        ("[Daemon\n", "syncd.conf:1: invalid section header \"[Daemon\"; write it as [Name]"),
        ("[]\n", "syncd.conf:1: invalid section header \"[]\"; write it as [Name]"),
        ("[Daemon]\n=x", "syncd.conf:2: missing key before \"=\""),
        ("[Daemon]\nAcc ount=x", "syncd.conf:2: invalid key \"Acc …\": keys have no spaces"),
    ])
    func structure(text: String, problem: String) {
        #expect(ConfigurationFixture.problems(main: text) == [problem])
    }

    @Test("every problem is reported, sorted by file then line")
    func allProblems() {
        let main = "[Refresh]\nIntervalSec=x\n[Daemon]\nAccount=..\n"
        let dropIn = "[Retry]\nMaxAttempts=0\n[Bad]\n"
        let source = "[Source]\n"
        #expect(ConfigurationFixture.problems(main: main, dropIns: [("d.conf", dropIn)], sources: [("s.source", source)]) == [
            "syncd.conf:2: IntervalSec: invalid time span \"x\": expected a number at \"x\"",
            "syncd.conf:4: Account: invalid account \"..\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)",
            "d.conf:2: MaxAttempts: must be at least 1",
            "d.conf:3: unknown section [Bad]; use [Daemon], [Network], [Refresh] or [Retry]",
            "s.source:1: missing URL=; set it to the collection's http, https or file URL",
        ])
    }

    @Test("keys inside an unknown section are not reported again")
    func unknownSectionKeys() {
        #expect(ConfigurationFixture.problems(main: "[Nope]\nA=1\nB=2\n[Daemon]\nAccount=ok\n") == [
            "syncd.conf:1: unknown section [Nope]; use [Daemon], [Network], [Refresh] or [Retry]",
        ])
    }

    @Test("MaxDelaySec below InitialDelaySec is reported at the later assignment")
    func retryDelays() {
        #expect(ConfigurationFixture.problems(main: "[Retry]\nMaxDelaySec=1s\nInitialDelaySec=10s\n") == [
            "syncd.conf:3: MaxDelaySec=1s is shorter than InitialDelaySec=10s; raise MaxDelaySec or lower InitialDelaySec",
        ])
        #expect(ConfigurationFixture.problems(main: "[Retry]\nMaxDelaySec=30s\n") == [])
        #expect(ConfigurationFixture.problems(main: "[Retry]\nMaxDelaySec=500ms\n") == [
            "syncd.conf:2: MaxDelaySec=500ms is shorter than InitialDelaySec=1s; raise MaxDelaySec or lower InitialDelaySec",
        ])
        // Checked after merging: a drop-in can fix, or break, the main file.
        #expect(ConfigurationFixture.problems(
            main: "[Retry]\nInitialDelaySec=10min\n", dropIns: [("a.conf", "[Retry]\nMaxDelaySec=1h\n")]) == [])
        #expect(ConfigurationFixture.problems(
            main: "[Retry]\nMaxDelaySec=1min\n", dropIns: [("a.conf", "\n[Retry]\nInitialDelaySec=2min\n")]) == [
            "a.conf:3: MaxDelaySec=1min is shorter than InitialDelaySec=2min; raise MaxDelaySec or lower InitialDelaySec",
        ])
        #expect(ConfigurationFixture.problems(
            main: "[Retry]\nInitialDelaySec=10min\nMaxDelaySec=1h\n", dropIns: [("a.conf", "[Retry]\nMaxDelaySec=\n")]) == [
            "a.conf:2: MaxDelaySec=5min is shorter than InitialDelaySec=10min; raise MaxDelaySec or lower InitialDelaySec",
        ])
    }
}
