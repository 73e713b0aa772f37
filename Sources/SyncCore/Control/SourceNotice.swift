/// A warning about a source's latest listing that did not fail it (an unfollowed next page, an oversized
/// validator, records sharing one client ID): `SourceStatus.warnings` and one log line.
///
/// Like a refresh's error it comes in two forms (docs/control-api.md, "Secrets"): `text`, for root, the
/// daemon's user, members of `ControlGroup=` and the log, may quote the server (redacted); `publicText`, for
/// every other caller of `GetStatus`, quotes nothing the server wrote.
public struct SourceNotice: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The warning as privileged callers and the log read it.
    public var text: String
    /// The warning as everyone else reads it: without the server's words.
    public var publicText: String

    /// A warning that quotes the server in `text` and not in `publicText`.
    public init(_ text: String, publicText: String) {
        self.text = text
        self.publicText = publicText
    }

    /// A warning in syncd's own words only (nothing the server wrote): the same for everyone.
    public init(ownWords text: String) {
        self.init(text, publicText: text)
    }

    /// A literal is syncd's own words.
    public init(stringLiteral text: String) {
        self.init(ownWords: text)
    }

    /// The notice with `redaction` applied to both forms (`publicText` as `.everyone` reads it).
    public func redacted(by redaction: Redaction) -> SourceNotice {
        SourceNotice(redaction.redacting(text), publicText: redaction.redacting(publicText, for: .everyone))
    }

    /// The form `audience` reads.
    public func shown(to audience: Redaction.Audience) -> String {
        audience == .everyone ? publicText : text
    }
}
