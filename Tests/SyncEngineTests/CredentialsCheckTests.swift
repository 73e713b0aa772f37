import Foundation
import SyncCore
import Testing
@testable import SyncEngine

/// `Credentials.check`, what `syncd --check-config` says about `BearerTokenCredential=` (docs/syncd.8.md, OPTIONS).
@Suite("Credentials check")
struct CredentialsCheckTests {
    let withToken = SourceConfiguration(name: "api", url: "https://api.example.com/items", bearerTokenCredential: "api-token",
                                        location: SourceLocation(file: "api.source", line: 1))
    let withoutToken = SourceConfiguration(name: "open", url: "https://example.com/open",
                                           location: SourceLocation(file: "open.source", line: 1))

    @Test("by hand, without a credentials directory: a warning naming LoadCredential=, no error")
    func byHand() {
        let findings = Credentials.check([withToken, withoutToken], environment: [:])
        #expect(findings.errors.isEmpty)
        #expect(findings.warnings.map(\.location.file) == ["api.source"])
        #expect(findings.warnings.first?.message.contains("LoadCredential=api-token:/path/to/token") == true)
    }

    @Test("under systemd, without a credentials directory: an error")
    func underSystemd() {
        let findings = Credentials.check([withToken], environment: ["INVOCATION_ID": "abc"])
        #expect(findings.warnings.isEmpty)
        #expect(findings.errors.map(\.description) == [
            "api.source:1: BearerTokenCredential=api-token: $CREDENTIALS_DIRECTORY is not set, so the token cannot be read; "
                + "add LoadCredential=api-token:/path/to/token (or SetCredential=) to the unit, see systemd.exec(5)",
        ])
    }

    @Test("with a credentials directory: read as a refresh reads it; a missing or empty file is an error")
    func withDirectory() throws {
        let directory = NSTemporaryDirectory() + "credentials-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["CREDENTIALS_DIRECTORY": directory]
        #expect(Credentials.check([withToken], environment: environment).errors.first?.message
                == "BearerTokenCredential=api-token: Failed to read credential api-token from \(directory): No such file or directory")
        try "\n".write(toFile: directory + "/api-token", atomically: false, encoding: .utf8)
        #expect(Credentials.check([withToken], environment: environment).errors.first?.message
                == "BearerTokenCredential=api-token: Credential api-token is empty")
        try "token\n".write(toFile: directory + "/api-token", atomically: false, encoding: .utf8)
        #expect(Credentials.check([withToken], environment: environment) == CredentialFindings())
    }
}
