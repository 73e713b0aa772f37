// Small text helpers for the configuration parser, in a namespace so that they
// cannot collide with helpers elsewhere in SyncCore.

enum ConfigurationText {
    /// Spaces and tabs: the only whitespace inside a configuration line.
    static func isBlank(_ character: Character) -> Bool {
        character.isBlank
    }

    /// The text without leading and trailing spaces and tabs.
    static func trimmed(_ text: some StringProtocol) -> String {
        text.trimmed(where: \.isBlank)
    }

    /// For a message about a mistyped line that may carry a secret (`X-Api-Key SECRET`): ` "NAME …"` (or
    /// `lead "NAME"`), the name its text starts with (letters, digits, "-", "_", "."), when more follows;
    /// empty when the text is one word, which may be the secret itself. The rest is never quoted.
    static func quotedLeadingName(_ text: some StringProtocol, as lead: String = "") -> String {
        let name = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        guard !name.isEmpty, name.count < text.count else { return "" }
        return lead.isEmpty ? " \"\(name) …\"" : "\(lead) \"\(name)\""
    }

    /// Whether the text consists of 1...`maximumLength` ASCII characters from
    /// `allowed`, and is not `.` or `..` (these names become file names).
    static func isPlainName(_ text: String, maximumLength: Int, allowed: (UInt8) -> Bool) -> Bool {
        let bytes = Array(text.utf8)
        return !bytes.isEmpty && bytes.count <= maximumLength && text != "." && text != ".."
            && bytes.allSatisfy(allowed)
    }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// Whether the text contains a control character (C0, DEL; TAB only if `allowingTab` is false).
    static func containsControlCharacter(_ text: String, allowingTab: Bool = false) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && !(allowingTab && scalar == "\t")) || scalar.value == 0x7F
        }
    }

    /// The Levenshtein distance, for "did you mean" hints.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The candidate that `text` most likely misspells, if any is close enough:
    /// the same word in another letter case, or at most two edits away.
    static func suggestion(for text: String, among candidates: [String]) -> String? {
        if let sameLetters = candidates.first(where: { $0.lowercased() == text.lowercased() }) {
            return sameLetters
        }
        let scored = candidates.map { (candidate: $0, distance: editDistance($0.lowercased(), text.lowercased())) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= 2,
              best.distance < text.count else { return nil }
        return best.candidate
    }

    /// "a", "a or b", "a, b or c".
    static func alternatives(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " or " + items[items.count - 1]
    }
}
