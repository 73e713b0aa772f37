internal import CShim

/// Decodes a gzip body (RFC 1952) as it arrives, with the zlib libcurl brings (`cshim_gunzip`). syncd decodes
/// gzip itself because libcurl takes a body cut right before its 8-byte trailer (CRC-32 and length) as whole:
/// here such a body is not `isComplete`, and `HTTPClient` refuses it as truncated.
final class GzipDecoder {
    /// Why a body could not be decoded.
    enum Failure: Error {
        /// zlib's reason: a wrong CRC-32 or length, a bad header, damaged data.
        case damaged(String)
        /// The consumer of the decoded bytes threw it.
        case consumer(any Error)
    }

    private let decoder: OpaquePointer

    /// A decoder, or nil when the loaded libcurl brings no zlib (libcurl then decodes, as it always did).
    init?(api: OpaquePointer) {
        guard let decoder = cshim_gunzip_new(api) else { return nil }
        self.decoder = decoder
    }

    deinit { cshim_gunzip_free(decoder) }

    /// Whether the loaded libcurl brings zlib's functions.
    static func isAvailable(api: OpaquePointer) -> Bool {
        cshim_curl_symbol(api, "inflateInit2_") != nil && cshim_curl_symbol(api, "inflate") != nil
    }

    /// Whether the body so far ends right after a member's checked trailer (or is empty).
    var isComplete: Bool { cshim_gunzip_complete(decoder) != 0 }

    /// Decodes `bytes`, handing each decoded run to `output`.
    func feed(_ bytes: UnsafeRawBufferPointer, _ output: (UnsafeRawBufferPointer) throws -> Void) throws(Failure) {
        var error = [CChar](repeating: 0, count: 256)
        var thrown: (any Error)?
        let status = withoutActuallyEscaping(output) { output in
            var sink = GzipDecoderSink(output: output)
            return withUnsafeMutablePointer(to: &sink) { sinkPointer in
                defer { thrown = sinkPointer.pointee.error }
                return cshim_gunzip_feed(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                                         sinkCallback, sinkPointer, &error, error.count)
            }
        }
        if status == -2, let thrown { throw .consumer(thrown) }
        if status != 0 {
            throw .damaged(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}

/// Where `cshim_gunzip_feed` hands decoded runs, and the consumer's error if it threw.
private struct GzipDecoderSink {
    let output: (UnsafeRawBufferPointer) throws -> Void
    var error: (any Error)?
}

private let sinkCallback: cshim_gunzip_output = { user, data, length in
    let sink = user!.assumingMemoryBound(to: GzipDecoderSink.self)
    do {
        try sink.pointee.output(UnsafeRawBufferPointer(start: data, count: length))
        return 0
    } catch {
        sink.pointee.error = error
        return 1
    }
}
