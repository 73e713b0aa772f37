import SyncCore
import Testing
@testable import SyncControl

/// syncctl's human output escapes what a server wrote (docs/syncctl.1.md, OUTPUT): an escape sequence must not
/// retitle, clear or colour the terminal.
@Suite("Printable output")
struct HumanTextTests {
    @Test(arguments: [
        ("title \u{1B}]2;owned\u{07} clear \u{1B}[2J", "title \\x1b]2;owned\\x07 clear \\x1b[2J"),
        // One line: a line break in an ID or a cell would make up a line of its own.
        ("two\nlines\r", "two\\x0alines\\x0d"),
        ("c\nFAKE LINE", "c\\x0aFAKE LINE"),
        // C1 controls (U+0080–U+009F, CSI U+009B, OSC U+009D, ST U+009C) as their UTF-8 bytes, like C0 and DEL.
        ("\u{9B}2J", "\\xc2\\x9b2J"),
        ("\u{9D}0;owned\u{9C}", "\\xc2\\x9d0;owned\\xc2\\x9c"),
        ("tab\there, DEL\u{7F}", "tab\\x09here, DEL\\x7f"),
        ("plain text, ünïcode ●", "plain text, ünïcode ●"),
    ])
    func controlCharactersAreEscaped(_ text: String, _ shown: String) {
        #expect(HumanFormat.printable(text) == shown)
    }

    /// A whole message keeps its lines; what is on each is escaped.
    @Test func aMessageOfSeveralLinesKeepsThemAndEscapesTheRest() {
        #expect(HumanFormat.printableLines("syncctl: a \u{9B}2J\nsecond\u{1B}[K line\n")
                == "syncctl: a \\xc2\\x9b2J\nsecond\\x1b[K line\n")
    }

    /// Failures of `refresh --wait` are one line each, whatever the reason quotes.
    @Test func eachFailureIsOneLine() {
        let (message, _) = Syncctl.describe(.failures(["refresh of posts failed: HTTP 500: a\nFAKE LINE \u{9B}2J"]), command: "refresh")
        #expect(HumanFormat.printableLines(message) == "syncctl: refresh of posts failed: HTTP 500: a\\x0aFAKE LINE \\xc2\\x9b2J\n")
    }

    /// JSON for people (`get`, `list`'s preview, `conflicts`): DEL and C1 as JSON escapes, the same value.
    @Test func jsonForPeopleEscapesWhatJSONLeavesRaw() throws {
        let record: JSONValue = ["id": "c\u{9B}2J", "body": "\u{9D}0;owned\u{9C} \u{7F} é \u{1B}"]
        let shown = HumanFormat.printableJSON(record.serialized())
        #expect(shown == #"{"id":"c\u009B2J","body":"\u009D0;owned\u009C \u007F é \u001B"}"#)
        #expect(try JSONValue(parsing: Array(shown.utf8)) == record)
        #expect(HumanFormat.printableJSON("plain é") == "plain é")
    }

    /// The reviewer's IDs: a C1 CSI and a line break, in the ID column and the preview.
    @Test func listsTableKeepsOneLinePerRecord() {
        let records: [JSONValue] = [["id": "c\nFAKE LINE", "t": "x"], ["id": "\u{9B}2J", "t": "\u{9B}2J"]]
        let table = ListCommand.table(records, legend: false)
        #expect(table.split(separator: "\n").count == 2)
        #expect(table == "c\\x0aFAKE LINE  {\"id\":\"c\\nFAKE LINE\",\"t\":\"x\"}\n"
                + "\\xc2\\x9b2J      {\"id\":\"\\u009B2J\",\"t\":\"\\u009B2J\"}\n")
        #expect(!table.unicodeScalars.contains { $0.value == 0x9B })
    }

    @Test func conflictsShowTheMembersEscaped() {
        let conflict = ConflictEntry(source: "posts", id: "c\u{9B}2J", local: JSONObject([("title", .string("\u{9B}2J mine"))]),
                                     remote: JSONObject([("title", .string("\u{9D}0;x\u{9C}"))]), localVersion: nil,
                                     remoteVersion: nil, detectedAt: "2026-01-01T00:00:00Z")
        let text = ConflictsCommand.sideBySide(conflict)
        #expect(!text.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || ($0.value < 0x20 && $0 != "\n") })
        #expect(text.hasPrefix("posts c\\xc2\\x9b2J:\n"))
        #expect(text.contains(#""\u009B2J mine""#) && text.contains(#""\u009D0;x\u009C""#))
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
