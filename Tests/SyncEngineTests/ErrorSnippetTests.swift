import Testing
@testable import SyncEngine

/// The excerpt of an error body that messages quote: secrets are hidden before it is cut.
@Suite("Error body excerpt")
struct ErrorSnippetTests {
    static let token = "tok-9f8e7d6c5b4a"

    @Test func anErrorBodyExcerptIsRedactedBeforeItIsCut() {
        let redaction = Redaction(secrets: [Self.token])
        let body = Array(("{\"detail\": \"invalid token \(Self.token)\"}").utf8)
        #expect(ErrorSnippet.text(body, redaction: redaction) == "{\"detail\": \"invalid token [redacted]\"}")
        // Cut after the token is replaced: nothing of it shows.
        #expect(ErrorSnippet.text(body, limit: 34, redaction: redaction) == "{\"detail\": \"invalid token [redacte…")
        // The body read (twice the limit, in bytes) ends inside the token: its start is hidden as well.
        let spaced = Array(("a" + String(repeating: " ", count: 28) + "token \(Self.token)").utf8)
        #expect(ErrorSnippet.text(spaced, limit: 20, redaction: redaction) == "a token [redacted]")
    }
}
