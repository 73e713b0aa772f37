internal import CCurl
internal import CShim
import Glibc
internal import SyncSystem

/// Reads a `file:` URL (only ever the one `URL=` names; `OriginPolicy` decides that) without libcurl, so that
/// nothing but a regular file is opened for reading: `open(2)` of a FIFO without `O_NONBLOCK` waits for a
/// writer for ever, ignoring `TimeoutSec=`; a device may never end.
enum LocalFileReader {
    /// Streams the file's bytes to `onBody` in chunks; the head has status 0 (no HTTP).
    static func read(
        _ request: HTTPRequest,
        onHead: (HTTPResponseHead) throws -> Void,
        onBody: (UnsafeRawBufferPointer) throws -> Void,
        cancellation: CancellationFlag
    ) throws(HTTPError) -> HTTPResponseHead {
        let path = try decodedPath(request.url)
        // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; fstat then refuses it.
        let fd = retryingEINTR { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard fd >= 0 else {
            throw .transport(code: 37, message: "Failed to open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .transport(code: 37, message: "Failed to inspect \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path) }
        var head = HTTPResponseHead()
        head.effectiveURL = request.url
        do { try onHead(head) } catch { throw .rejected(error) }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var total: Int64 = 0
        while true {
            if cancellation.isCancelled { throw .cancelled }
            let count = buffer.withUnsafeMutableBytes { raw in retryingEINTR { Glibc.read(fd, raw.baseAddress, raw.count) } }
            guard count >= 0 else {
                throw .transport(code: 26, message: "Failed to read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return head }
            total += Int64(count)
            guard total <= request.maxBytes else { throw .tooLarge(limit: request.maxBytes) }
            do {
                try buffer.withUnsafeBytes { raw in try onBody(UnsafeRawBufferPointer(rebasing: raw[0..<count])) }
            } catch {
                throw .rejected(error)
            }
        }
    }

    /// The local path of a `file:` URL, percent-decoded (RFC 8089), by libcurl's URL parser.
    private static func decodedPath(_ url: String) throws(HTTPError) -> String {
        let path = try CurlLibrary.shared.using { api throws(HTTPError) in
            try withParsedURL(api, url) { handle throws(HTTPError) in
                guard let path = part(api, handle, CURLUPART_PATH, flags: UInt32(CURLU_URLDECODE)) else { throw .invalidURL(url) }
                return path
            }
        }
        guard !path.utf8.contains(0) else { throw .invalidURL(url) }
        return path
    }

}
