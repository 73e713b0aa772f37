// Where configuration problems are and how they are reported: relayd and
// OpenNTPD print `file:line: message`; so do we (CONVENTIONS.md, rule 3).

/// A place in a configuration file: a path and a 1-based line number.
///
/// Line 0 means "the file as a whole" (for example, it cannot be read) and is
/// printed without a line number.
public struct SourceLocation: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The path of the file, as it was given to the parser.
    public var file: String
    /// The 1-based line number, or 0 for the whole file.
    public var line: Int

    /// Creates a location.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// `FILE:LINE`, or `FILE` when the line is 0; control characters in the path escaped (`\x0a`).
    public var description: String {
        let path = PrintableText.escaping(file)
        return line > 0 ? "\(path):\(line)" : path
    }
}

/// One thing wrong with the configuration, with the place it was found.
public struct ConfigurationProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What is wrong and, where possible, what to do about it.
    public var message: String

    /// Creates a problem.
    public init(location: SourceLocation, message: String) {
        self.location = location
        self.message = message
    }

    /// `FILE:LINE: message`, with control characters escaped (`\x00`): a value quoted in the message
    /// may hold any byte the file held. A URL quoted in it shows no user information and no credential query
    /// values (`Redaction`): the problem goes to the log and to every caller of `GetStatus`.
    public var description: String {
        "\(location): \(PrintableText.escaping(Redaction.scrubbingURLs(in: message)))"
    }
}

/// Every problem found in one parse, in the order the files were read, then by line.
public struct ConfigurationErrors: Error, Equatable, Sendable, CustomStringConvertible {
    /// The problems; never empty when thrown or returned as a failure.
    public var problems: [ConfigurationProblem]

    /// Creates a collection of problems.
    public init(problems: [ConfigurationProblem]) {
        self.problems = problems
    }

    /// One `FILE:LINE: message` per line, without a trailing newline.
    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}

/// The text of one configuration file and the path it is reported under.
public struct ConfigurationFile: Equatable, Sendable {
    /// The path used in problem reports (and, for `.source` files, for the default name).
    public var path: String
    /// The whole text of the file.
    public var text: String

    /// Creates a file from its path and text.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}

/// Why a single value could not be used; the key and location are added by the parser.
public struct ValueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the value, e.g. `invalid time span "5 parsecs": unknown unit "parsecs"`.
    public var message: String

    /// Creates a value error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
