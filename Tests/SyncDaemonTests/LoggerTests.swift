import SyncCore
import Testing
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
    }
}
