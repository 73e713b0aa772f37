internal import Glibc

/// What `syncctl` reads from its process: environment and files. (SyncDaemon has its own
/// `ProcessEnvironment`; syncctl does not link SyncDaemon, so the few lines live here too.)
public enum ProcessInput {
    /// The environment as a dictionary.
    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// The whole file at `path` (`-`: standard input), at most 64 MiB.
    public static func readFile(_ path: String) throws(CommandFailure) -> [UInt8] {
        let name = path == "-" ? "standard input" : path
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .failed("cannot open \(name): \(VarlinkClientError.text(of: errno))") }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in retryingEINTR { read(fd, raw.baseAddress, raw.count) } }
            if count < 0 {
                throw .failed("cannot read \(name): \(VarlinkClientError.text(of: errno))")
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > 64 << 20 { throw .failed("\(name) is larger than 64 MiB") }
        }
    }
}
