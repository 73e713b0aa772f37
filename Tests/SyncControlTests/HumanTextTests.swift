import SyncCore
import Testing
@testable import SyncControl

/// syncctl's human output escapes what a server wrote (docs/syncctl.1.md, OUTPUT): an escape sequence must not
/// retitle, clear or colour the terminal.
@Suite("Printable output")
struct HumanTextTests {
    @Test(arguments: [
        ("title \u{1B}]2;owned\u{07} clear \u{1B}[2J", "title \\x1b]2;owned\\x07 clear \\x1b[2J"),
        ("two\nlines\r", "two\nlines\\x0d"),
        ("tab\there, DEL\u{7F}", "tab\\x09here, DEL\\x7f"),
        ("plain text, ünïcode ●", "plain text, ünïcode ●"),
    ])
    func controlBytesButLineBreaksAreEscaped(_ text: String, _ shown: String) {
        #expect(HumanFormat.printable(text) == shown)
    }

    @Test func aStatusBlockShowsTheServersEscapeSequencesEscaped() {
        let formatter = StatusFormatter(now: Timestamp(secondsSinceEpoch: 1_795_000_000), color: false, noLegend: true)
        let source = SourceStatus(name: "posts", url: "http://h/posts", state: .backoff, records: 1, pending: 0, conflicts: 0,
                                  warnings: ["odd \u{1B}[31mred"], lastSuccess: nil, lastAttempt: nil,
                                  lastError: "HTTP 500 from http://h/posts: \u{1B}]2;pwned\u{07}\u{1B}[2J", stale: true, attempt: 1, nextAttempt: nil)
        let daemon = DaemonStatus(version: "1", account: "default", online: true, links: "routable", reachable: nil, uptimeSec: 1)
        let text = formatter.format(ManagerStatus(daemon: daemon, sources: [source]))
        #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"))
        #expect(text.contains("HTTP 500 from http://h/posts: \\x1b]2;pwned\\x07\\x1b[2J"))
        #expect(text.contains("warning: odd \\x1b[31mred"))
    }

    @Test func tableCellsAreEscaped() {
        let text = Table.render(header: ["ID", "LAST ERROR"], rows: [["a\u{1B}[2Jb", "x\u{07}"]], legend: false, noun: ("row", "rows"))
        #expect(text.hasPrefix("a\\x1b[2Jb  x\\x07\n"))
    }
}
