import Testing
@testable import SyncStore
import SyncCore

/// A failure's reason without the server's words (`SourceState.lastErrorPublic`, docs/control-api.md, "Secrets")
/// is stored beside the full one and survives a reopen; a row written by an older syncd has none.
@Suite("State store: the reason for everyone")
struct StateStorePublicErrorTests {
    @Test func thePublicReasonIsStoredBesideTheFullOneAndKeptAcrossAReopen() throws {
        let t = try TemporaryStore()
        try store(records(2), into: t.store)
        try t.store.recordFailure(source: "posts", url: "http://h/posts", message: "HTTP 500 from http://h/posts: Traceback …",
                                  publicMessage: "HTTP 500 from http://h/posts", at: "2026-11-29T12:00:00Z")
        let again = try StateStore(path: t.path, cacheFolder: t.folder)
        let state = try again.state(of: "posts")
        #expect(state.lastError == "HTTP 500 from http://h/posts: Traceback …")
        #expect(state.lastErrorPublic == "HTTP 500 from http://h/posts")
        #expect(state.recordCount == 2)
        // Without server text the reason is the same for everyone.
        try again.recordFailure(source: "posts", url: "http://h/posts", message: "connection refused", at: "2026-11-29T12:01:00Z")
        #expect(try again.state(of: "posts").lastErrorPublic == "connection refused")
    }

    @Test func aReasonWrittenWithoutThePublicColumnHasNoPublicReason() throws {
        let t = try TemporaryStore()
        try store(records(1), into: t.store)
        // As an older syncd wrote it: only last_error.
        try t.store.database.execute("UPDATE sources SET last_error = 'HTTP 401: bad token', last_error_public = NULL")
        let state = try t.store.state(of: "posts")
        #expect(state.lastError == "HTTP 401: bad token" && state.lastErrorPublic == nil)
    }
}
