import Testing
@testable import SyncCore

@Suite("VersionRebase: a local change pushed against the server's current version")
struct VersionRebaseTests {
    private func rebase(_ local: String, _ server: String, field: String = "version") -> String? {
        VersionRebase.body(Array(local.utf8), field: field, server: Array(server.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("only the version member changes; every other byte of the local record stays")
    func replacesOnlyTheVersion() {
        #expect(rebase(#"{"id":4, "title":"local edit","version":1,"tags":[1,2]}"#,
                       #"{"id":4,"title":"server edit","version":2}"#)
                == #"{"id":4, "title":"local edit","version":2,"tags":[1,2]}"#)
    }

    @Test("the server's value is copied as the server wrote it: a string stays a string, a long number stays exact")
    func keepsTheServersText() {
        #expect(rebase(#"{"v":"2026-01-01T00:00:00Z"}"#, #"{"v":"2026-11-30T10:00:00.123Z"}"#, field: "v")
                == #"{"v":"2026-11-30T10:00:00.123Z"}"#)
        #expect(rebase(#"{"v":1}"#, #"{"v":12345678901234567890}"#, field: "v") == #"{"v":12345678901234567890}"#)
        #expect(rebase(#"{"v":1}"#, #"{"v":{"major":2}}"#, field: "v") == #"{"v":{"major":2}}"#)
    }

    @Test("nothing to rebase", arguments: [
        (#"{"id":4,"title":"no version here"}"#, #"{"id":4,"version":2}"#),     // the local record has no version
        (#"{"id":4,"version":1}"#, #"{"id":4}"#),                                // the server's has none
        (#"{"id":4,"version":2}"#, #"{"id":4,"version":2}"#),                    // already the same
        (#"[1,2]"#, #"{"version":2}"#),                                          // not an object
        (#"{"version":1}"#, #"not json"#),                                       // the server's answer is no JSON
        (#"{"version":{"a":1}}"#, #"{"x":{"version":2}}"#),                      // only top-level members count
    ])
    func nothing(local: String, server: String) {
        #expect(rebase(local, server) == nil)
    }

    @Test("a repeated member: the last one is the one a parser reads, and the one replaced")
    func repeatedMember() {
        #expect(rebase(#"{"version":0,"version":1}"#, #"{"version":3}"#) == #"{"version":0,"version":3}"#)
    }
}
