// Pagination=cursor: the next page is URL= with one query parameter set to the server's opaque token.

/// Builds the URL of the next page of a cursor-paginated listing.
public enum CursorURL {
    /// `base` with the query parameter `parameter` set to `token` (percent-encoded, RFC 3986 §3.4): an
    /// existing `parameter=` is replaced, other parameters and their order are kept; a fragment is dropped.
    public static func url(base: String, parameter: String, token: String) -> String {
        url(base: base, parameter: parameter, encodedValue: queryComponent(token))
    }

    /// `base` with the query parameter `parameter` set to `encodedValue`, which is already percent-encoded
    /// (a value written in the configuration); replaced and kept as `url(base:parameter:token:)` does.
    public static func url(base: String, parameter: String, encodedValue: String) -> String {
        var path = Substring(base)
        if let hash = path.firstIndex(of: "#") { path = path[..<hash] }
        var pairs: [Substring] = []
        if let question = path.firstIndex(of: "?") {
            pairs = path[path.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true)
            path = path[..<question]
        }
        let encoded = parameter + "=" + encodedValue
        var replaced = false
        pairs = pairs.compactMap { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard name == parameter else { return pair }
            if replaced { return nil }
            replaced = true
            return Substring(encoded)
        }
        if !replaced { pairs.append(Substring(encoded)) }
        return path + "?" + pairs.joined(separator: "&")
    }

    /// `text` percent-encoded for a query value: unreserved characters stay, everything else is encoded
    /// (a token of just `.` or `..` becomes `%2E`s, which a server decodes to the same).
    static func queryComponent(_ text: String) -> String { Identifiers.pathSegment(text) }
}
