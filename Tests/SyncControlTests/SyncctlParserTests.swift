import Glibc
import Testing
import SyncCore
@testable import SyncControl

@Suite("syncctl parser")
struct SyncctlParserTests {
    let commands = syncctlCommands.map { $0.configuration }

    @Test func parsesGlobalsAnywhere() throws {
        let invocation = try parseCommandLine(["--json=pretty", "list", "posts", "--socket", "/tmp/s", "--no-legend"], commands: commands)
        #expect(invocation.command == "list")
        #expect(invocation.arguments.positionals == ["posts"])
        #expect(invocation.globals.json == .pretty)
        #expect(invocation.globals.socket == "/tmp/s")
        #expect(invocation.globals.noLegend)
        #expect(try parseCommandLine(["status", "--json"], commands: commands).globals.json == .short)
        #expect(try parseCommandLine(["status", "--json=short"], commands: commands).globals.json == .short)
    }

    @Test func statusTakesAnyNumberOfSources() throws {
        #expect(try parseCommandLine(["status"], commands: commands).arguments.positionals == [])
        let one = try parseCommandLine(["status", "posts"], commands: commands)
        #expect(one.command == "status" && one.arguments.positionals == ["posts"])
        let several = try parseCommandLine(["status", "posts", "--json", "users", "--", "-odd"], commands: commands)
        #expect(several.arguments.positionals == ["posts", "users", "-odd"])
        #expect(several.globals.json == .short)
        #expect(StatusCommand(arguments: several.arguments).sources == ["posts", "users", "-odd"])
        // Only the last positional may repeat: the others still take one argument each.
        #expect(PositionalSpec("SOURCE", optional: true, repeating: true, help: "").synopsis == "[SOURCE...]")
        #expect(PositionalSpec("SOURCE", help: "").synopsis == "SOURCE")
    }

    @Test func parsesCommandOptions() throws {
        let resolve = try parseCommandLine(["resolve", "posts", "7", "--keep=remote"], commands: commands)
        #expect(resolve.arguments.values["keep"] == "remote")
        let refresh = try parseCommandLine(["refresh", "--wait"], commands: commands)
        #expect(refresh.arguments.flags == ["wait"] && refresh.arguments.positionals.isEmpty)
        let put = try parseCommandLine(["put", "posts", "-"], commands: commands)
        #expect(put.arguments.positionals == ["posts", "-"])
        let dashed = try parseCommandLine(["get", "posts", "--", "-5"], commands: commands)
        #expect(dashed.arguments.positionals == ["posts", "-5"])
    }

    @Test(arguments: [
        (["bogus"], "unknown command 'bogus'", nil),
        (["list"], "missing argument SOURCE", "list"),
        (["get", "posts"], "missing argument ID", "get"),
        (["list", "posts", "extra"], "unexpected argument 'extra'", "list"),
        (["refresh", "posts", "users"], "unexpected argument 'users'", "refresh"),
        (["status", "--wait"], "unknown option '--wait'", "status"),
        (["--frobnicate"], "unknown option '--frobnicate'", nil),
        (["status", "--json=long"], "invalid --json mode 'long' (expected short, pretty or off; --json=help lists them)", "status"),
        (["list", "posts", "--socket"], "option '--socket' needs a value", "list"),
        (["status", "--timeout=soon"], "invalid --timeout 'soon' (expected seconds, e.g. 10 or 2.5; 0 waits for ever)", "status"),
        (["status", "--timeout=-1"], "invalid --timeout '-1' (expected seconds, e.g. 10 or 2.5; 0 waits for ever)", "status"),
        (["help", "bogus"], "unknown command 'bogus'", "help"),
        (["refresh", "--wait=yes"], "option '--wait' takes no value", "refresh"),
        (["resolve", "posts", "1"], "missing option --keep local|remote", "resolve"),
        (["resolve", "posts", "1", "--keep", "both"], "invalid --keep 'both' (expected local or remote)", "resolve"),
        (["outbox", "--retry", "x"], "invalid outbox entry 'x' (expected a number from the SEQ column)", "outbox"),
        (["outbox", "--retry", "1", "--drop", "2"], "--retry and --drop cannot be combined", "outbox"),
    ] as [([String], String, String?)])
    func usageErrorsExitTwoWithAHint(arguments: [String], message: String, command: String?) {
        let output = CapturedOutput()
        let status = Syncctl.run(arguments: arguments, environment: [:], output: output.terminal, readFile: { _ in [] })
        #expect(status == 2)
        let hint = command.map { "syncctl \($0) --help" } ?? "syncctl --help"
        #expect(output.stderr == "syncctl: \(message)\nTry '\(hint)' for more information.\n")
        #expect(output.stdout.isEmpty)
    }

