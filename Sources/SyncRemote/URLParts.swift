internal import CCurl

/// Scheme and host of a URL, parsed by libcurl's URL API (`curl_url(3)`).
struct URLParts {
    let scheme: String
    let host: String

    init(_ url: String) throws(HTTPError) {
        guard let handle = curl_url() else { throw .invalidURL(url) }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { throw .invalidURL(url) }
        scheme = URLParts.part(handle, CURLUPART_SCHEME)?.lowercased() ?? ""
        host = URLParts.part(handle, CURLUPART_HOST)?.lowercased() ?? ""
    }

    /// Loopback hosts: a token may go there over plain http (RFC 6761 `localhost`, 127.0.0.0/8, ::1).
    var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]" || host == "::1"
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &out, 0) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }
}

/// Resolves `reference` (absolute or relative, RFC 3986 §5) against `base`.
public func resolveURL(_ reference: String, against base: String) -> String? {
    guard let handle = curl_url() else { return nil }
    defer { curl_url_cleanup(handle) }
    guard curl_url_set(handle, CURLUPART_URL, base, 0) == CURLUE_OK,
          curl_url_set(handle, CURLUPART_URL, reference, 0) == CURLUE_OK else { return nil }
    var out: UnsafeMutablePointer<CChar>?
    guard curl_url_get(handle, CURLUPART_URL, &out, 0) == CURLUE_OK, let out else { return nil }
    defer { curl_free(out) }
    return String(cString: out)
}
