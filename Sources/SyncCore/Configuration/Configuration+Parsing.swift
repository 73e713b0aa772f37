// Parsing syncd.conf, its drop-ins and the .source files into a new
// Configuration, collecting every problem (relayd's parse.y habit: report
// them all, then refuse the whole file set).

extension Configuration {
    /// Parses and validates a whole configuration.
    ///
    /// - Parameters:
    ///   - main: `syncd.conf`, or nil if there is none.
    ///   - dropIns: `syncd.conf.d/*.conf` in the order to apply them; a later
    ///     assignment of a key overrides an earlier one.
    ///   - sources: the `sources.d/*.source` files, one source each.
    /// - Returns: the configuration (sources sorted by name), or every problem
    ///   found, in the order the files were given (main, drop-ins, sources),
    ///   then by line.
    public static func parse(
        main: ConfigurationFile?, dropIns: [ConfigurationFile], sources: [ConfigurationFile]
    ) -> Result<Configuration, ConfigurationErrors> {
        var parser = ConfigurationParser()
        for file in (main.map { [$0] } ?? []) + dropIns {
            parser.parseMain(file)
        }
        parser.checkRetryDelays()
        for file in sources {
            parser.parseSource(file)
        }
        return parser.result()
    }
}

/// The state of one parse: the configuration so far and the problems found.
struct ConfigurationParser {
    var configuration = Configuration.defaults
    private var problems: [(fileOrder: Int, sequence: Int, problem: ConfigurationProblem)] = []
    private(set) var fileOrder = 0
    private var sequence = 0
    /// Where each main-file key was last assigned, by "Section.Key", with the order of assignment.
    private var assignments: [String: (sequence: Int, fileOrder: Int, location: SourceLocation)] = [:]
    /// The first definition of each source name.
    var sourceNames: [String: SourceLocation] = [:]

    /// Records a problem; `order` is the file's place in the parse, by default the file being read.
    mutating func report(_ message: String, at location: SourceLocation, fileOrder order: Int? = nil) {
        sequence += 1
        problems.append((order ?? fileOrder, sequence, ConfigurationProblem(location: location, message: message)))
    }

