import Glibc
import Testing
import SyncCore
@testable import SyncControl

/// What an admin sees: timeouts, bare `syncctl`, `help`, `--json` modes, failed sources and rejected
/// reloads in `status`, dates on times that are not today, ASCII in a non-UTF-8 locale.
@Suite("syncctl for admins")
struct SyncctlAdminTests {
    let commands = syncctlCommands.map { $0.configuration }

    @Test func timeoutDefaultsTo25SecondsExceptForWaitingCommands() throws {
        let plain = try parseCommandLine(["status"], commands: commands).globals
        #expect(plain.callTimeout(waitsAsLongAsNeeded: false) == 25)
        #expect(plain.callTimeout(waitsAsLongAsNeeded: true) == nil)
        let explicit = try parseCommandLine(["watch", "--timeout=2.5"], commands: commands).globals
        #expect(explicit.callTimeout(waitsAsLongAsNeeded: true) == 2.5)
        let never = try parseCommandLine(["--timeout", "0", "status"], commands: commands).globals
        #expect(never.callTimeout(waitsAsLongAsNeeded: false) == nil)
    }

    @Test func jsonModes() throws {
        #expect(try parseCommandLine(["status", "--json=pretty", "--json=off"], commands: commands).globals.json == nil)
        let output = CapturedOutput()
        #expect(Syncctl.run(arguments: ["--json=help"], environment: [:], output: output.terminal, readFile: { _ in [] }) == 0)
        #expect(output.stdout == "short\npretty\noff\n")
    }

    @Test func helpCommandAndBareSyncctl() {
        let all = CapturedOutput()
        #expect(Syncctl.run(arguments: ["help"], environment: [:], output: all.terminal, readFile: { _ in [] }) == 0)
        #expect(all.stdout == Syncctl.help)
        let one = CapturedOutput()
        #expect(Syncctl.run(arguments: ["help", "refresh"], environment: [:], output: one.terminal, readFile: { _ in [] }) == 0)
        #expect(one.stdout == RefreshCommand.configuration.help)
        // No command: the status, so without a daemon the status command's own failure (exit 3), not a usage error.
        let bare = CapturedOutput()
        let status = Syncctl.run(arguments: ["--socket", "/nonexistent/socket"], environment: [:], output: bare.terminal,
                                 readFile: { _ in [] })
        #expect(status == 3)
        #expect(bare.stderr.hasPrefix("syncctl: cannot connect to /nonexistent/socket: No such file or directory\n"))
    }

    @Test func timeoutMessageSaysWhatToDo() {
        let (message, status) = Syncctl.describe(.client(.timedOut(path: "/run/syncd/io.syncd.Manager", seconds: 25)), command: "status")
        #expect(status == .unreachable)
        #expect(message == "syncctl: syncd did not answer within 25s (/run/syncd/io.syncd.Manager); it may be busy or hung. "
                + "See 'journalctl -u syncd', or wait longer with --timeout=SEC (0 waits for ever).\n")
    }

    @Test func aStoppingDaemonIsNotAnOldOneNorAStorageFailure() {
        let stopping = ManagerError.stopping
        let watch = Syncctl.describe(.client(.remote(name: stopping.varlinkName, parameters: stopping.varlinkParameters)), command: "watch")
        #expect(watch.0 == "syncctl: syncd stopped; the watch ended\n")
        #expect(watch.1 == .unreachable)
        let refresh = Syncctl.describe(.client(.remote(name: stopping.varlinkName, parameters: stopping.varlinkParameters)), command: "refresh")
        #expect(refresh.0 == "syncctl: syncd is stopping; the refresh was not completed\n")
        #expect(refresh.1 == .unreachable)
        let status = Syncctl.describe(.client(.remote(name: stopping.varlinkName, parameters: [:])), command: "status")
        #expect(status.0 == "syncctl: syncd is stopping; ask again once it runs\n")
        let cancelled = ManagerError.cancelled(reason: "the refresh was cancelled by a logout")
        let logout = Syncctl.describe(.client(.remote(name: cancelled.varlinkName, parameters: cancelled.varlinkParameters)), command: "refresh")
        #expect(logout.0 == "syncctl: the refresh was cancelled by a logout\n")
        #expect(logout.1 == .failure)
    }

    @Test func statusShowsFailedSourcesAndARejectedReload() {
        let now = Timestamp(rfc3339: "2026-11-29T10:00:12Z")!
        var daemon = FakeStatus.daemon
        daemon.reloadRejected = "/etc/syncd/syncd.conf:3: IntervalSec: invalid time span \"soon\": expected a number at \"soon\""
        let failed = FailedSourceStatus(name: "users", file: "/etc/syncd/sources.d/users.source",
                                        problem: "/etc/syncd/sources.d/users.source:2: URL: unsupported URL scheme \"ftp\"; use http, https or file")
        let status = ManagerStatus(daemon: daemon, sources: [FakeStatus.source], failed: [failed])
        let text = StatusFormatter(now: now, color: false, noLegend: false).format(status)
        #expect(text == """
            ● syncd — online (links: routable, reachable: yes), account default, up 12s
                reload rejected, previous configuration kept: /etc/syncd/syncd.conf:3: IntervalSec: invalid time span "soon": expected a number at "soon"

            ● posts  idle  2 records  synced 12s ago
                http://localhost:3000/posts

            × users  failed: /etc/syncd/sources.d/users.source:2: URL: unsupported URL scheme "ftp"; use http, https or file

            """)
        let ascii = StatusFormatter(now: now, color: false, noLegend: false, unicode: false).format(status)
        #expect(ascii.hasPrefix("* syncd - online"))
        #expect(ascii.contains("\n* posts  idle"))
        #expect(ascii.contains("\nx users  failed: "))
        #expect(ascii.unicodeScalars.allSatisfy { $0.isASCII })
    }

    @Test func timesNotTodayCarryTheDate() {
        setenv("TZ", "UTC", 1)
        tzset()
        let now = Timestamp(rfc3339: "2026-11-29T10:00:12Z")!
        #expect(HumanFormat.localTime(Timestamp(rfc3339: "2026-11-29T08:05:00Z")!, now: now) == "08:05")
        #expect(HumanFormat.localTime(Timestamp(rfc3339: "2026-11-28T15:12:00Z")!, now: now) == "2026-11-28 15:12")
        #expect(HumanFormat.localTime(Timestamp(rfc3339: "2025-11-29T15:12:00Z")!, now: now) == "2025-11-29 15:12")
    }

    @Test("UTF-8 locale detection follows systemd", arguments: [
        ([:], "C", "ANSI_X3.4-1968", true),               // nobody asked for a locale: UTF-8 assumed
        (["LANG": "C"], "C", "ANSI_X3.4-1968", false),    // asked for C: ASCII
        (["LC_ALL": "POSIX"], "POSIX", "ANSI_X3.4-1968", false),
        (["LANG": "C.UTF-8"], "C.UTF-8", "UTF-8", true),
        (["LANG": "en_US.ISO-8859-1"], "en_US.ISO-8859-1", "ISO-8859-1", false),
        (["LANG": "C", "SYSTEMD_UTF8": "1"], "C", "ANSI_X3.4-1968", true),
    ] as [([String: String], String, String, Bool)])
    func utf8Locale(environment: [String: String], locale: String, codeset: String, expected: Bool) {
        #expect(TerminalOutput.isUTF8Locale(environment: environment, locale: locale, codeset: codeset) == expected)
    }
}
