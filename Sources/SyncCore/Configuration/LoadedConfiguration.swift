// A configuration that runs although some `.source` files are broken: an error
// in `syncd.conf` or a drop-in refuses the whole configuration, an error in a
// `.source` file disables that source only (syncd.conf(5), "FAILED SOURCES").

/// A `.source` file the daemon skipped because of a problem in it.
public struct FailedSource: Equatable, Sendable {
    /// The source's `Name=` when it was readable and valid, else the file stem.
    public var name: String
    /// The file, as it is reported (control bytes and invalid UTF-8 escaped).
    public var file: String
    /// Every problem found in the file; never empty.
    public var problems: [ConfigurationProblem]

    /// Creates a failed source.
    public init(name: String, file: String, problems: [ConfigurationProblem]) {
        self.name = name
        self.file = file
        self.problems = problems
    }

    /// The first problem as `FILE:LINE: message`, with a count of the others: what `syncctl status`
    /// shows after `failed: `.
    public var problem: String {
        guard let first = problems.first else { return "\(file): invalid" }
        let more = problems.count - 1
        return first.description + (more > 0 ? " (and \(more) more; run 'syncd --check-config')" : "")
    }
}

/// The configuration that runs, and the sources left out of it.
public struct LoadedConfiguration: Equatable, Sendable {
    /// `syncd.conf`, its drop-ins and the sources without problems.
    public var configuration: Configuration
    /// The `.source` files with problems, in reading order.
    public var failedSources: [FailedSource]

    /// Creates a loaded configuration.
    public init(configuration: Configuration, failedSources: [FailedSource] = []) {
        self.configuration = configuration
        self.failedSources = failedSources
    }

    /// Every problem of the failed sources, in reading order.
    public var problems: [ConfigurationProblem] {
        failedSources.flatMap(\.problems)
    }
}

extension Configuration {
    /// Parses a configuration, leaving out each `.source` file that has a problem.
    ///
    /// - Parameters:
    ///   - main: `syncd.conf`, or nil if there is none.
    ///   - dropIns: `syncd.conf.d/*.conf` in the order to apply them.
    ///   - sources: the `sources.d/*.source` files that could be read.
    ///   - unreadableSources: `.source` files that could not be read; they are reported as failed.
    /// - Returns: the configuration without the broken sources, or, when `syncd.conf` or a drop-in
    ///   has a problem, every problem found (the sources' too, so one check reports everything).
    public static func load(
        main: ConfigurationFile?, dropIns: [ConfigurationFile], sources: [ConfigurationFile],
        unreadableSources: [FailedSource] = []
    ) -> Result<LoadedConfiguration, ConfigurationErrors> {
        var parser = ConfigurationParser()
        for file in (main.map { [$0] } ?? []) + dropIns {
            parser.parseMain(file)
        }
        parser.checkRetryDelays()
        let mainProblems = parser.problemCount
        var failed = unreadableSources
        for file in sources {
            let before = parser.problemCount
            let namesBefore = Set(parser.sourceNames.keys)
            parser.parseSource(file)
            // By line, as --check-config reports them (syntax problems are found before the keys' values).
            let problems = parser.problems(since: before).enumerated()
                .sorted { ($0.element.location.line, $0.offset) < ($1.element.location.line, $1.offset) }.map(\.element)
            guard !problems.isEmpty else { continue }
            // A file with a problem never runs, even when the problem (an unknown key, say) did not stop its parse.
            parser.configuration.sources.removeAll { $0.location.file == file.path }
            let registered = parser.sourceNames.keys.first { !namesBefore.contains($0) }
            failed.append(FailedSource(
                name: registered ?? SourceConfiguration.defaultName(forFile: file.path), file: file.path,
                problems: problems))
        }
        if mainProblems > 0 {
            return .failure(ConfigurationErrors(problems: parser.sortedProblems(adding: unreadableSources.flatMap(\.problems))))
        }
        var configuration = parser.configuration
        configuration.sources.sort { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        return .success(LoadedConfiguration(configuration: configuration, failedSources: failed))
    }
}