    func result() -> Result<Configuration, ConfigurationErrors> {
        if problems.isEmpty {
            var configuration = configuration
            configuration.sources.sort { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
            return .success(configuration)
        }
        return .failure(ConfigurationErrors(problems: sortedProblems()))
    }

    /// How many problems were reported so far.
    var problemCount: Int { problems.count }

    /// The problems reported after the first `count`, in the order they were found.
    func problems(since count: Int) -> [ConfigurationProblem] {
        problems[count...].map(\.problem)
    }

    /// Every problem in reading order (file, then line); `extra` ones (files that could not be read) first.
    func sortedProblems(adding extra: [ConfigurationProblem] = []) -> [ConfigurationProblem] {
        let sorted = problems.sorted {
            ($0.fileOrder, $0.problem.location.line, $0.sequence) < ($1.fileOrder, $1.problem.location.line, $1.sequence)
        }
        return extra + sorted.map(\.problem)
    }

    // MARK: syncd.conf and drop-ins

    /// The shortest time spans accepted (syncd.conf(5)): anything shorter would only load the server.
    enum Minimum {
        static let interval = Duration.seconds(10)
        static let randomizedDelay = Duration.seconds(1)
        static let retryDelay = Duration.milliseconds(100)
        static let reachabilityInterval = Duration.milliseconds(100)
    }

    // Computed, not stored: the closures and key paths are not Sendable.
    static var mainSections: [ConfigurationSection<Configuration>] {
        typealias Setting = ConfigurationSetting<Configuration>
        let defaults = Configuration.defaults
        return [
            ConfigurationSection(name: "Daemon", settings: [
                .value("Account", \.daemon.account, default: defaults.daemon.account, ConfigurationSyntax.account),
                .value("StateDirectory", \.daemon.stateDirectory, default: nil) { text throws(ValueError) in
                    try ConfigurationSyntax.absolutePath(text)
                },
                .value("CacheDirectory", \.daemon.cacheDirectory, default: nil) { text throws(ValueError) in
                    try ConfigurationSyntax.absolutePath(text)
                },
                .value("RuntimeDirectory", \.daemon.runtimeDirectory, default: nil) { text throws(ValueError) in
                    try ConfigurationSyntax.absolutePath(text)
                },
                .value("ControlGroup", \.daemon.controlGroup, default: defaults.daemon.controlGroup,
                       ConfigurationSyntax.groupName),
                .value("ReadGroup", \.daemon.readGroup, default: nil) { text throws(ValueError) in
                    try ConfigurationSyntax.groupName(text)
                },
            ]),
            ConfigurationSection(name: "Network", settings: [
                .value("WatchLinks", \.network.watchLinks, default: defaults.network.watchLinks, BooleanValue.parse),
                .value("Interfaces", \.network.interfaces, default: [], ConfigurationSyntax.interfaceNames),
                .value("ReachabilityURL", \.network.reachabilityURL, default: nil) { text throws(ValueError) in
                    _ = try URLSyntax.parse(text, schemes: ["http", "https"])
                    return text
                },
                .value("ReachabilityIntervalSec", \.network.reachabilityInterval,
                       default: defaults.network.reachabilityInterval,
                       Setting.timeSpan(atLeast: Minimum.reachabilityInterval, zeroTurnsOff: true)),
                .value("DebounceSec", \.network.debounce, default: defaults.network.debounce, TimeSpan.parse),
            ]),
            ConfigurationSection(name: "Refresh", settings: [
                .value("IntervalSec", \.refresh.interval, default: defaults.refresh.interval,
                       Setting.timeSpan(atLeast: Minimum.interval)),
                .value("RandomizedDelaySec", \.refresh.randomizedDelay, default: defaults.refresh.randomizedDelay,
                       Setting.timeSpan(atLeast: Minimum.randomizedDelay, zeroTurnsOff: true)),
            ]),
            ConfigurationSection(name: "Retry", settings: [
                .value("InitialDelaySec", \.retry.initialDelay, default: defaults.retry.initialDelay,
                       Setting.timeSpan(atLeast: Minimum.retryDelay)),
                .value("MaxDelaySec", \.retry.maxDelay, default: defaults.retry.maxDelay,
                       Setting.timeSpan(atLeast: Minimum.retryDelay)),
                .value("MaxAttempts", \.retry.maxAttempts, default: defaults.retry.maxAttempts) { text throws(ValueError) in
                    let count = try ConfigurationSyntax.integer(text)
                    guard count >= 1 else { throw ValueError("must be at least 1") }
                    return count
                },
            ]),
        ]
    }

    mutating func startFile() {
        fileOrder += 1
    }

    mutating func parseMain(_ file: ConfigurationFile) {
        startFile()
        let (lines, syntaxProblems) = INILexer.lex(file)
        for problem in syntaxProblems { report(problem.message, at: problem.location) }
        let sections = Self.mainSections
        // nil before the first header; .none after an unknown header, whose keys are skipped.
        var current: ConfigurationSection<Configuration>?? = nil
        for entry in lines {
            let location = SourceLocation(file: file.path, line: entry.line)
            switch entry.kind {
            case .section(let name) where name.hasPrefix("X-"):
                current = .some(nil)  // an extension section, ignored with its keys as systemd does
            case .assignment(let key, _) where key.hasPrefix("X-"):
                continue  // an extension key (systemd.unit(5)): ignored
            case .section(let name):
                if let section = sections.first(where: { $0.name == name }) {
                    current = .some(section)
                } else {
                    current = .some(nil)
                    report(Self.unknownMainSectionMessage(name, sections: sections), at: location)
                }
            case .assignment(let key, let value):
                switch current {
                case .none:
                    let home = sections.first { $0.setting(for: key) != nil }
                    report(
                        "key \"\(key)\" outside a section; put it below "
                            + (home.map { "[\($0.name)]" } ?? "a section header such as [Daemon]"),
                        at: location)
                case .some(.none):
                    continue  // inside an unknown section, already reported
                case .some(.some(let section)):
                    guard let setting = section.setting(for: key) else {
                        report(section.unknownKeyMessage(key, otherSections: sections), at: location)
                        continue
                    }
                    if let problem = Self.apply(setting, value: value, to: &configuration) {
                        report(problem, at: location)
                    } else {
                        sequence += 1
                        assignments["\(section.name).\(key)"] = (sequence, fileOrder, location)
                    }
                }
            }
        }
    }

    static func unknownMainSectionMessage(_ name: String, sections: [ConfigurationSection<Configuration>]) -> String {
        if name == "Source" {
            return "[Source] does not belong in syncd.conf; put each source in its own file sources.d/NAME.source"
        }
        let names = sections.map { "[\($0.name)]" }
        if let guess = ConfigurationText.suggestion(for: name, among: sections.map(\.name)) {
            return "unknown section [\(name)]; did you mean [\(guess)]?"
        }
        return "unknown section [\(name)]; use \(ConfigurationText.alternatives(names))"
    }

    /// Applies one assignment to `model`; returns the problem if the value is bad.
    static func apply<Model>(
        _ setting: ConfigurationSetting<Model>, value: String, to model: inout Model
    ) -> String? {
        if value.isEmpty {
            setting.reset(&model)
            return nil
        }
        do {
            try setting.assign(&model, value)
            return nil
        } catch {
            return "\(setting.key): \(error.message)"
        }
    }

    /// `MaxDelaySec` must not be below `InitialDelaySec`; checked after all
    /// drop-ins, reported at whichever of the two was assigned last.
    mutating func checkRetryDelays() {
        let retry = configuration.retry
        guard retry.maxDelay < retry.initialDelay else { return }
        let candidates = [assignments["Retry.MaxDelaySec"], assignments["Retry.InitialDelaySec"]].compactMap { $0 }
        guard let last = candidates.max(by: { $0.sequence < $1.sequence }) else { return }
        let message = "MaxDelaySec=\(TimeSpan.format(retry.maxDelay)) is shorter than InitialDelaySec="
            + "\(TimeSpan.format(retry.initialDelay)); raise MaxDelaySec or lower InitialDelaySec"
        report(message, at: last.location, fileOrder: last.fileOrder)
    }
}
