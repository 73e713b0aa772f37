import SyncCore
import SyncStore
import Testing
@testable import SyncDaemon

/// What `GetStatus` shows privileged callers and everyone else (docs/control-api.md, "Secrets"), and how a
/// refresh failure keeps the server's words apart from its summary.
@Suite("Status audience")
struct StatusAudienceTests {
    static let token = "tok-9f8e7d6c5b4a"

    static func rig(url: String) -> BoardRig {
        var rig = BoardRig(["posts"])
        rig.sources = [SourceConfiguration(name: "posts", url: url, location: SourceLocation(file: "posts.source", line: 1))]
        rig.board.setSources(rig.sources)
        return rig
    }

    static func source(_ reply: String) throws -> JSONObject {
        let object = try #require(try JSONValue(parsing: Array(reply.utf8)).objectValue)
        return try #require(object["sources"]?.arrayValue?.first?.objectValue)
    }

    @Test func unprivilegedCallersGetNoExcerptAndNoQueryValues() throws {
        var rig = Self.rig(url: "http://127.0.0.1:9/posts?api_key=K3y-abcdef&page=1")
        var state = SourceState(name: "posts")
        state.lastError = "HTTP 500 from http://127.0.0.1:9/posts?api_key=[redacted]&page=1: Traceback: database is locked"
        state.lastErrorPublic = "HTTP 500 from http://127.0.0.1:9/posts?api_key=[redacted]&page=1"
        rig.board.states["posts"] = state
        let everyone = String(decoding: rig.board.reply(core: &rig.core, sources: rig.sources, daemon: BoardRig.daemon, failed: [],
                                                        now: rig.now, wall: rig.wall, audience: .everyone), as: UTF8.self)
        let privileged = rig.reply()
        let shown = try Self.source(everyone)
        #expect(shown["lastError"]?.stringValue == "HTTP 500 from http://127.0.0.1:9/posts?api_key=[redacted]&page=[redacted]")
        #expect(shown["url"]?.stringValue == "http://127.0.0.1:9/posts?api_key=[redacted]&page=[redacted]")
        let full = try Self.source(privileged)
        #expect(full["lastError"]?.stringValue == state.lastError)
        #expect(full["url"]?.stringValue == "http://127.0.0.1:9/posts?api_key=[redacted]&page=1")
        // Each audience keeps its own serialised objects: asking again gives the same bytes.
        #expect(rig.reply() == privileged)
        #expect(!everyone.contains("K3y-abcdef") && !privileged.contains("K3y-abcdef"))
    }

    @Test func aReasonStoredByAnOlderSyncdIsWithheldFromUnprivilegedCallers() throws {
        var rig = Self.rig(url: "http://127.0.0.1:9/posts")
        var state = SourceState(name: "posts")
        state.lastError = "HTTP 401 from http://127.0.0.1:9/posts: check the credentials (BearerTokenCredential=): bad token xyz"
        rig.board.states["posts"] = state
        let everyone = String(decoding: rig.board.reply(core: &rig.core, sources: rig.sources, daemon: BoardRig.daemon, failed: [],
                                                        now: rig.now, wall: rig.wall, audience: .everyone), as: UTF8.self)
        #expect(try Self.source(everyone)["lastError"]?.stringValue == SourceState.reasonWithheld)
    }

    @Test func configurationProblemsShowNoQueryValuesToUnprivilegedCallers() throws {
        var rig = Self.rig(url: "http://127.0.0.1:9/posts")
        let failed = [FailedSourceStatus(name: "bad", file: "bad.source", problem: "bad.source:2: HTTP to http://h/x?page=7 refused")]
        var daemon = BoardRig.daemon
        daemon.reloadRejected = "syncd.conf:3: ReachabilityURL=http://h/?id=99 is wrong"
        let everyone = String(decoding: rig.board.reply(core: &rig.core, sources: rig.sources, daemon: daemon, failed: failed,
                                                        now: rig.now, wall: rig.wall, audience: .everyone), as: UTF8.self)
        #expect(everyone.contains("http://h/x?page=[redacted] refused") && everyone.contains("http://h/?id=[redacted] is wrong"))
        let privileged = String(decoding: rig.board.reply(core: &rig.core, sources: rig.sources, daemon: daemon, failed: failed,
                                                          now: rig.now, wall: rig.wall), as: UTF8.self)
        #expect(privileged.contains("http://h/x?page=7 refused") && privileged.contains("http://h/?id=99 is wrong"))
    }

    @Test func aFailureKeepsTheServersWordsApartFromItsSummary() {
        var failure = RefreshFailure(.transient, "HTTP 500 from https://h/x?token=abcd1234", excerpt: "echo: Bearer \(Self.token)",
                                     status: 500)
        failure.append(" (the listing was pulled)")
        let redacted = failure.redacted(by: Redaction(secrets: [Self.token]))
        #expect(redacted.message == "HTTP 500 from https://h/x?token=[redacted]: echo: Bearer [redacted] (the listing was pulled)")
        #expect(redacted.publicMessage == "HTTP 500 from https://h/x?token=[redacted] (the listing was pulled)")
        // Nothing of the server's: everyone sees the message, without query values.
        let plain = RefreshFailure(.transient, "connection refused to https://h/x?page=2").redacted(by: .none)
        #expect(plain.publicMessage == "connection refused to https://h/x?page=[redacted]")
    }
}

/// Warnings (`SourceNotice`) pass the source's redaction when noted, and callers outside ControlGroup= read the
/// form that quotes nothing the server wrote (docs/control-api.md, "Secrets").
@Suite("Status audience: warnings")
struct WarningAudienceTests {
    static let token = "tkn_S3cr3t/Ab+Cd=Ef9xyz"

    @Test func aWarningIsRedactedAndEveryoneReadsItsPublicForm() throws {
        var rig = StatusAudienceTests.rig(url: "http://127.0.0.1:9/dup?page=2")
        let notice = SourceNotice("2 records carry cid=\"c-\(Self.token)\" (1, 2), see http://127.0.0.1:9/dup?page=2",
                                  publicText: "2 records carry one cid= value, see http://127.0.0.1:9/dup?page=2")
        rig.board.notices["posts"] = [notice.redacted(by: Redaction(secrets: [Self.token]))]
        let everyone = String(decoding: rig.board.reply(core: &rig.core, sources: rig.sources, daemon: BoardRig.daemon, failed: [],
                                                        now: rig.now, wall: rig.wall, audience: .everyone), as: UTF8.self)
        let privileged = rig.reply()
        #expect(try StatusAudienceTests.source(everyone)["warnings"]
                == ["2 records carry one cid= value, see http://127.0.0.1:9/dup?page=[redacted]"])
        #expect(try StatusAudienceTests.source(privileged)["warnings"]
                == ["2 records carry cid=\"c-[redacted]\" (1, 2), see http://127.0.0.1:9/dup?page=2"])
        #expect(!everyone.contains("S3cr3t") && !privileged.contains("S3cr3t"))
    }

    @Test func aWarningInSyncdsOwnWordsIsTheSameForEveryone() {
        let notice = SourceNotice(ownWords: "the server's ETag is longer than 8192 bytes")
        #expect(notice.shown(to: .everyone) == notice.shown(to: .privileged))
        let literal: SourceNotice = "set Pagination=link"
        #expect(literal == SourceNotice(ownWords: "set Pagination=link"))
    }
}
