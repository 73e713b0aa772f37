// A deliberately small check of the URLs syncd accepts (RFC 3986 shapes only):
// the transport does the real parsing; here we refuse what would surely fail
// or leak: unknown schemes, missing hosts, credentials in the URL.

/// The parts of a configured URL that the configuration rules look at.
struct URLSyntax: Equatable {
    /// The scheme in lowercase: `http`, `https` or `file`.
    var scheme: String
    /// The host as written (IPv6 literals keep their brackets); empty for `file:` URLs.
    var host: String

    /// Whether requests to this URL stay on this machine: `localhost`,
    /// `127.0.0.0/8` or `[::1]`.
    var isLoopback: Bool {
        let host = host.lowercased()
        return host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]"
    }

    /// Checks `text` and returns its scheme and host.
    ///
    /// - Parameter schemes: the schemes allowed here, in lowercase.
    static func parse(_ text: String, schemes: [String]) throws(ValueError) -> URLSyntax {
        func failure(_ reason: String) -> ValueError {
            // Quoted without anything that may be user information, even when the URL does not parse
            // (`https//user:pw@host`): the password must not reach the log or the status (Redaction).
            ValueError("invalid URL \"\(Redaction.quotingMalformedURL(text))\": \(reason)")
        }
        let schemeList = ConfigurationText.alternatives(schemes)
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw failure("contains a space or control character; percent-encode it (a space is %20)")
        }
        if text.unicodeScalars.contains(where: { $0.value > 0x7F }) {
            throw failure("contains non-ASCII characters; percent-encode them and write host names in their xn-- form")
        }
        guard let colon = text.firstIndex(of: ":"), isScheme(text[..<colon]) else {
            throw failure("missing scheme; write it in full, e.g. \(schemes[0])://example.com/items")
        }
        let scheme = text[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            throw ValueError("unsupported URL scheme \"\(text[..<colon])\"; use \(schemeList)")
        }
        let rest = text[text.index(after: colon)...]
        if scheme == "file" {
            return try parseFile(rest, failure: failure)
        }
        guard rest.hasPrefix("//") else {
            throw failure("missing host; write \(scheme)://HOST/PATH")
        }
        let afterSlashes = rest.dropFirst(2)
        // An "@" after the authority's end (a password with "/", "?" or "#" in it) means the authority's parts
        // may be pieces of a password: they are not quoted.
        let mayHoldUserinfo = afterSlashes.contains("@")
        let authority = afterSlashes.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") {
            throw failure(
                "credentials (\"user:password@\") are not allowed in URLs; put a token in a credential and set BearerTokenCredential=")
        }
        var host = authority
        var port: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw failure("unterminated IPv6 address; add \"]\"") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw failure(mayHoldUserinfo ? "unexpected text after the IPv6 address" : "unexpected \"\(after)\" after the IPv6 address")
                }
                port = after.dropFirst()
            }
        } else if let portColon = authority.lastIndex(of: ":") {
            host = authority[..<portColon]
            port = authority[authority.index(after: portColon)...]
        }
        if host.isEmpty { throw failure("missing host; write \(scheme)://HOST/PATH") }
        if authority.last == ":" { throw failure("empty port; remove the \":\" or give a port number") }
        if !port.isEmpty {
            guard port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(port), (1...65535).contains(number)
            else {
                throw failure(mayHoldUserinfo
                    ? "invalid port; use a number from 1 to 65535 (the \"@\" later in the URL suggests user information: "
                        + "credentials (\"user:password@\") are not allowed in URLs; put a token in a credential and set BearerTokenCredential=)"
                    : "invalid port \"\(port)\"; use a number from 1 to 65535")
            }
        }
        return URLSyntax(scheme: scheme, host: String(host))
    }

    /// `file:///path` or `file:/path`; the host may only be empty or `localhost` (RFC 8089).
    private static func parseFile(
        _ rest: Substring, failure: (String) -> ValueError
    ) throws(ValueError) -> URLSyntax {
        var path = rest
        if rest.hasPrefix("//") {
            let afterSlashes = rest.dropFirst(2)
        // An "@" after the authority's end (a password with "/", "?" or "#" in it) means the authority's parts
        // may be pieces of a password: they are not quoted.
        let mayHoldUserinfo = afterSlashes.contains("@")
            let host = afterSlashes.prefix { $0 != "/" }
            guard host.isEmpty || host.lowercased() == "localhost" else {
                throw failure("file URLs must be local; write file:///PATH")
            }
            path = afterSlashes.dropFirst(host.count)
        }
        guard path.hasPrefix("/"), path.count > 1 else {
            throw failure("a file URL needs an absolute path, e.g. file:///var/lib/data/posts.json")
        }
        return URLSyntax(scheme: "file", host: "")
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986, section 3.1).
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, ConfigurationText.isLetterOrDigit(first), !(first >= 0x30 && first <= 0x39)
        else { return false }
        return text.utf8.allSatisfy {
            ConfigurationText.isLetterOrDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".")
        }
    }
}
