import Foundation
import SyncCore
import Testing
@testable import SyncEngine

/// A token systemd did not pass says that credentials are read at start and a restart is needed (docs/syncd.8.md, EXAMPLES).
@Suite("Credentials restart advice")
struct CredentialsRestartAdviceTests {
    static let advice = "credentials are read when syncd starts, so a restart is needed: run 'systemctl restart syncd' "
        + "('systemctl --user restart syncd' for a user's own); a reload does not pass new credentials. "
        + "If the unit does not load it yet ('systemctl cat syncd' shows no LoadCredential=api-token:), first add "
        + "LoadCredential=api-token:/path/to/token to it with 'systemctl edit syncd'"

    func source(_ name: String, credential: String?) -> SourceConfiguration {
        SourceConfiguration(name: name, url: "https://api.example.com/\(name)", bearerTokenCredential: credential,
                            location: SourceLocation(file: "\(name).source", line: 1))
    }

    /// A fresh credentials directory holding `files` (name → content).
    func directory(_ files: [String: String]) throws -> String {
        let directory = NSTemporaryDirectory() + "credentials-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, content) in files { try content.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8) }
        return directory
    }

    func failure(_ body: () throws(RefreshFailure) -> String) -> RefreshFailure? {
        do { _ = try body(); return nil } catch { return error }
    }

    @Test("a refresh without any credential from systemd says to add LoadCredential= and restart")
    func noCredentialsDirectory() {
        let error = failure { () throws(RefreshFailure) in try Credentials.token("api-token", environment: [:]) }
        #expect(error?.message == "BearerTokenCredential=api-token is set but systemd passed no credentials "
                + "($CREDENTIALS_DIRECTORY is not set); " + Self.advice)
    }

    @Test("a refresh whose credential systemd did not pass (added after the start) says a restart is needed; the others still read")
    func credentialNotPassed() throws {
        let directory = try directory(["other": "s3cret\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["CREDENTIALS_DIRECTORY": directory]
        let error = failure { () throws(RefreshFailure) in try Credentials.token("api-token", environment: environment) }
        #expect(error?.message == "Failed to read credential api-token from \(directory): No such file or directory "
                + "(systemd did not pass it when syncd started); " + Self.advice)
        #expect(error?.message.contains("s3cret") == false)
        #expect(try Credentials.token("other", environment: environment) == "s3cret")
        // --check-config's own wording (a directory given by hand) is unchanged.
        #expect(Credentials.check([source("api", credential: "api-token")], environment: environment).errors.first?.message
                == "BearerTokenCredential=api-token: Failed to read credential api-token from \(directory): No such file or directory")
    }

    @Test("after a reload, every credential systemd did not pass is reported with the restart advice, the passed ones not")
    func afterReload() throws {
        let directory = try directory(["passed": "t0ken\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["CREDENTIALS_DIRECTORY": directory]
        let sources = [source("changed", credential: "api-token"), source("plain", credential: nil),
                       source("new", credential: "passed"), source("api", credential: "api-token")]
        let found = Credentials.missingAfterReload(sources, environment: environment)
        #expect(found.map(\.source) == ["changed", "api"])
        #expect(found.first?.message == "changed: BearerTokenCredential=api-token was not passed by systemd; " + Self.advice)
        // No credentials at all (no LoadCredential= in the unit when it started): every one is reported.
        #expect(Credentials.missingAfterReload(sources, environment: [:]).map(\.source) == ["changed", "new", "api"])
        #expect(Credentials.missingAfterReload([source("plain", credential: nil)], environment: [:]).isEmpty)
    }
}
