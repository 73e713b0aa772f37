// The systemd-style INI syntax (systemd.syntax(7)), split into lines that are
// either section headers or assignments. What the keys mean is not known here.
//
// Decisions, documented in syncd.conf(5):
// - `#` and `;` start a comment at the start of a line (after blanks), or
//   inside a line when preceded by a space or tab, so that syncd.conf(5)'s
//   `Account=default   # whose data…` works. A `#` or `;` with no blank
//   before it is part of the value (`http://h/p#frag`, `a;b`).
// - A line ending in `\` (after removing an inline comment) continues on the
//   next line; the pieces are joined with one space. Comment lines inside a
//   continuation are skipped, a blank line ends it. A `\` anywhere else is an
//   ordinary character; there are no other escapes and no quoting.
// - CRLF line ends and a UTF-8 byte order mark are accepted.

/// One meaningful line of an INI file.
struct INILine: Equatable {
    enum Kind: Equatable {
        /// `[Name]`.
        case section(String)
        /// `Key=Value`, both trimmed, comment removed.
        case assignment(key: String, value: String)
    }

    var kind: Kind
    /// The 1-based line the entry starts on.
    var line: Int
}

/// Splits configuration text into `INILine`s and syntax problems.
enum INILexer {
    static func lex(_ file: ConfigurationFile) -> (lines: [INILine], problems: [ConfigurationProblem]) {
        var lines: [INILine] = []
        var problems: [ConfigurationProblem] = []
        var pending: (text: String, line: Int, lastLine: Int)?

        func emit(_ text: String, line: Int) {
            switch classify(text) {
            case .success(let kind): lines.append(INILine(kind: kind, line: line))
            case .failure(let error):
                problems.append(ConfigurationProblem(location: SourceLocation(file: file.path, line: line), message: error.message))
            }
        }

        var text = Substring(file.text)
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        let physicalLines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, bytes) in physicalLines.enumerated() {
            let number = index + 1
            var raw = Substring(bytes)
            if raw.utf8.last == UInt8(ascii: "\r") { raw = Substring(raw.utf8.dropLast()) }
            let content = ConfigurationText.trimmed(withoutInlineComment(raw))
            if content.isEmpty {
                if raw.contains(where: { !ConfigurationText.isBlank($0) }) { continue }  // a comment line
                if let started = pending {  // a blank line ends a continuation
                    emit(started.text, line: started.line)
                    pending = nil
                }
                continue
            }
            if content.hasSuffix("\\") {
                let piece = ConfigurationText.trimmed(content.dropLast())
                if let started = pending {
                    pending = (started.text + " " + piece, started.line, number)
                } else {
                    pending = (piece, number, number)
                }
                continue
            }
            if let started = pending {
                emit(started.text + " " + content, line: started.line)
                pending = nil
            } else {
                emit(content, line: number)
            }
        }
        if let started = pending {
            problems.append(
                ConfigurationProblem(
                    location: SourceLocation(file: file.path, line: started.lastLine),
                    message: "line continuation (\"\\\" at the end of the line) at the end of the file; remove the \"\\\""))
            emit(started.text, line: started.line)
        }
        return (lines, problems)
    }

    /// The line up to a comment: `#` or `;` at the start (after blanks) or
    /// after a blank.
    static func withoutInlineComment(_ line: Substring) -> Substring {
        var previousIsBlank = true
        for index in line.indices {
            let character = line[index]
            if (character == "#" || character == ";") && previousIsBlank {
                return line[..<index]
            }
            previousIsBlank = ConfigurationText.isBlank(character)
        }
        return line
    }

    static func classify(_ text: String) -> Result<INILine.Kind, ValueError> {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count >= 2 else {
                return .failure(ValueError("invalid section header \"\(text)\"; write it as [Name]"))
            }
            let name = ConfigurationText.trimmed(text.dropFirst().dropLast())
            guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
                return .failure(ValueError("invalid section header \"\(text)\"; write it as [Name]"))
            }
            return .success(.section(name))
        }
        guard let equals = text.firstIndex(of: "=") else {
            // The line is not quoted: it may be a mistyped `Header X-Api-Key: SECRET`; only its first word is.
            return .failure(ValueError("expected \"Key=Value\", a [Section] header or a comment\(ConfigurationText.quotedLeadingName(text, as: ", not a line starting"))"))
        }
        let key = ConfigurationText.trimmed(text[..<equals])
        let value = ConfigurationText.trimmed(text[text.index(after: equals)...])
        if key.isEmpty {
            return .failure(ValueError("missing key before \"=\""))
        }
        if key.contains(where: ConfigurationText.isBlank) {
            return .failure(ValueError("invalid key\(ConfigurationText.quotedLeadingName(key)): keys have no spaces"))
        }
        return .success(.assignment(key: key, value: value))
    }
}
