import Foundation
import SyncCore
import Testing
import SyncDaemon
@testable import SyncSystem

/// The journal entry syncd sends (sd_journal_sendv) and the stderr line it falls back to.
@Suite("Logger")
struct LoggerTests {
    @Test func journalFieldsCarrySourceMessageIDAndLocation() {
        let fields = Logger.journalFields(
            priority: .error, message: "/etc/syncd/sources.d/posts.source:3: URL: missing", source: "posts",
            messageID: .configurationRejected, location: SourceLocation(file: "/etc/syncd/sources.d/posts.source", line: 3))
        #expect(fields == [
            "MESSAGE=/etc/syncd/sources.d/posts.source:3: URL: missing", "PRIORITY=3", "SYSLOG_IDENTIFIER=syncd",
            "MESSAGE_ID=00411ed163d948e1b0d9ddbd73b6a8ea", "SYNCD_SOURCE=posts",
            "CONFIG_FILE=/etc/syncd/sources.d/posts.source", "CONFIG_LINE=3",
        ])
        let plain = Logger.journalFields(priority: .notice, message: "Started", source: nil, messageID: nil, location: nil)
        #expect(plain == ["MESSAGE=Started", "PRIORITY=5", "SYSLOG_IDENTIFIER=syncd"])
        // A whole-file problem has no line.
        let file = Logger.journalFields(priority: .error, message: "m", source: nil, messageID: nil,
                                        location: SourceLocation(file: "/etc/syncd/syncd.conf", line: 0))
        #expect(file.last == "CONFIG_FILE=/etc/syncd/syncd.conf")
    }

    @Test func messageIDsAre128BitHex() {
        for id in LogMessageID.allCases {
            #expect(id.rawValue.count == 32 && id.rawValue.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
        #expect(Set(LogMessageID.allCases.map(\.rawValue)).count == LogMessageID.allCases.count)
    }

    @Test func streamLines() {
        #expect(Logger.streamLine(priority: .error, message: "bad", journal: true) == "<3>bad\n")
        #expect(Logger.streamLine(priority: .error, message: "bad", journal: false) == "error: bad\n")
        #expect(Logger.streamLine(priority: .warning, message: "hm", journal: false) == "warning: hm\n")
        #expect(Logger.streamLine(priority: .info, message: "ok", journal: false) == "ok\n")
    }

    @Test func oneMessageOneLineWithControlBytesEscaped() {
        #expect(Logger.singleLine("a\nb\r\nc") == "a b c")
        #expect(Logger.singleLine("nul\u{0} esc\u{1B}[2J tab\t") == "nul\\x00 esc\\x1b[2J tab\t")
        // C1: CSI, OSC … ST, as a server may send them in an error body or a record ID.
        #expect(Logger.singleLine("HTTP 500: \u{9B}2J \u{9D}0;owned\u{9C} c\nFAKE LINE")
                == "HTTP 500: \\xc2\\x9b2J \\xc2\\x9d0;owned\\xc2\\x9c c FAKE LINE")
    }

    @Test(arguments: [LogPriority.error, .warning, .notice, .info, .debug])
    func aSourcesMessagesCarryItsFieldAtEveryPriority(priority: LogPriority) {
        let logger = Logger(journal: true, threshold: .debug).forSource("posts")
        #expect(logger.output(priority, "synced 3 records (listing changed)") == .journal([
            "MESSAGE=posts: synced 3 records (listing changed)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=syncd",
            "SYNCD_SOURCE=posts",
        ]))
        // On a plain stderr the line is the same text; there are no fields to carry.
        let plain = Logger(journal: false, threshold: .debug).forSource("posts")
        let prefix = priority == .error ? "error: " : priority == .warning ? "warning: " : ""
        #expect(plain.output(priority, "not modified (HTTP 304)") == .stream(prefix + "posts: not modified (HTTP 304)\n"))
    }

    @Test func aSourcesMessageIDAndEscapedNameGoWithItsField() {
        let logger = Logger(journal: true, threshold: .info).forSource("po\u{1B}sts")
        #expect(logger.output(.warning, "refresh failed", messageID: .refreshFailed) == .journal([
            "MESSAGE=po\\x1bsts: refresh failed", "PRIORITY=4", "SYSLOG_IDENTIFIER=syncd",
            "MESSAGE_ID=8a704ae683b94d20b280c348ce02a23f", "SYNCD_SOURCE=po\\x1bsts",
        ]))
        // Above the threshold nothing is sent.
        #expect(logger.output(.debug, "refreshing http://h/posts") == nil)
    }

    /// The temporary cache file a killed run left behind is filed under the source it was written for.
    @Test(arguments: [(".posts.json.tmp-123-456", "posts"), (".a.json.tmp-.json.tmp-1-2", "a.json.tmp-"),
                      ("posts.json.tmp-1-2", nil), (".json.tmp-1-2", nil), (".posts.json", nil)] as [(String, String?)])
    func aLeftoverTemporaryNamesItsSource(name: String, source: String?) {
        #expect(CacheFileKeeper.source(ofTemporary: name) == source)
    }

    /// Every message about a source goes through `Logger.forSource`: a call that writes `NAME: ` itself (and
    /// so may lack `SYNCD_SOURCE=`) is found in the daemon's sources here.
    @Test func noMessageAboutASourceBypassesItsLogger() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let pattern = try Regex(#"\b(logger|log)\??\.(error|warning|notice|info|debug|log)\((\.[a-z]+, )?"\\\([^()]*\): "#)
        var scanned = 0
        var offenders: [String] = []
        let files = try #require(FileManager.default.enumerator(atPath: root.path))
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            scanned += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(pattern) {
                offenders.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(scanned > 50)
        #expect(offenders == [])
        // The pattern finds what it is meant to find.
        #expect(#"logger.info("\(source.name): synced")"#.contains(pattern))
        #expect(#"logger.log(.info, "\(name): new source")"#.contains(pattern))
        #expect(!#"logger.forSource(source.name).info("synced")"#.contains(pattern))
    }
}
