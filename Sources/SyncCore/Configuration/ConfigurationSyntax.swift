// Validators for the string-valued settings. Each returns the value to store
// or throws a ValueError that says what is wrong and what would be accepted.

enum ConfigurationSyntax {
    /// A source name becomes a file name (`<source>.json`) and a key in the
    /// state database: `[A-Za-z0-9_.-]{1,64}`, not `.` or `..`.
    static func sourceName(_ text: String) throws(ValueError) -> String {
        guard isSourceName(text) else {
            throw ValueError("invalid source name \"\(text)\": use 1 to 64 letters, digits, \"_\", \".\" or \"-\"")
        }
        return text
    }

    static func isSourceName(_ text: String) -> Bool {
        ConfigurationText.isPlainName(text, maximumLength: 64) { byte in
            ConfigurationText.isLetterOrDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-")
        }
    }

    /// An account becomes a directory name: `[A-Za-z0-9_.@-]{1,64}`, not `.` or `..`.
    static func account(_ text: String) throws(ValueError) -> String {
        let valid = ConfigurationText.isPlainName(text, maximumLength: 64) { byte in
            ConfigurationText.isLetterOrDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "-")
        }
        guard valid else {
            throw ValueError(
                "invalid account \"\(text)\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)")
        }
        return text
    }

    /// A group name as useradd(8) and systemd accept it without relaxation:
    /// `[A-Za-z_][A-Za-z0-9_-]{0,30}`.
    static func groupName(_ text: String) throws(ValueError) -> String {
        let bytes = Array(text.utf8)
        let valid = !bytes.isEmpty && bytes.count <= 31
            && (ConfigurationText.isLetterOrDigit(bytes[0]) && !(bytes[0] >= 0x30 && bytes[0] <= 0x39)
                || bytes[0] == UInt8(ascii: "_"))
            && bytes.allSatisfy { ConfigurationText.isLetterOrDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
        guard valid else {
            throw ValueError(
                "invalid group name \"\(text)\": use a letter or \"_\" followed by up to 30 letters, digits, \"_\" or \"-\"")
        }
        return text
    }

    /// A network interface name as the kernel accepts it (dev_valid_name()):
    /// 1 to 15 bytes, no `/`, `:` or whitespace, not `.` or `..`.
    static func interfaceName(_ text: String) throws(ValueError) -> String {
        let valid = ConfigurationText.isPlainName(text, maximumLength: 15) { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: ":")
        }
        guard valid else {
            throw ValueError(
                "invalid interface name \"\(text)\": use at most 15 characters without \"/\", \":\" or spaces, e.g. eth0")
        }
        return text
    }

    /// A space-separated list of interface names.
    static func interfaceNames(_ text: String) throws(ValueError) -> [String] {
        var names: [String] = []
        for word in text.split(whereSeparator: ConfigurationText.isBlank) {
            let name = try interfaceName(String(word))
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// An absolute path, for the directory settings.
    static func absolutePath(_ text: String) throws(ValueError) -> String {
        guard text.hasPrefix("/") else {
            throw ValueError("\"\(text)\" is not an absolute path; start it with \"/\"")
        }
        guard !ConfigurationText.containsControlCharacter(text) else {
            throw ValueError("path \"\(text)\" contains a control character")
        }
        return text
    }

    /// A credential name: a plain file name inside `$CREDENTIALS_DIRECTORY`
    /// (systemd.exec(5), LoadCredential=), so no `/` and not `.` or `..`.
    static func credentialName(_ text: String) throws(ValueError) -> String {
        let valid = ConfigurationText.isPlainName(text, maximumLength: 255) { byte in
            byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: "/")
        }
        guard valid else {
            // Not quoted: a token pasted here instead of its credential's name must not reach everyone.
            throw ValueError(
                "invalid credential name (not shown, in case it is a pasted token): give the plain file name inside $CREDENTIALS_DIRECTORY (no \"/\"), as in LoadCredential=")
        }
        return text
    }

    /// A non-negative decimal integer.
    static func integer(_ text: String) throws(ValueError) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw ValueError("invalid number \"\(text)\": use a whole number such as 8")
        }
        guard let value = Int(text) else { throw ValueError("number \"\(text)\" is too large") }
        return value
    }

    /// A header field name is a token (RFC 9110, section 5.1 and 5.6.2).
    static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            ConfigurationText.isLetterOrDigit(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A `Header=` value: `Name: value`.
    static func header(_ text: String) throws(ValueError) -> HTTPHeader {
        // A mistyped line may still carry the secret (`X-Api-Key SECRET`): only its leading name is quoted.
        guard let colon = text.firstIndex(of: ":") else {
            throw ValueError("invalid header\(ConfigurationText.quotedLeadingName(text)): expected \"Name: value\" with a \":\" after the name, "
                             + "e.g. \"Accept: application/json\"")
        }
        let name = text[..<colon]
        let value = ConfigurationText.trimmed(text[text.index(after: colon)...])
        guard isToken(name) else {
            throw ValueError("invalid header name\(ConfigurationText.quotedLeadingName(name)): use letters, digits and \"-\" "
                             + "with no space before the \":\", e.g. \"Accept: application/json\"")
        }
        switch name.lowercased() {
        case "authorization", "proxy-authorization":
            throw ValueError(
                "header \"\(name)\" is not allowed: secrets do not belong in configuration files; put the token in a credential and set BearerTokenCredential=")
        case "host":
            throw ValueError("header \"Host\" is not allowed: it is taken from URL=")
        default:
            break
        }
        if text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw ValueError("header \"\(name)\" must not contain line breaks")
        }
        if ConfigurationText.containsControlCharacter(value, allowingTab: true) {
            throw ValueError("header \"\(name)\" contains a control character")
        }
        if value.isEmpty {
            throw ValueError("header \"\(name)\" has an empty value; give it a value or remove the line")
        }
        return HTTPHeader(name: String(name), value: value)
    }
}
