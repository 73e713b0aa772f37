// What keeps a source's secrets out of everything syncd shows (syncd(8), SECURITY, "Secrets"): a server may
// echo the request (a debug page listing the headers) or name the token in its error ("invalid token …"),
// and an admin may write a password or an API key into URL=. Every string that came from a server or
// carries configuration passes through here before a log line, a status field, an error reply or a
// terminal gets it.
//
// The rules:
// - A source's secrets — its bearer token, the values of its credential headers (`Authorization:`,
//   `Cookie:`, names with key/token/secret/auth/password/session/signature), the user information and the
//   credential query values (same names) of its URLs — become `[redacted]` wherever they occur: as
//   written, percent-encoded (with or without "/", ":" and "@" kept, either hex case, "+" for a space),
//   JSON-escaped (`\/`, `\u002f`, `\u00e9`), base64- or base64url-encoded (alone or anywhere inside a
//   longer encoded text, such as `Bearer TOKEN` or a whole `Authorization:` line), and also when a cut
//   text ends in the first characters of one. Each `name=value` pair of a credential header
//   (`Cookie: a=1; sid=V`) makes its value a secret of its own.
// - Any URL in a text loses its user information (`https://[redacted]@host/`) and the values of its
//   credential parameters: in the query (`?api_key=[redacted]`), the path's matrix parameters
//   (`;api_key=[redacted]`) and the fragment (`#access_token=[redacted]`). Credential names are those
//   above, and `pass` and `pw` exactly (not "compass").
// - For everyone else (callers who are neither root, syncd's user nor in ControlGroup=, and the STATUS=
//   line every user can read), every query and matrix value of every URL is hidden (`?page=[redacted]`),
//   and the whole fragment (`#[redacted]`).
// - A value that should be a URL but does not parse (`https//user:pw@host`, a password with a "/") is
//   quoted in configuration problems by `quotingMalformedURL`: when it holds an "@", everything from the
//   start of its authority (after the scheme and its ":" and "/") up to the last "@" becomes
//   `[redacted]`; credential query values are hidden as in any URL. (Not the whole value hidden: the
//   admin needs to see which URL is wrong.) A mistyped `Header=` line, a line without "=" and a key with
//   a space are quoted only by the name they start with (`ConfigurationText.quotedLeadingName`), an
//   invalid `BearerTokenCredential=` name not at all: these problems reach every local user.
// - Outside this type: failure messages for everyone name no URL the server gave (a redirect's target, a
//   next-page link; `HTTPError.publicDescription`) and no credential name (`Credentials`).

/// Hides secrets in text shown to people or other programs.
public struct Redaction: Sendable, Equatable {
    /// What replaces a secret.
    public static let mark = "[redacted]"
    /// The shortest secret replaced wherever it occurs; a shorter one is hidden only as a URL part.
    public static let minimumSecretLength = 4

    /// The forms of the secrets to replace, longest first.
    public private(set) var forms: [String]

    /// Who reads a text.
    public enum Audience: Sendable, Equatable {
        /// Root, syncd's own user, members of `ControlGroup=`, the log: secrets hidden, the rest shown.
        case privileged
        /// Any other local user: no query value of any URL either.
        case everyone
    }

    /// No secrets: only the URL rules apply.
    public static let none = Redaction(secrets: [])

