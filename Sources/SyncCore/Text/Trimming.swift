// The one trimming helper of the code base (configuration lines, HTTP header values, pid files).

extension Character {
    /// A space or a tab: the only blanks inside a configuration line, and HTTP's optional
    /// whitespace (OWS, RFC 9110 §5.6.3).
    public var isBlank: Bool { self == " " || self == "\t" }
}

extension StringProtocol {
    /// The text without the leading and trailing characters `isTrimmed` accepts (by default any
    /// whitespace, line breaks included).
    public func trimmed(where isTrimmed: (Character) -> Bool = \.isWhitespace) -> String {
        guard let start = firstIndex(where: { !isTrimmed($0) }), let end = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[start...end])
    }

    /// The text without the trailing characters `isTrimmed` accepts.
    public func trimmingTrailing(where isTrimmed: (Character) -> Bool) -> String {
        guard let end = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[...end])
    }
}
