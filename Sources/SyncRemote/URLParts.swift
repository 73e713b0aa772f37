internal import CCurl
internal import CShim

/// Scheme and host of a URL, parsed by libcurl's URL API (`curl_url(3)`).
struct URLParts {
    let scheme: String
    let host: String

    init(_ url: String, library: CurlLibrary = .shared) throws(HTTPError) {
        (scheme, host) = try library.using { api throws(HTTPError) in
            try withParsedURL(api, url) { handle throws(HTTPError) in
                ((part(api, handle, CURLUPART_SCHEME, flags: 0)?.lowercased() ?? ""),
                 (part(api, handle, CURLUPART_HOST, flags: 0)?.lowercased() ?? ""))
            }
        }
    }

    /// Loopback hosts: a token may go there over plain http (RFC 6761 `localhost`, 127.0.0.0/8, ::1).
    var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]" || host == "::1"
    }
}

/// Runs `body` with a libcurl URL handle holding `url`; `.invalidURL` when libcurl does not accept it.
func withParsedURL<T>(_ api: OpaquePointer, _ url: String, _ body: (OpaquePointer) throws(HTTPError) -> T) throws(HTTPError) -> T {
    guard let handle = cshim_curl_url(api) else { throw .invalidURL(url) }
    defer { cshim_curl_url_cleanup(api, handle) }
    guard cshim_curl_url_set(api, handle, CURLUPART_URL, url, 0) == CURLUE_OK else { throw .invalidURL(url) }
    return try body(handle)
}

/// One part of a parsed URL, nil when absent.
func part(_ api: OpaquePointer, _ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32) -> String? {
    var out: UnsafeMutablePointer<CChar>?
    guard cshim_curl_url_get(api, handle, which, &out, flags) == CURLUE_OK, let out else { return nil }
    defer { cshim_curl_free(api, out) }
    return String(cString: out)
}

/// Resolves `reference` (absolute or relative, RFC 3986 §5) against `base`; nil when either is not a URL
/// (or libcurl cannot be loaded).
public func resolveURL(_ reference: String, against base: String) -> String? {
    try? CurlLibrary.shared.using { api throws(HTTPError) in
        try withParsedURL(api, base) { handle throws(HTTPError) in
            guard cshim_curl_url_set(api, handle, CURLUPART_URL, reference, 0) == CURLUE_OK,
                  let resolved = part(api, handle, CURLUPART_URL, flags: 0) else { throw .invalidURL(reference) }
            return resolved
        }
    }
}
