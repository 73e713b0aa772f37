internal import Glibc

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
