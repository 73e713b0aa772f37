internal import Glibc
import SyncCore

/// Reads secrets from systemd credentials (`$CREDENTIALS_DIRECTORY`, systemd.exec(5) `LoadCredential=`).
/// Secrets never appear in messages: errors name the credential, not its content; and only privileged callers
/// and the log see the name (root configured it), since a token pasted into `BearerTokenCredential=` by
/// mistake would otherwise reach every local user: the public message says "the source's credential".
public enum Credentials {
    /// A failure to get credential `name`: `message` for the log and privileged callers, `publicReason` (without
    /// the name, nor the directory, which names the unit) after "Failed to read the source's credential" for everyone.
    static func failure(_ message: String, publicReason: String) -> RefreshFailure {
        RefreshFailure(.permanent, message,
                       publicMessage: "Failed to read the source's credential (BearerTokenCredential=): \(publicReason); "
                           + "privileged callers (syncctl status as root) see which and what to do")
    }

    /// Largest accepted credential file.
    static let maxBytes = 64 << 10

    /// What to do about credential `name` that systemd did not pass: systemd hands a service its credentials when
    /// it starts it, so one added to the unit (or named by a source) after the start needs a restart; a reload
    /// cannot pass it (syncd(8), EXAMPLES). The restart comes first: the admin who reads this has most often just
    /// added `LoadCredential=` and reloaded; adding it is the second step, for a unit that does not have it yet.
    static func restartAdvice(_ name: String) -> String {
        "credentials are read when syncd starts, so a restart is needed: run 'systemctl restart syncd' "
            + "('systemctl --user restart syncd' for a user's own); a reload does not pass new credentials. "
            + "If the unit does not load it yet ('systemctl cat syncd' shows no LoadCredential=\(name):), first add "
            + "LoadCredential=\(name):/path/to/token to it with 'systemctl edit syncd'"
    }

    /// The token a refresh sends: credential `name` as `read` reads it, except that a credential systemd did not
    /// pass (no `$CREDENTIALS_DIRECTORY`, or no such file in it: added to the unit or named by a source after the
    /// start, then only reloaded) fails with what to do, a restart.
    public static func token(_ name: String, environment: [String: String]) throws(RefreshFailure) -> String {
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty, notPassed(name, environment: environment) {
            throw failure("Failed to read credential \(name) from \(directory): No such file or directory "
                          + "(systemd did not pass it when syncd started); \(restartAdvice(name))",
                          publicReason: "systemd did not pass it when syncd started")
        }
        return try read(name, environment: environment)
    }

    /// The content of credential `name`, trailing newlines removed.
    public static func read(_ name: String, environment: [String: String]) throws(RefreshFailure) -> String {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw failure("BearerTokenCredential=\(name) is set but systemd passed no credentials "
                          + "($CREDENTIALS_DIRECTORY is not set); \(restartAdvice(name))",
                          publicReason: "systemd passed no credentials")
        }
        let path = directory + "/" + name
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw failure("Failed to read credential \(name) from \(directory): \(reason)", publicReason: reason)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in retryingEINTR { Glibc.read(fd, raw.baseAddress, raw.count) } }
            guard n >= 0 else {
                let reason = String(cString: strerror(errno))
                throw failure("Failed to read credential \(name): \(reason)", publicReason: reason)
            }
            if n == 0 { break }
            bytes += buffer.prefix(n)
            guard bytes.count <= maxBytes else {
                throw failure("Credential \(name) is larger than 64 KiB; it should hold only a token", publicReason: "it is larger than 64 KiB")
            }
        }
        while let last = bytes.last, last == 10 || last == 13 || last == 32 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw failure("Credential \(name) is empty", publicReason: "it is empty") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
            throw failure("Credential \(name) contains control characters; it must hold one token on one line",
                          publicReason: "it contains control characters")
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

extension Credentials {
    /// True when systemd passed no credential `name`: no `$CREDENTIALS_DIRECTORY`, or no such file in it.
    static func notPassed(_ name: String, environment: [String: String]) -> Bool {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return true }
        var info = stat()
        return stat(directory + "/" + name, &info) != 0 && errno == ENOENT
    }

    /// After a reload: one warning per source whose `BearerTokenCredential=` systemd did not pass. systemd passes
    /// credentials only when it starts the service, so neither a source that names a new one nor a
    /// `LoadCredential=` added to the unit since (`systemctl edit`, then `systemctl reload`) can work before a
    /// restart: the reload says so at once, for each source, every time.
    public static func missingAfterReload(_ sources: [SourceConfiguration],
                                          environment: [String: String]) -> [(source: String, message: String)] {
        sources.compactMap { source in
            guard let name = source.bearerTokenCredential, notPassed(name, environment: environment) else { return nil }
            return (source.name, "\(source.name): BearerTokenCredential=\(name) was not passed by systemd; \(restartAdvice(name))")
        }
    }
}
