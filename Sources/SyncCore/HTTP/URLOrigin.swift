// Origins (RFC 6454 §4: scheme, host, port) of absolute URLs, and the one rule that
// decides where syncd may send a request and where its bearer token may go.

/// The origin of an absolute http or https URL, or the exact text of a `file:` URL.
public struct URLOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The scheme in lowercase.
    public var scheme: String
    /// The host in lowercase (IPv6 literals keep their brackets); empty for `file:`.
    public var host: String
    /// The port, the scheme's default when none is written (80 for http, 443 for https); 0 for `file:`.
    public var port: Int

    /// Creates an origin from its parts.
    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// The origin of `url`, or nil when it is not an absolute http, https or file URL (or has credentials).
    public init?(url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].lowercased()
        let rest = url[url.index(after: colon)...]
        switch scheme {
        case "file":
            self.init(scheme: "file", host: "", port: 0)
            return
        case "http", "https":
            break
        default:
            return nil
        }
        guard rest.hasPrefix("//") else { return nil }
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { return nil }
        var host = authority
        var portText: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let portColon = authority.lastIndex(of: ":") {
            host = authority[..<portColon]
            portText = authority[authority.index(after: portColon)...]
        }
        guard !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if !portText.isEmpty {
            guard portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(portText), (1...65535).contains(number)
            else { return nil }
            port = number
        }
        self.init(scheme: scheme, host: host.lowercased(), port: port)
    }

    /// Whether requests to this origin stay on this machine: `localhost`, `127.0.0.0/8` or `[::1]`.
    public var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]"
    }

    /// `scheme://host:port`, as `AllowedOrigins=` takes it.
    public var description: String { scheme == "file" ? "file://" : "\(scheme)://\(host):\(port)" }
}

/// Decides, for every URL syncd is about to request for a source — the configured URL, a redirect target,
/// a next page from a `Link` header or a body, an item URL — whether the request may go there at all and
/// whether the source's bearer token goes with it. The one place these rules live (syncd(8), "Origins").
public struct OriginPolicy: Sendable, Equatable {
    /// The origin of `URL=`; the bearer token is sent there and nowhere else.
    public let home: URLOrigin?
    /// `URL=` itself: the only `file:` URL that may ever be read.
    public let configuredURL: String
    /// Further origins that pages and redirects may lead to (`AllowedOrigins=`); never given the token.
    public let extraOrigins: Set<URLOrigin>

    /// What may happen with one URL.
    public enum Decision: Sendable, Equatable {
        /// The request may go there; `sendToken` tells whether the bearer token goes with it.
        case allowed(sendToken: Bool)
        /// The request must not be made; the reason is for the message.
        case refused(String)
    }

    /// Creates the policy of a source with `URL=` `configuredURL` and `AllowedOrigins=` `extraOrigins`.
    public init(configuredURL: String, extraOrigins: [URLOrigin] = []) {
        self.configuredURL = configuredURL
        self.home = URLOrigin(url: configuredURL)
        self.extraOrigins = Set(extraOrigins)
    }

    /// The decision for `url`.
    public func decide(_ url: String) -> Decision {
        guard let origin = URLOrigin(url: url) else {
            return .refused("\(url): it is not an http or https URL without credentials")
        }
        if origin.scheme == "file" {
            return url == configuredURL ? .allowed(sendToken: false)
                : .refused("\(url): it is a local file other than URL=; only the file URL= names is ever read")
        }
        if origin == home { return .allowed(sendToken: true) }
        if extraOrigins.contains(origin) { return .allowed(sendToken: false) }
        let homeText = home.map { "\($0)" } ?? "URL="
        return .refused("\(url): it is on another origin (\(origin)) than URL= (\(homeText)); "
                        + "add \(origin) to AllowedOrigins= if the server really pages or redirects there")
    }
}
