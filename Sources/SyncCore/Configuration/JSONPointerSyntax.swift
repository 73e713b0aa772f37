// RFC 6901 JSON pointers, for RecordsPath=: only the syntax; resolving a
// pointer against a document belongs to the JSON code.

/// Parses and formats JSON pointers (RFC 6901) as used by `RecordsPath=`.
public enum JSONPointerSyntax {
    /// Splits a JSON pointer into its reference tokens, unescaping `~1` to `/`
    /// and `~0` to `~` (RFC 6901, section 4). The empty pointer is `[]`, the
    /// whole document.
    ///
    /// - Throws: `ValueError` if the text is not empty and does not start with
    ///   `/`, or has a `~` not followed by `0` or `1`.
    public static func parse(_ text: String) throws(ValueError) -> [String] {
        if text.isEmpty { return [] }
        guard text.hasPrefix("/") else {
            throw ValueError("invalid JSON pointer \"\(text)\": must be empty or start with \"/\" (RFC 6901), e.g. /data")
        }
        var tokens: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let character = iterator.next() {
                guard character == "~" else {
                    token.append(character)
                    continue
                }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                case let other:
                    let escape = "~" + (other.map { String($0) } ?? "")
                    throw ValueError(
                        "invalid JSON pointer \"\(text)\": invalid escape \"\(escape)\"; use ~0 for \"~\" and ~1 for \"/\"")
                }
            }
            tokens.append(token)
        }
        return tokens
    }

    /// Joins reference tokens into a pointer, escaping `~` and `/` (RFC 6901).
    public static func format(_ tokens: [String]) -> String {
        tokens.map { "/" + $0.replacing("~", with: "~0").replacing("/", with: "~1") }.joined()
    }
}