    /// A redaction of `secrets` (in each of their encoded forms); secrets shorter than
    /// `minimumSecretLength` are left out.
    public init(secrets: [String]) {
        var forms: Set<String> = []
        for secret in secrets where secret.count >= Redaction.minimumSecretLength {
            forms.formUnion(Redaction.encodedForms(of: secret))
        }
        self.forms = forms.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// The secrets of `source`: `token` (its `BearerTokenCredential=`, when read), its credential headers'
    /// values, and its URLs' user information and credential query values.
    public init(source: SourceConfiguration, token: String?) {
        var secrets: [String] = token.map { [$0] } ?? []
        for header in source.headers where Redaction.isCredentialName(header.name) {
            secrets.append(header.value)
            // "Cookie: a=1; sid=V": each pair's value is a secret of its own.
            secrets += Redaction.pairValues(header.value)
            // "Bearer abc", "Basic dXNlcjpwdw==": the credential itself, without its scheme, and Basic's password.
            if let space = header.value.lastIndex(of: " ") {
                let credential = String(header.value[header.value.index(after: space)...])
                secrets.append(credential)
                if let decoded = Base64.decode(credential), let colon = decoded.firstIndex(of: ":") {
                    secrets.append(String(decoded[decoded.index(after: colon)...]))
                }
            }
        }
        for url in [source.url] + (source.itemURLTemplate.map { [$0] } ?? []) {
            secrets += Redaction.urlSecrets(url)
        }
        self.init(secrets: secrets)
    }

    /// `text` with every secret replaced by `[redacted]`, and the URLs in it without user information and
    /// credential query values; for `.everyone`, without any query value.
    public func redacting(_ text: String, for audience: Audience = .privileged) -> String {
        var out = text
        for form in forms where out.contains(form) {
            out = out.replacingEvery(form, with: Redaction.mark)
        }
        return Redaction.scrubbingURLs(out, hidingEveryQueryValue: audience == .everyone)
    }

    /// `text`, which was cut short (the start of an error body), redacted, and with a trailing part of it that
    /// is the start of a secret (at least `minimumSecretLength` characters) hidden as well.
    public func redactingCut(_ text: String, for audience: Audience = .privileged) -> String {
        var out = redacting(text, for: audience)
        for form in forms {
            var length = min(form.count - 1, out.count)
            while length >= Redaction.minimumSecretLength {
                if out.hasSuffix(form.prefix(length)) {
                    out = String(out.dropLast(length)) + Redaction.mark
                    return out
                }
                length -= 1
            }
        }
        return out
    }

    /// `text` with the URLs in it scrubbed (no user information, no credential query values; no query values
    /// at all for `.everyone`); the secrets of no source are known here.
    public static func scrubbingURLs(in text: String, for audience: Audience = .privileged) -> String {
        scrubbingURLs(text, hidingEveryQueryValue: audience == .everyone)
    }

    /// Whether a header or query parameter of this name carries a credential.
    public static func isCredentialName(_ name: String) -> Bool {
        let lower = String(name.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        if ["cookie", "sig", "code", "pass", "pw", "passwd"].contains(lower) { return true }
        // "auth", "oauth_…", "authorization", "x-auth-token", but not "author".
        if lower.contains("auth") && !(lower.contains("author") && !lower.contains("authoriz")) { return true }
        return ["key", "token", "secret", "passw", "pwd", "session", "signature", "credential"].contains { lower.contains($0) }
    }

    // MARK: Secrets of a URL

    /// The user information and credential query values of `url`, for replacing wherever they occur.
    static func urlSecrets(_ url: String) -> [String] {
        var secrets: [String] = []
        guard let schemeEnd = url.firstRange(of: "://") else { return secrets }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            secrets.append(String(userinfo))
            if let colon = userinfo.firstIndex(of: ":") { secrets.append(String(userinfo[userinfo.index(after: colon)...])) }
        }
        // Query, fragment and the path's matrix parameters (";name=value") alike.
        let parameters = rest.dropFirst(authority.count).split { $0 == "?" || $0 == "#" || $0 == "&" || $0 == ";" || $0 == "/" }
        for pair in parameters {
            guard let equals = pair.firstIndex(of: "="), isCredentialName(String(pair[..<equals])) else { continue }
            let value = String(pair[pair.index(after: equals)...])
            secrets.append(value)
            if let decoded = percentDecoded(value), decoded != value { secrets.append(decoded) }
        }
        return secrets
    }

    /// The values of the `name=value` pairs in a header's value (`a=1; sid=V`, separated by ";" or ",").
    static func pairValues(_ value: String) -> [String] {
        value.split { $0 == ";" || $0 == "," }.compactMap { pair in
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let value = ConfigurationText.trimmed(pair[pair.index(after: equals)...])
            return value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") ? String(value.dropFirst().dropLast()) : value
        }
    }

    // MARK: Malformed URLs

    /// `text`, a value that should be a URL (it may not parse), for quoting in a message: when it holds an "@",
    /// everything from the start of its authority (after the scheme and the ":" and "/" that follow it, or from
    /// the start) up to its last "@" is `[redacted]`, since a mistyped URL (`https//user:pw@host`,
    /// `https://user:pw/x@host`) may still carry a password; credential parameter values are hidden as in any URL.
    public static func quotingMalformedURL(_ text: String) -> String {
        var out = text
        if let at = text.lastIndex(of: "@") {
            var start = text.startIndex
            let scheme = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
            let separators = text[scheme.endIndex...].prefix { $0 == ":" || $0 == "/" }
            if !scheme.isEmpty, !separators.isEmpty { start = separators.endIndex }
            out = start < at ? String(text[..<start]) + mark + text[at...] : text
        }
        return scrubbingURLs(scrubbingParameters(Substring(out), hidingEveryValue: false, isPath: false), hidingEveryQueryValue: false)
    }

    // MARK: URLs in text

    /// Where a URL in a message ends: at a blank, a quote or an angle bracket (how messages quote them).
    private static func endsURL(_ character: Character) -> Bool {
        character.isWhitespace || character == "\"" || character == "'" || character == "<" || character == ">" || character == "`"
    }

    private static func scrubbingURLs(_ text: String, hidingEveryQueryValue: Bool) -> String {
        guard text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let separator = rest.firstRange(of: "://") {
            // The scheme: the letters (and + - .) just before "://".
            var schemeStart = separator.lowerBound
            while schemeStart > rest.startIndex {
                let before = rest[rest.index(before: schemeStart)]
                guard before.isASCII && (before.isLetter || before.isNumber || "+-.".contains(before)) else { break }
                schemeStart = rest.index(before: schemeStart)
            }
            var urlEnd = rest[separator.upperBound...].firstIndex(where: endsURL) ?? rest.endIndex
            // "HTTP 500 from https://host/x?key=v: …": the punctuation after a URL is the message's.
            while urlEnd > separator.upperBound, ":;,.)".contains(rest[rest.index(before: urlEnd)]) {
                urlEnd = rest.index(before: urlEnd)
            }
            out += rest[..<separator.upperBound]
            if schemeStart == separator.lowerBound {
                rest = rest[separator.upperBound...]
                continue
            }
            out += scrubbing(rest[separator.upperBound..<urlEnd], hidingEveryQueryValue: hidingEveryQueryValue)
            rest = rest[urlEnd...]
        }
        out += rest
        return out
    }

    /// One URL after its "://": the user information replaced, credential (or all) parameter values hidden, the
    /// fragment's credential values (or, for everyone, the whole fragment) too.
    private static func scrubbing(_ afterScheme: Substring, hidingEveryQueryValue: Bool) -> String {
        var out = ""
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            out += mark + authority[at...]
        } else {
            out += authority
        }
        let rest = afterScheme[authorityEnd...]
        let fragmentStart = rest.firstIndex(of: "#") ?? rest.endIndex
        out += scrubbingParameters(rest[..<fragmentStart], hidingEveryValue: hidingEveryQueryValue, isPath: true)
        guard fragmentStart < rest.endIndex else { return out }
        let fragment = rest[rest.index(after: fragmentStart)...]
        if hidingEveryQueryValue && !fragment.isEmpty && fragment != Substring(mark) { return out + "#" + mark }
        return out + "#" + scrubbingPairs(fragment, hidingEveryValue: false)
    }