    @Test func helpPerCommand() {
        for configuration in commands {
            let output = CapturedOutput()
            #expect(Syncctl.run(arguments: [configuration.name, "--help"], environment: [:], output: output.terminal, readFile: { _ in [] }) == 0)
            #expect(output.stdout.hasPrefix("Usage: \(configuration.usage)\n\n\(configuration.abstract)\n"))
            #expect(output.stdout.contains("Global options:"))
            for option in configuration.options { #expect(output.stdout.contains("--" + option.name)) }
        }
        let resolve = ResolveCommand.configuration.help
        #expect(resolve.hasPrefix("Usage: syncctl resolve SOURCE ID --keep local|remote\n"))
        #expect(StatusCommand.configuration.usage == "syncctl status [SOURCE...] [--json]")
        #expect(RefreshCommand.configuration.usage == "syncctl refresh [SOURCE] [--wait] [--full] [--json]")
        let output = CapturedOutput()
        #expect(Syncctl.run(arguments: ["-h"], environment: [:], output: output.terminal, readFile: { _ in [] }) == 0)
        for configuration in commands { #expect(output.stdout.contains("  " + configuration.name + " ")) }
        let version = CapturedOutput()
        #expect(Syncctl.run(arguments: ["--version"], environment: [:], output: version.terminal, readFile: { _ in [] }) == 0)
        #expect(version.stdout == "syncctl 1.0.0\n")
    }

    @Test func socketPathPrecedence() throws {
        var globals = GlobalOptions()
        #expect(try Syncctl.socketPath(globals: globals, environment: [:]) == "/run/syncd/io.syncd.Manager")
        globals.user = true
        #expect(try Syncctl.socketPath(globals: globals, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/syncd/io.syncd.Manager")
        #expect(try Syncctl.socketPath(globals: globals, environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "SYNCD_SOCKET": "/e"]) == "/e")
        globals.socket = "/s"
        #expect(try Syncctl.socketPath(globals: globals, environment: ["SYNCD_SOCKET": "/e"]) == "/s")
    }

    @Test func unreachableDaemonExitsThree() {
        let output = CapturedOutput()
        let status = Syncctl.run(arguments: ["status", "--socket", "/nonexistent/sock"], environment: [:], output: output.terminal, readFile: { _ in [] })
        #expect(status == 3)
        #expect(output.stderr == "syncctl: cannot connect to /nonexistent/sock: No such file or directory\n"
            + "Is syncd running? Start it with 'systemctl start syncd' (or 'systemctl --user start syncd').\n")
    }

    @Test func userModeWithoutRuntimeDirectoryIsUnreachable() {
        let output = CapturedOutput()
        #expect(Syncctl.run(arguments: ["--user", "status"], environment: [:], output: output.terminal, readFile: { _ in [] }) == 3)
        #expect(output.stderr == "syncctl: --user needs $XDG_RUNTIME_DIR to find the user daemon's socket (or pass --socket PATH)\n")
    }

    @Test func connectionFailuresSayWhatToDo() {
        let (denied, deniedStatus) = Syncctl.describe(.client(.connect(path: "/run/syncd/io.syncd.Manager", code: EACCES)), command: "status")
        #expect(deniedStatus == .unreachable)
        #expect(denied == "syncctl: cannot connect to /run/syncd/io.syncd.Manager: Permission denied\n"
            + "The socket or a directory above it is closed to you; check their permissions (syncd makes the socket 0666).\n")
        let (gone, goneStatus) = Syncctl.describe(.client(.disconnected), command: "refresh")
        #expect(goneStatus == .unreachable)
        #expect(gone == "syncctl: syncd closed the connection before answering; did it stop or restart? See 'journalctl -u syncd'.\n")
    }

