/// A small command-line parser in the shape of swift-argument-parser: each subcommand is a
/// type conforming to `SyncctlCommand` that declares its options and positionals in a
/// `CommandConfiguration`; help and usage are generated from that declaration.

/// One option a command accepts.
public struct OptionSpec: Sendable, Equatable {
    /// Long name without dashes, e.g. `wait`.
    public let name: String
    /// Placeholder for the value (`ID`), nil for a flag.
    public let valueName: String?
    /// One-line help.
    public let help: String
    /// Whether the command refuses to run without it (shown without brackets in the usage line).
    public let required: Bool

    /// A flag (`--wait`).
    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help, required: false)
    }
    /// An option with a value (`--keep local|remote`, also `--keep=local`).
    public static func option(_ name: String, value: String, required: Bool = false, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: value, help: help, required: required)
    }

    /// `--keep local|remote`.
    var synopsis: String { "--" + name + (valueName.map { " " + $0 } ?? "") }
}

/// One positional argument.
public struct PositionalSpec: Sendable, Equatable {
    /// Placeholder, e.g. `SOURCE`.
    public let name: String
    /// Whether it may be left out.
    public let optional: Bool
    /// One-line help.
    public let help: String
    /// Whether it may be given several times (`SOURCE…`); only the last positional may.
    public let repeating: Bool

    /// Creates a positional.
    public init(_ name: String, optional: Bool = false, repeating: Bool = false, help: String) {
        self.name = name
        self.optional = optional
        self.repeating = repeating
        self.help = help
    }

    /// `SOURCE`, `[SOURCE]`, `[SOURCE...]`.
    var synopsis: String {
        let text = name + (repeating ? "..." : "")
        return optional ? "[\(text)]" : text
    }
}

/// What a subcommand accepts and says about itself.
public struct CommandConfiguration: Sendable {
    /// The subcommand's name, e.g. `refresh`.
    public let name: String
    /// One line for the command list.
    public let abstract: String
    /// Paragraph shown under the usage line.
    public let discussion: String
    public let positionals: [PositionalSpec]
    public let options: [OptionSpec]
    /// Whether the global `--json` changes what the command prints (then the usage line shows it).
    public let printsJSON: Bool

    /// Creates a configuration.
    public init(name: String, abstract: String, discussion: String = "", positionals: [PositionalSpec] = [], options: [OptionSpec] = [],
                printsJSON: Bool = false) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.options = options
        self.printsJSON = printsJSON
    }

    /// `syncctl refresh [SOURCE] [--wait] [--json]`: the command's own arguments, as syncctl(1) lists them.
    public var usage: String {
        var parts = ["syncctl", name]
        for positional in positionals { parts.append(positional.synopsis) }
        for option in options { parts.append(option.required ? option.synopsis : "[\(option.synopsis)]") }
        if printsJSON { parts.append("[--json]") }
        return parts.joined(separator: " ")
    }

    /// The generated `--help` text.
    public var help: String {
        var text = "Usage: \(usage)\n\n\(abstract)\n"
        if !discussion.isEmpty { text += "\n" + wrap(discussion, width: 79) + "\n" }
        if !positionals.isEmpty {
            text += "\nArguments:\n"
            for positional in positionals { text += helpLine(positional.name, positional.help) }
        }
        if !options.isEmpty {
            text += "\nOptions:\n"
            for option in options {
                text += helpLine(option.synopsis, option.help)
            }
        }
        text += "\n" + GlobalOptions.helpText
        return text
    }
}

/// Word-wraps a paragraph.
func wrap(_ text: String, width: Int) -> String {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
        if !line.isEmpty, line.count + 1 + word.count > width {
            lines.append(line)
            line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines.joined(separator: "\n")
}

/// Formats `  NAME               help`.
func helpLine(_ name: String, _ help: String) -> String {
    let padded = "  " + name
    return padded.count < 24 ? padded + String(repeating: " ", count: 24 - padded.count) + help + "\n"
        : padded + "\n" + String(repeating: " ", count: 24) + help + "\n"
}

/// A mistake on the command line (exit status 2).
public struct UsageError: Error, Sendable, Equatable {
    /// What is wrong, e.g. `missing argument SOURCE`.
    public let message: String
    /// The subcommand it concerns, for the "Try 'syncctl CMD --help'" hint.
    public let command: String?

    /// Creates a usage error.
    public init(_ message: String, command: String?) {
        self.message = message
        self.command = command
    }

    /// The two lines printed to stderr.
    public var text: String {
        let hint = command.map { "syncctl \($0) --help" } ?? "syncctl --help"
        return "syncctl: \(message)\nTry '\(hint)' for more information.\n"
    }
}

/// The arguments a command received, checked against its configuration.
public struct ParsedArguments: Sendable, Equatable {
    /// Positionals in order (missing optional ones are absent).
    public var positionals: [String] = []
    /// Flags given.
    public var flags: Set<String> = []
    /// Values of options given (the last one wins).
    public var values: [String: String] = [:]

    /// The positional at `index`, nil if not given.
    public func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }
}

/// `--json` modes (systemd's `--json=pretty|short`; plain `--json` is short).
public enum JSONMode: String, Sendable, Equatable {
    case short, pretty
}

