import Foundation
import SyncCore
import Testing
@testable import SyncEngine
import SyncRemote

/// A token pasted into BearerTokenCredential= by mistake reaches no caller outside ControlGroup= (syncd(8), SECURITY):
/// the public message of a credential failure does not name the credential; the log's message still does.
@Suite("Credential failures in public")
struct CredentialsPublicMessageTests {
    static let pasted = "ghp_PastedTokenAAAA1234"

    func failure(_ body: () throws(RefreshFailure) -> String) -> RefreshFailure? {
        do { _ = try body(); return nil } catch { return error }
    }

    @Test("no credentials directory, a missing file, an empty file: the public message says what, never the name")
    func publicMessageOmitsTheName() throws {
        let directory = NSTemporaryDirectory() + "credentials-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "".write(toFile: directory + "/blank-token", atomically: false, encoding: .utf8)
        let cases: [(String, [String: String], String)] = [
            (Self.pasted, [:], "systemd passed no credentials"),
            (Self.pasted, ["CREDENTIALS_DIRECTORY": directory], "systemd did not pass it when syncd started"),
            ("blank-token", ["CREDENTIALS_DIRECTORY": directory], "it is empty"),
        ]
        for (name, environment, reason) in cases {
            let error = failure { () throws(RefreshFailure) in try Credentials.token(name, environment: environment) }
            #expect(error?.publicMessage == "Failed to read the source's credential (BearerTokenCredential=): \(reason); "
                    + "privileged callers (syncctl status as root) see which and what to do")
            #expect(error?.publicMessage?.contains(name) == false)
            #expect(error?.publicMessage?.contains(directory) == false)
            // Root and the log keep the name: root configured it.
            #expect(error?.message.contains(name) == true)
        }
    }

    @Test("redacting a credential failure keeps its public message without the name")
    func redactedKeepsThePublicMessage() {
        let error = failure { () throws(RefreshFailure) in try Credentials.token(Self.pasted, environment: [:]) }
        let source = SourceConfiguration(name: "p", url: "https://h/p", location: SourceLocation(file: "p.source", line: 1))
        let redacted = error?.redacted(by: Redaction(source: source, token: nil))
        #expect(redacted?.publicMessage?.contains(Self.pasted) == false)
        #expect(redacted?.message.contains(Self.pasted) == true)
    }

    @Test("a refused redirect's public description names no URL the server gave")
    func refusedRedirect() {
        let target = "http://127.0.0.1:1/evil/tkn_S3cr3t/Ab%2BCd%3DEf9xyz"
        let error = HTTPError.refusedOrigin("\(target): it is on another origin (http://127.0.0.1:1) than URL= (http://127.0.0.1:8080)")
        #expect(error.description.contains(target))
        #expect(error.publicDescription == "refusing to request a URL outside what the source allows (URL= and AllowedOrigins=): "
                + "a redirect's target or a link the server gave, which privileged callers see")
        #expect(HTTPError.invalidURL("\(target) (the Location of HTTP 302 from http://h/)").publicDescription.contains("evil") == false)
        #expect(HTTPError.transport(code: 47, message: "Maximum (5) redirects followed, the last from http://h/a to \(target)")
            .publicDescription == "too many redirects followed (privileged callers see where they led)")
        #expect(HTTPError.transport(code: 7, message: "Failed to connect").publicDescription == "Failed to connect")
    }
}