    @Test(arguments: [
        (["SYSTEMD_COLORS": "0"], true, false), (["SYSTEMD_COLORS": "yes", "NO_COLOR": "1"], false, true),
        (["NO_COLOR": ""], true, false), (["TERM": "dumb"], true, false), ([:], true, true), ([:], false, false),
        (["SYSTEMD_COLORS": "256", "TERM": "dumb"], false, true),
    ] as [([String: String], Bool, Bool)])
    func colourRules(environment: [String: String], isTerminal: Bool, expected: Bool) {
        #expect(TerminalOutput.shouldColor(environment: environment, isTerminal: isTerminal) == expected)
    }

    @Test func statusReadsLikeSystemctl() {
        let now = Timestamp(rfc3339: "2026-11-29T10:00:12Z")!
        var stale = FakeStatus.source
        stale.name = "comments"
        stale.state = .backoff
        stale.stale = true
        stale.lastError = "HTTP 503"
        stale.nextAttempt = "2026-11-29T10:00:20Z"
        stale.pending = 2
        stale.conflicts = 1
        let status = ManagerStatus(daemon: FakeStatus.daemon, sources: [FakeStatus.source, stale])
        let text = StatusFormatter(now: now, color: false, noLegend: false).format(status)
        let since = HumanFormat.localClock(Timestamp(rfc3339: "2026-11-29T10:00:00Z")!)
        #expect(text == """
            ● syncd — online (links: routable, reachable: yes), account default, up 12s

            ● posts     idle     2 records  synced 12s ago
                http://localhost:3000/posts

            ● comments  backoff  2 records  synced 12s ago
                stale since \(since) (HTTP 503, retry in 8s)
                2 pending, 1 conflict
                http://localhost:3000/posts

            """)
        let bare = StatusFormatter(now: now, color: true, noLegend: true).format(ManagerStatus(daemon: FakeStatus.daemon, sources: [FakeStatus.source]))
        #expect(bare == "\u{1B}[0;1;32m●\u{1B}[0m posts  idle  2 records  synced 12s ago\n    http://localhost:3000/posts\n")
    }

    @Test func humanFormats() {
        #expect(HumanFormat.count(12_000) == "12,000")
        #expect(HumanFormat.count(999) == "999")
        #expect(HumanFormat.bytes(1_234_567) == "1.2 MB")
        #expect(HumanFormat.bytes(512) == "512 B")
        #expect(HumanFormat.span(seconds: 3725) == "1h 2min")
        let now = Timestamp(secondsSinceEpoch: 100_000)
        #expect(HumanFormat.relative(Timestamp(secondsSinceEpoch: 100_000 - 180), now: now) == "3min ago")
        #expect(HumanFormat.relative(Timestamp(secondsSinceEpoch: 100_000 - 7300), now: now) == "2h ago")
        #expect(RefreshCommand.progressLine(RefreshProgress(source: "posts", pages: 3, bytes: 1_200_000, records: 12_000))
            == "posts: 3 pages, 1.2 MB, 12,000 records")
    }
}

enum FakeStatus {
    static let daemon = DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable", reachable: true, uptimeSec: 12)
    static let source = SourceStatus(name: "posts", url: "http://localhost:3000/posts", state: .idle, records: 2, pending: 0,
                                     conflicts: 0, lastSuccess: "2026-11-29T10:00:00Z", lastAttempt: "2026-11-29T10:00:00Z",
                                     lastError: nil, stale: false, attempt: 0, nextAttempt: nil)
}

/// Captures what a command writes.
final class CapturedOutput: Sendable {
    private let buffers = Mutex<(String, String)>(("", ""))
    var stdout: String { buffers.withLock { $0.0 } }
    var stderr: String { buffers.withLock { $0.1 } }
    var terminal: TerminalOutput {
        TerminalOutput(isTerminal: false, color: false, write: { text in self.buffers.withLock { $0.0 += text } },
                       writeError: { text in self.buffers.withLock { $0.1 += text } })
    }
}

import Synchronization
