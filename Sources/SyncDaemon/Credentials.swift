internal import Glibc
import SyncCore

/// Reads secrets from systemd credentials (`$CREDENTIALS_DIRECTORY`, systemd.exec(5) `LoadCredential=`).
/// Secrets never appear in messages: errors name the credential, not its content.
public enum Credentials {
    /// Largest accepted credential file.
    static let maxBytes = 64 << 10

    /// The content of credential `name`, trailing newlines removed.
    public static func read(_ name: String, environment: [String: String]) throws(RefreshFailure) -> String {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw RefreshFailure(.permanent, "BearerTokenCredential=\(name) is set but $CREDENTIALS_DIRECTORY is not set; pass the token with LoadCredential=\(name):PATH in the unit")
        }
        let path = directory + "/" + name
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw RefreshFailure(.permanent, "Failed to read credential \(name) from \(directory): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in retryingEINTR { Glibc.read(fd, raw.baseAddress, raw.count) } }
            guard n >= 0 else {
                throw RefreshFailure(.permanent, "Failed to read credential \(name): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buffer.prefix(n)
            guard bytes.count <= maxBytes else {
                throw RefreshFailure(.permanent, "Credential \(name) is larger than 64 KiB; it should hold only a token")
            }
        }
        while let last = bytes.last, last == 10 || last == 13 || last == 32 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw RefreshFailure(.permanent, "Credential \(name) is empty") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
            throw RefreshFailure(.permanent, "Credential \(name) contains control characters; it must hold one token on one line")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What `syncd --check-config` finds about the credentials the sources name (syncd(8), OPTIONS).
public struct CredentialFindings: Sendable, Equatable {
    /// Credentials that cannot work: the check fails.
    public var errors: [ConfigurationProblem] = []
    /// Credentials that could not be checked here (no `$CREDENTIALS_DIRECTORY` outside the service).
    public var warnings: [ConfigurationProblem] = []
}

extension Credentials {
    /// Checks each `BearerTokenCredential=`. With `$CREDENTIALS_DIRECTORY` set, the credential is read as a refresh
    /// would read it, and any failure is an error. Without it, under systemd (`$INVOCATION_ID` set, systemd.exec(5))
    /// the unit lacks `LoadCredential=`: an error; run by hand, the directory exists only inside the service, so
    /// the credential cannot be checked: a warning that says how the service gets it.
    public static func check(_ sources: [SourceConfiguration], environment: [String: String]) -> CredentialFindings {
        var findings = CredentialFindings()
        let underSystemd = !(environment["INVOCATION_ID"] ?? "").isEmpty
        let directory = environment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        for source in sources {
            guard let name = source.bearerTokenCredential else { continue }
            if directory == nil {
                if underSystemd {
                    findings.errors.append(ConfigurationProblem(location: source.location, message:
                        "BearerTokenCredential=\(name): $CREDENTIALS_DIRECTORY is not set, so the token cannot be read; "
                        + "add LoadCredential=\(name):/path/to/token (or SetCredential=) to the unit, see systemd.exec(5)"))
                } else {
                    findings.warnings.append(ConfigurationProblem(location: source.location, message:
                        "warning: BearerTokenCredential=\(name) is read from $CREDENTIALS_DIRECTORY, which systemd gives only to the "
                        + "service (LoadCredential=\(name):/path/to/token in the unit); not checked here (to check a token by hand: "
                        + "CREDENTIALS_DIRECTORY=DIR syncd --check-config, with the token in the file DIR/\(name))"))
                }
                continue
            }
            do {
                _ = try read(name, environment: environment)
            } catch {
                findings.errors.append(ConfigurationProblem(location: source.location, message: "BearerTokenCredential=\(name): \(error.message)"))
            }
        }
        return findings
    }
}
