import Testing
@testable import SyncCore

@Suite("HTTPAnswer: what a status means for a listing page, a push, a pre-push check")
struct HTTPAnswerTests {
    @Test("a listing page: credentials, a wrong URL, the server's trouble, anything else refused", arguments: [
        (200, HTTPAnswer.success), (206, .success), (0, .success), (304, .notModified),
        (401, .credentials), (403, .credentials),
        (404, .notFound),
        (408, .serverTrouble), (429, .serverTrouble), (500, .serverTrouble), (501, .serverTrouble), (503, .serverTrouble),
        (599, .serverTrouble),
        (400, .refused), (405, .refused), (410, .refused), (422, .refused), (300, .refused), (100, .refused),
    ])
    func listingPage(status: Int, meaning: HTTPAnswer) {
        #expect(HTTPAnswer(status: status, answering: .listingPage) == meaning)
    }

    @Test("a push: a refusal concerns its record only; 401/403, 429 and 502–504 the whole source", arguments: [
        (201, HTTPAnswer.success), (204, .success),
        (303, .seeOther),
        (404, .notFound),
        (409, .conflict), (412, .conflict),
        (401, .credentials), (403, .credentials),
        (429, .serverTrouble), (502, .serverTrouble), (503, .serverTrouble), (504, .serverTrouble),
        (408, .recordTrouble), (500, .recordTrouble), (501, .recordTrouble), (505, .recordTrouble), (520, .recordTrouble),
        (400, .refused), (405, .refused), (410, .refused), (415, .refused), (422, .refused), (300, .refused), (304, .refused),
    ])
    func push(status: Int, meaning: HTTPAnswer) {
        #expect(HTTPAnswer(status: status, answering: .push) == meaning)
    }

    @Test("a pre-push check: 404 and 410 say the record is gone; 405 and other 4xx park the change", arguments: [
        (200, HTTPAnswer.success),
        (404, .notFound), (410, .notFound),
        (401, .credentials), (403, .credentials),
        (429, .serverTrouble), (502, .serverTrouble), (504, .serverTrouble),
        (408, .recordTrouble), (500, .recordTrouble),
        (405, .refused), (400, .refused), (406, .refused), (409, .refused), (412, .refused), (303, .refused),
    ])
    func prePushCheck(status: Int, meaning: HTTPAnswer) {
        #expect(HTTPAnswer(status: status, answering: .prePushCheck) == meaning)
    }

    @Test("a push's 304 is no listing's: refused; a file: read has no status and succeeds")
    func notModifiedOnlyForListings() {
        #expect(HTTPAnswer(status: 304, answering: .push) == .refused)
        #expect(HTTPAnswer(status: 304, answering: .prePushCheck) == .refused)
        #expect(HTTPAnswer(status: 0, answering: .push) == .success)
    }

    @Test("which bodies are content, not an error's words", arguments: [(0, true), (200, true), (299, true), (304, false), (404, false), (500, false)])
    func content(status: Int, carries: Bool) {
        #expect(HTTPAnswer.carriesContent(status) == carries)
    }

    @Test("redirects: 301/302/307/308 followed with their method; 303 only for GET and HEAD; others none")
    func redirects() {
        for status in [301, 302, 307, 308] {
            #expect(HTTPAnswer.redirect(status: status, method: "PUT") == .follow)
        }
        #expect(HTTPAnswer.redirect(status: 303, method: "GET") == .follow)
        #expect(HTTPAnswer.redirect(status: 303, method: "HEAD") == .follow)
        #expect(HTTPAnswer.redirect(status: 303, method: "POST") == .notTaken)
        #expect(HTTPAnswer.redirect(status: 304, method: "GET") == nil)
        #expect(HTTPAnswer.redirect(status: 300, method: "GET") == nil)
    }

    @Test("a create's outcome is unknown after any 5xx but 501 and 505", arguments: [
        (500, true), (502, true), (503, true), (504, true), (520, true), (524, true), (599, true),
        (501, false), (505, false), (400, false), (429, false), (201, false),
    ])
    func createOutcome(status: Int, unknown: Bool) {
        #expect(HTTPAnswer.leavesCreateUnknown(status) == unknown)
    }
}
