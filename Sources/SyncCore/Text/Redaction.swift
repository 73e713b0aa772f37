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
//   written, percent-encoded, JSON-escaped or base64-encoded, and also when a cut text ends in the first
//   characters of one.
// - Any URL in a text loses its user information (`https://[redacted]@host/`) and the values of its
//   credential query parameters (`?api_key=[redacted]`).
// - For everyone else (callers who are neither root, syncd's user nor in ControlGroup=, and the STATUS=
//   line every user can read), every query value of every URL is hidden (`?page=[redacted]`).

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
        if ["cookie", "sig", "code"].contains(lower) { return true }
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
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...].prefix { $0 != "#" }
            for pair in query.split(separator: "&") {
                guard let equals = pair.firstIndex(of: "="), isCredentialName(String(pair[..<equals])) else { continue }
                let value = String(pair[pair.index(after: equals)...])
                secrets.append(value)
                if let decoded = percentDecoded(value), decoded != value { secrets.append(decoded) }
            }
        }
        return secrets
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

    /// One URL after its "://": the user information replaced, credential (or all) query values hidden.
    private static func scrubbing(_ afterScheme: Substring, hidingEveryQueryValue: Bool) -> String {
        var out = ""
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            out += mark + authority[at...]
        } else {
            out += authority
        }
        let path = afterScheme[authorityEnd...]
        guard let question = path.firstIndex(of: "?") else { return out + path }
        out += path[...question]
        let queryEnd = path[question...].firstIndex(of: "#") ?? path.endIndex
        let query = path[path.index(after: question)..<queryEnd]
        out += query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            let value = pair[pair.index(after: equals)...]
            guard !value.isEmpty, value != Substring(mark), hidingEveryQueryValue || isCredentialName(String(name)) else { return String(pair) }
            return name + "=" + mark
        }.joined(separator: "&")
        return out + path[queryEnd...]
    }

    // MARK: Encodings

    /// A secret as written, percent-encoded (both hex cases), JSON-escaped and base64-encoded.
    static func encodedForms(of secret: String) -> Set<String> {
        var forms: Set<String> = [secret]
        // RFC 3986 §2.1: every byte but the unreserved characters as `%XX`.
        let encoded = Identifiers.pathSegment(secret)
        forms.insert(encoded)
        forms.insert(lowercasingPercentEscapes(encoded))
        // Form encoding writes a space as "+".
        forms.insert(encoded.replacingEvery("%20", with: "+"))
        var json = ""
        for character in secret {
            switch character {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "/": json += "\\/"
            default: json.append(character)
            }
        }
        forms.insert(json)
        // Padding is left off: the secret may be followed by more text inside the encoded block.
        let base64 = Base64.encode(Array(secret.utf8))
        forms.insert(String(base64.prefix { $0 != "=" }))
        return forms.filter { $0.count >= minimumSecretLength }
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