/// Options every command accepts, before or after the command name.
public struct GlobalOptions: Sendable, Equatable {
    public var socket: String?
    public var user = false
    public var json: JSONMode?
    public var noLegend = false
    public var noPager = false
    public var help = false
    public var version = false
    /// `--json=help`: list the modes and exit.
    public var jsonHelp = false
    /// `--timeout=SEC`: seconds one call may take; 0 waits for ever; nil means the default.
    public var timeout: Double?

    /// Seconds a call waits for the daemon unless `--timeout` says otherwise (busctl's default).
    public static let defaultTimeout: Double = 25

    /// Creates default options.
    public init() {}

    /// How long a call may wait for the daemon: `--timeout`, else 25 s; nil waits for ever (`--timeout=0`,
    /// or a command that waits for as long as it needs, `refresh --wait` and `watch`, without `--timeout`).
    public func callTimeout(waitsAsLongAsNeeded: Bool) -> Double? {
        if let timeout { return timeout > 0 ? timeout : nil }
        return waitsAsLongAsNeeded ? nil : GlobalOptions.defaultTimeout
    }

    static let helpText = """
        Global options:
          --socket PATH         Talk to the daemon at PATH (default $SYNCD_SOCKET, else
                                /run/syncd/io.syncd.Manager; with --user
                                $XDG_RUNTIME_DIR/syncd/io.syncd.Manager)
          --user                Talk to the user's daemon
          --json[=MODE]         Print JSON: short (plain --json), pretty, off;
                                --json=help lists the modes
          --timeout=SEC         Give up on a daemon that does not answer within SEC
                                seconds (default 25; 0 waits for ever; refresh --wait
                                and watch wait as long as they need unless given)
          --no-legend           Leave out headers and footers
          --no-pager            Do not pipe output into a pager (syncctl never pages)
          -h, --help            Show help and exit
          --version             Show the version and exit

        """
}

/// A fully parsed command line.
public struct Invocation: Sendable, Equatable {
    public var globals: GlobalOptions
    /// The subcommand's name, nil when only global options were given.
    public var command: String?
    public var arguments: ParsedArguments
}

/// Parses `syncctl` arguments (without the program name) against the known commands.
public func parseCommandLine(_ arguments: [String], commands: [CommandConfiguration]) throws(UsageError) -> Invocation {
    var globals = GlobalOptions()
    var configuration: CommandConfiguration?
    var parsed = ParsedArguments()
    var onlyPositionals = false
    var index = 0

    func commandName() -> String? { configuration?.name }

    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
            if !onlyPositionals && argument == "--" { onlyPositionals = true; continue }
            guard let current = configuration else {
                guard let match = commands.first(where: { $0.name == argument }) else {
                    throw UsageError("unknown command '\(argument)'", command: nil)
                }
                configuration = match
                continue
            }
            guard parsed.positionals.count < current.positionals.count || current.positionals.last?.repeating == true else {
                throw UsageError("unexpected argument '\(argument)'", command: current.name)
            }
            parsed.positionals.append(argument)
            continue
        }
        if argument == "--" { onlyPositionals = true; continue }
        // Split --name=value.
        var name = argument
        var inlineValue: String?
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            name = String(argument[..<equals])
            inlineValue = String(argument[argument.index(after: equals)...])
        }
        func value(for option: String) throws(UsageError) -> String {
            if let inlineValue { return inlineValue }
            guard index < arguments.count else { throw UsageError("option '\(option)' needs a value", command: commandName()) }
            index += 1
            return arguments[index - 1]
        }
        func noValue() throws(UsageError) {
            if inlineValue != nil { throw UsageError("option '\(name)' takes no value", command: commandName()) }
        }
        switch name {
        case "-h", "--help": try noValue(); globals.help = true
        case "--version": try noValue(); globals.version = true
        case "--user": try noValue(); globals.user = true
        case "--no-legend": try noValue(); globals.noLegend = true
        case "--no-pager": try noValue(); globals.noPager = true
        case "--socket":
            let path = try value(for: name)
            guard !path.isEmpty else { throw UsageError("option '--socket' needs a path", command: commandName()) }
            globals.socket = path
        case "--json":
            // Only the attached form takes a value, so `--json SOURCE` stays unambiguous.
            switch inlineValue {
            case nil, "short"?: globals.json = .short
            case "pretty"?: globals.json = .pretty
            case "off"?: globals.json = nil
            case "help"?: globals.jsonHelp = true
            case let other?:
                throw UsageError("invalid --json mode '\(other)' (expected short, pretty or off; --json=help lists them)",
                                 command: commandName())
            }
        case "--timeout":
            let text = try value(for: name)
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw UsageError("invalid --timeout '\(text)' (expected seconds, e.g. 10 or 2.5; 0 waits for ever)",
                                 command: commandName())
            }
            globals.timeout = seconds
        default:
            guard name.hasPrefix("--"), let current = configuration,
                  let option = current.options.first(where: { "--" + $0.name == name }) else {
                throw UsageError("unknown option '\(name)'", command: commandName())
            }
            if option.valueName != nil {
                parsed.values[option.name] = try value(for: name)
            } else {
                try noValue()
                parsed.flags.insert(option.name)
            }
        }
    }
    if !globals.help && !globals.version && !globals.jsonHelp, let current = configuration {
        let required = current.positionals.filter { !$0.optional }.count
        if parsed.positionals.count < required {
            throw UsageError("missing argument \(current.positionals[parsed.positionals.count].name)", command: current.name)
        }
    }
    return Invocation(globals: globals, command: configuration?.name, arguments: parsed)
}