    /// A path and query: the values of the matrix parameters (`;name=value` in the path) and of the query's
    /// pairs hidden when they are credentials, or all of them. Without `isPath` the text is only searched for a query.
    private static func scrubbingParameters(_ text: Substring, hidingEveryValue: Bool, isPath: Bool) -> String {
        let question = text.firstIndex(of: "?") ?? text.endIndex
        var out = ""
        if isPath {
            out += text[..<question].split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
                var parts = segment.split(separator: ";", omittingEmptySubsequences: false)
                guard parts.count > 1 else { return String(segment) }
                let name = parts.removeFirst()
                return ([String(name)] + parts.map { scrubbingPair($0, hidingEveryValue: hidingEveryValue) }).joined(separator: ";")
            }.joined(separator: "/")
        } else {
            out += text[..<question]
        }
        guard question < text.endIndex else { return out }
        return out + "?" + scrubbingPairs(text[text.index(after: question)...], hidingEveryValue: hidingEveryValue)
    }

    /// `a=1&b=2` with the credential (or all) values hidden.
    private static func scrubbingPairs(_ text: Substring, hidingEveryValue: Bool) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { scrubbingPair($0, hidingEveryValue: hidingEveryValue) }
            .joined(separator: "&")
    }

    private static func scrubbingPair(_ pair: Substring, hidingEveryValue: Bool) -> String {
        guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
        let name = pair[..<equals]
        let value = pair[pair.index(after: equals)...]
        guard !value.isEmpty, value != Substring(mark), hidingEveryValue || isCredentialName(String(name)) else { return String(pair) }
        return name + "=" + mark
    }

    // MARK: Encodings

    /// The characters percent-encoding keeps besides the unreserved ones, as common encoders choose them:
    /// none (RFC 3986 §2.1), Python's `quote` ("/"), ":" or "@" kept, a path segment's (RFC 3986 `pchar`),
    /// a whole query's, JavaScript's `encodeURIComponent` and `encodeURI`.
    static let percentEncodingSafeSets = ["", "/", ":", "@", "/:", ":@", "/:@", "!$&'()*+,;=:@", "!$&'()*+,;=:@/?", "!'()*",
                                          ";,/?:@&=+$#!'()*"]

    /// A secret as written, percent-encoded (several safe sets, both hex cases, "+" for a space), JSON-escaped
    /// and base64- or base64url-encoded at any of the three offsets within a longer encoded text.
    static func encodedForms(of secret: String) -> Set<String> {
        var forms: Set<String> = [secret]
        for safe in percentEncodingSafeSets {
            let encoded = percentEncoded(secret, keeping: safe)
            forms.insert(encoded)
            forms.insert(lowercasingPercentEscapes(encoded))
            // Form encoding writes a space as "+".
            forms.insert(encoded.replacingEvery("%20", with: "+"))
            forms.insert(lowercasingPercentEscapes(encoded).replacingEvery("%20", with: "+"))
        }
        for slash in ["/", "\\/", "\\u002f", "\\u002F"] {
            for escapingNonASCII in [false, true] {
                forms.insert(jsonEscaped(secret, slash: slash, escapingNonASCII: escapingNonASCII, uppercase: false))
                forms.insert(jsonEscaped(secret, slash: slash, escapingNonASCII: escapingNonASCII, uppercase: true))
            }
        }
        let bytes = Array(secret.utf8)
        for filler in 0..<3 {
            // base64 of (filler bytes + secret): the characters that depend on the filler (none, two or three)
            // and the last one, which depends on what follows the secret unless the bytes fill whole groups, go.
            let total = filler + bytes.count
            let encoded = Array(Base64.encode([UInt8](repeating: 0, count: filler) + bytes).prefix { $0 != "=" })
            let dropped = [0, 2, 3][filler]
            let core = String(encoded.dropFirst(dropped).dropLast(total % 3 == 0 ? 0 : 1))
            forms.insert(core)
            forms.insert(String(core.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        }
        return forms.filter { $0.count >= minimumSecretLength }
    }

    /// `text` with every byte but the unreserved characters and those in `safe` as `%XX` (upper-case hex).
    static func percentEncoded(_ text: String, keeping safe: String) -> String {
        let kept = Set(safe.utf8)
        var out = ""
        for byte in text.utf8 {
            let unreserved = ConfigurationText.isLetterOrDigit(byte) || "-._~".utf8.contains(byte)
            if unreserved || kept.contains(byte) {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// `text` as a JSON string's content: `"` and `\` escaped, "/" as `slash`, and with `escapingNonASCII` every
    /// character outside printable ASCII as `\uXXXX` (UTF-16, as Python's json.dumps writes it).
    static func jsonEscaped(_ text: String, slash: String, escapingNonASCII: Bool, uppercase: Bool) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += slash
            case _ where escapingNonASCII && (scalar.value < 0x20 || scalar.value > 0x7E):
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16, uppercase: uppercase)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func lowercasingPercentEscapes(_ text: String) -> String {
        var out = ""
        var left = 0
        for character in text {
            if character == "%" { left = 2; out.append(character); continue }
            out += left > 0 ? character.lowercased() : String(character)
            left = max(0, left - 1)
        }
        return out
    }

    /// `%XX` escapes decoded; nil when they do not decode to UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// RFC 4648 §4 base64, for the encoded forms of secrets.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = (UInt32(chunk[0]) << 16) | (UInt32(chunk.count > 1 ? chunk[1] : 0) << 8) | UInt32(chunk.count > 2 ? chunk[2] : 0)
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text `encoded` stands for; nil when it is not base64 of UTF-8 text.
    static func decode(_ encoded: String) -> String? {
        var bits: UInt32 = 0
        var count = 0
        var out: [UInt8] = []
        for byte in encoded.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            bits = (bits << 6) | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8((bits >> UInt32(count)) & 0xFF))
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
