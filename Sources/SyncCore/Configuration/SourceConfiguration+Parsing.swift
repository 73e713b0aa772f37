// Parsing one sources.d/*.source file: exactly one [Source] section.

extension ConfigurationParser {
    /// Keys of `[Source]`. `Name=` and `Header=` are handled here too; the
    /// cross-key rules (URL required, file URLs read-only, tokens only over
    /// https or to loopback) are checked after the whole file is read.
    static var sourceSection: ConfigurationSection<SourceConfiguration> {
        typealias Setting = ConfigurationSetting<SourceConfiguration>
        let defaults = SourceConfiguration(name: "", url: "", location: SourceLocation(file: "", line: 0))
        return ConfigurationSection(name: "Source", settings: [
            // The default name (the file stem) is filled in by parseSource.
            .value("Name", \.name, default: "", ConfigurationSyntax.sourceName),
            .value("URL", \.url, default: "") { text throws(ValueError) in
                _ = try URLSyntax.parse(text, schemes: ["http", "https", "file"])
                return text
            },
            .value("IDField", \.idField, default: defaults.idField) { $0 },
            .value("VersionField", \.versionField, default: nil) { $0 },
            pointer("RecordsPath", \.recordsPath, \.recordsPathText, defaults: defaults, example: nil),
            .value("Pagination", \.pagination, default: defaults.pagination) { text throws(ValueError) in
                guard let mode = PaginationMode(rawValue: text) else {
                    let names = PaginationMode.allCases.map(\.rawValue)
                    throw ValueError("invalid pagination \"\(text)\"; use \(ConfigurationText.alternatives(names))")
                }
                return mode
            },
            pointer("NextPath", \.nextPath, \.nextPathText, defaults: defaults, example: "/next"),
            pointer("CursorPath", \.cursorPath, \.cursorPathText, defaults: defaults, example: "/meta/next_cursor"),
            .value("CursorParameter", \.cursorParameter, default: defaults.cursorParameter, queryParameter),
            .value("PageParameter", \.pageParameter, default: defaults.pageParameter, queryParameter),
            .value("LimitParameter", \.limitParameter, default: defaults.limitParameter, queryParameter),
            .value("OffsetParameter", \.offsetParameter, default: defaults.offsetParameter, queryParameter),
            pointer("TotalPath", \.totalPath, \.totalPathText, defaults: defaults, example: "/count"),
            pointer("HasMorePath", \.hasMorePath, \.hasMorePathText, defaults: defaults, example: "/has_more"),
            .value("NextHeader", \.nextHeader, default: defaults.nextHeader) { text throws(ValueError) in
                guard ConfigurationSyntax.isToken(Substring(text)) else {
                    throw ValueError("invalid header name \"\(text)\"; use letters, digits and \"-\", e.g. Next-Page")
                }
                return text
            },
            .value("MaxPages", \.maxPages, default: defaults.maxPages) { text throws(ValueError) in
                guard let number = Int(text), number >= 1, number <= 1_000_000 else {
                    throw ValueError("invalid page count \"\(text)\"; use a number from 1 to 1000000")
                }
                return number
            },
            .value("ListingTimeoutSec", \.listingTimeout, default: defaults.listingTimeout, Setting.positiveTimeSpan),
            .value("StagePagesAfterSec", \.stagePagesAfter, default: defaults.stagePagesAfter) { text throws(ValueError) in
                try TimeSpan.parse(text)
            },
            // Repeatable like Header=: each assignment appends (space-separated origins), an empty one clears.
            ConfigurationSetting(
                key: "AllowedOrigins",
                assign: { (source: inout SourceConfiguration, text: String) throws(ValueError) in
                    for word in text.split(separator: " ") {
                        source.allowedOrigins.append(try Self.origin(String(word)))
                    }
                },
                reset: { source in source.allowedOrigins = [] }),
            .value("ItemURL", \.itemURLTemplate, default: nil) { text throws(ValueError) in
                _ = try URLSyntax.parse(text.replacingEvery("{id}", with: "0"), schemes: ["http", "https"])
                guard text.contains("{id}") else {
                    throw ValueError("needs {id} where the record's ID goes, e.g. https://example.com/api/notes/{id}/")
                }
                return text
            },
            .value("ClientIDField", \.clientIDField, default: nil) { $0 },
            .value("SendClientID", \.sendClientID, default: defaults.sendClientID, BooleanValue.parse),
            .value("LostCreateWaitSec", \.lostCreateWaitSetting, default: nil) { text throws(ValueError) in
                try Setting.positiveTimeSpan(text)
            },
            // Repeatable: each assignment appends, an empty one clears the list.
            ConfigurationSetting(
                key: "Header",
                assign: { (source: inout SourceConfiguration, text: String) throws(ValueError) in
                    source.headers.append(try ConfigurationSyntax.header(text))
                },
                reset: { source in source.headers = [] }),
            .value("BearerTokenCredential", \.bearerTokenCredential, default: nil) { text throws(ValueError) in
                try ConfigurationSyntax.credentialName(text)
            },
            .value("TimeoutSec", \.timeout, default: defaults.timeout, Setting.positiveTimeSpan),
            .value("MaxBytes", \.maxBytes, default: defaults.maxBytes) { text throws(ValueError) in
                let size = try ByteSize.parse(text)
                guard size > 0 else { throw ValueError("must be greater than 0, e.g. 64M") }
                return size
            },
            .value("MaxRecordBytes", \.maxRecordBytes, default: defaults.maxRecordBytes) { text throws(ValueError) in
                let size = try ByteSize.parse(text)
                guard size > 0, size <= SourceConfiguration.maxServableRecordBytes else {
                    throw ValueError("must be from 1 to 32M: syncctl get and the List call return a record whole, "
                                     + "in one reply of at most 64 MiB")
                }
                return size
            },
            .value("AllowEmpty", \.allowEmpty, default: defaults.allowEmpty, BooleanValue.parse),
            .value("Writable", \.writable, default: defaults.writable, BooleanValue.parse),
            .value("ConflictPolicy", \.conflictPolicy, default: defaults.conflictPolicy) { text throws(ValueError) in
                guard let policy = ConflictPolicy(rawValue: text) else {
                    let names = ConflictPolicy.allCases.map(\.rawValue)
                    throw ValueError(
                        "invalid conflict policy \"\(text)\"; use \(ConfigurationText.alternatives(names))")
                }
                return policy
            },
            .value("DiscardedRetentionSec", \.discardedRetention, default: defaults.discardedRetention, Setting.positiveTimeSpan),
            pointer("RecordEnvelope", \.recordEnvelope, \.recordEnvelopeText, defaults: defaults, example: nil),
            .value("Delta", \.delta.mode, default: defaults.delta.mode) { text throws(ValueError) in
                guard let mode = DeltaMode(rawValue: text) else {
                    throw ValueError("invalid delta mode \"\(text)\"; use \(ConfigurationText.alternatives(DeltaMode.allCases.map(\.rawValue)))")
                }
                return mode
            },
            pointer("DeltaField", \.delta.field, \.delta.fieldText, defaults: defaults, example: "/last_modified"),
            .value("DeltaQuery", \.delta.query, default: defaults.delta.query, DeltaSettings.query),
            pointer("DeltaTokenPath", \.delta.tokenPath, \.delta.tokenPathText, defaults: defaults, example: "/nextSyncToken"),
            pointer("DeletedPath", \.delta.deletedPath, \.delta.deletedPathText, defaults: defaults, example: "/deleted"),
            ConfigurationSetting(
                key: "DeletedValue",
                assign: { (source: inout SourceConfiguration, text: String) throws(ValueError) in
                    source.delta.deletedValue = try DeltaSettings.deletedValue(text)
                    source.delta.deletedValueText = text
                },
                reset: { source in
                    source.delta.deletedValue = defaults.delta.deletedValue
                    source.delta.deletedValueText = defaults.delta.deletedValueText
                }),
            .value("DeltaExpired", \.delta.expiredStatuses, default: defaults.delta.expiredStatuses, DeltaSettings.statuses),
            .value("FullResyncIntervalSec", \.delta.fullResyncInterval, default: defaults.delta.fullResyncInterval, Setting.positiveTimeSpan),
        ])
    }

    /// A query parameter's name (`CursorParameter=`, `PageParameter=`, ...): unreserved characters only.
    static func queryParameter(_ text: String) throws(ValueError) -> String {
        guard !text.isEmpty, text.utf8.allSatisfy({ ConfigurationText.isLetterOrDigit($0) || "-_.~".utf8.contains($0) }) else {
            throw ValueError("invalid query parameter name \"\(text)\"; use letters, digits, \"-\", \"_\", \".\" or \"~\"")
        }
        return text
    }

    /// A JSON pointer into a response. With an `example`, it must point inside the response (`NextPath=`,
    /// `CursorPath=`, `TotalPath=`, `HasMorePath=`) and an empty value restores the default; without one, the empty
    /// pointer (the whole body) is a value like any other (`RecordsPath=`, `RecordEnvelope=`).
    static func pointer(
        _ key: String, _ path: WritableKeyPath<SourceConfiguration, [String]>, _ text: WritableKeyPath<SourceConfiguration, String>,
        defaults: SourceConfiguration, example: String?
    ) -> ConfigurationSetting<SourceConfiguration> {
        ConfigurationSetting(
            key: key,
            assign: { (source: inout SourceConfiguration, value: String) throws(ValueError) in
                let tokens = try JSONPointerSyntax.parse(value)
                if let example, tokens.isEmpty { throw ValueError("must point inside the response, e.g. \(example)") }
                source[keyPath: path] = tokens
                source[keyPath: text] = value
            },
            reset: { source in
                source[keyPath: path] = defaults[keyPath: path]
                source[keyPath: text] = defaults[keyPath: text]
            })
    }

    /// One `AllowedOrigins=` word: `scheme://host[:port]`, http or https, nothing after the authority.
    static func origin(_ word: String) throws(ValueError) -> URLOrigin {
        let trimmed = word.hasSuffix("/") ? String(word.dropLast()) : word
        _ = try URLSyntax.parse(trimmed, schemes: ["http", "https"])
        guard let origin = URLOrigin(url: trimmed), let slashes = trimmed.firstRange(of: "://"),
              !trimmed[slashes.upperBound...].contains(where: { $0 == "/" || $0 == "?" || $0 == "#" })
        else {
            throw ValueError("invalid origin \"\(Redaction.quotingMalformedURL(word))\"; write scheme://host or scheme://host:port, e.g. https://cdn.example.com")
        }
        return origin
    }

    mutating func parseSource(_ file: ConfigurationFile) {
        startFile()
        let (lines, syntaxProblems) = INILexer.lex(file)
        for problem in syntaxProblems { report(problem.message, at: problem.location) }
        let section = Self.sourceSection
        let stem = SourceConfiguration.defaultName(forFile: file.path)
        var source = SourceConfiguration(name: "", url: "", location: SourceLocation(file: file.path, line: 1))
        var sectionLine: Int?
        var inSource = false
        var inExtension = false
        var lastAssigned: [String: SourceLocation] = [:]
        // Keys whose last value was bad (and already reported).
        var failedKeys: Set<String> = []
        for entry in lines {
            let location = SourceLocation(file: file.path, line: entry.line)
            switch entry.kind {
            case .section("Source") where sectionLine == nil:
                inExtension = false
                sectionLine = entry.line
                source.location = location
                inSource = true
            case .section("Source"):
                inSource = false
                inExtension = false
                report("a second [Source] section; each .source file holds one source, put this one in its own file",
                       at: location)
            case .section(let name) where name.hasPrefix("X-"):
                inSource = false  // an extension section, ignored with its keys as systemd does
                inExtension = true
            case .assignment(let key, _) where key.hasPrefix("X-") || inExtension:
                continue  // an extension key (systemd.unit(5)), or a key of an extension section: ignored
            case .section(let name):
                inSource = false
                inExtension = false
                let hint = Self.mainSections.contains { $0.name == name }
                    ? "[\(name)] belongs in syncd.conf" : "a .source file has only [Source]"
                report("unknown section [\(name)]; \(hint)", at: location)
            case .assignment(let key, let value):
                guard sectionLine != nil else {
                    report("key \"\(key)\" outside a section; put it below [Source]", at: location)
                    continue
                }
                guard inSource else { continue }  // inside a section already reported
                guard let setting = section.setting(for: key) else {
                    report(section.unknownKeyMessage(key, otherSections: []), at: location)
                    continue
                }
                if let problem = Self.apply(setting, value: value, to: &source) {
                    report(problem, at: location)
                    failedKeys.insert(key)
                } else {
                    failedKeys.remove(key)
                    lastAssigned[key] = location
                }
            }
        }
        guard let sectionLine else {
            if lines.isEmpty {
                report("no [Source] section; a .source file describes one source: [Source] and at least URL=",
                       at: SourceLocation(file: file.path, line: 1))
            }
            return
        }
        let sectionLocation = SourceLocation(file: file.path, line: sectionLine)
        // Names are checked for duplicates even when the source has other problems, so one
        // --check-config run reports everything a person has to fix.
        let resolvedName = source.name.isEmpty ? stem : source.name
        let nameLocation = lastAssigned["Name"] ?? sectionLocation
        var duplicate = false
        if !failedKeys.contains("Name"), ConfigurationSyntax.isSourceName(resolvedName) {
            if let first = sourceNames[resolvedName] {
                report("duplicate source name \"\(resolvedName)\" (first defined at \(first)); give one of them another Name=",
                       at: nameLocation)
                duplicate = true
            } else {
                sourceNames[resolvedName] = nameLocation
            }
        }
        guard failedKeys.isEmpty, !duplicate else { return }  // already reported; cross-key rules would only add noise
        if checkSourceRules(&source, lastAssigned: lastAssigned, stem: stem, at: sectionLocation) {
            configuration.sources.append(source)
        }
    }

    /// The rules that involve several keys or the file name; reports each broken one.
    private mutating func checkSourceRules(
        _ source: inout SourceConfiguration, lastAssigned: [String: SourceLocation], stem: String,
        at sectionLocation: SourceLocation
    ) -> Bool {
        var valid = true
        if source.name.isEmpty {
            source.name = stem
            if !ConfigurationSyntax.isSourceName(stem) {
                report("the file name gives the invalid source name \"\(stem)\"; rename the file "
                       + "or set Name= (1 to 64 letters, digits, \"_\", \".\" or \"-\")", at: sectionLocation)
                valid = false
            }
        }
        guard !source.url.isEmpty else {
            report("missing URL=; set it to the collection's http, https or file URL", at: sectionLocation)
            return false
        }
        guard let url = try? URLSyntax.parse(source.url, schemes: ["http", "https", "file"]) else { return false }
        if source.writable && url.scheme == "file" {
            report("Writable=yes is not possible with a file: URL; local changes can only be pushed over http or https",
                   at: lastAssigned["Writable"] ?? sectionLocation)
            valid = false
        }
        if source.bearerTokenCredential != nil && url.scheme == "http" && !url.isLoopback {
            report("BearerTokenCredential= with a plain http URL to \(url.host) would send the token unencrypted; "
                   + "use https", at: lastAssigned["BearerTokenCredential"] ?? sectionLocation)
            valid = false
        }
        if source.pagination == .cursor && source.cursorPath.isEmpty {
            report("Pagination=cursor needs CursorPath=, the JSON pointer to the next page's token in the response, "
                   + "e.g. CursorPath=/meta/next_cursor", at: lastAssigned["Pagination"] ?? sectionLocation)
            valid = false
        }
        valid = checkDeltaRules(source, lastAssigned: lastAssigned, at: sectionLocation, scheme: url.scheme) && valid
        // A wait no longer than one request's own limit is no wait: the first listing after a timed-out POST
        // would already be past it, and a create still running on the server would be sent again.
        if let wait = source.lostCreateWaitSetting, wait <= source.timeout {
            report("LostCreateWaitSec= must be longer than TimeoutSec= (\(TimeSpan.format(source.timeout))): a create whose answer "
                   + "was lost would be sent again while the server may still work on it", at: lastAssigned["LostCreateWaitSec"] ?? sectionLocation)
            valid = false
        }
        return valid
    }

    /// The rules of `Delta=` and its keys (syncd.conf(5), "Incremental pull"); reports each broken one.
    private mutating func checkDeltaRules(_ source: SourceConfiguration, lastAssigned: [String: SourceLocation], at sectionLocation: SourceLocation,
                                          scheme: String) -> Bool {
        let delta = source.delta
        let at = lastAssigned["Delta"] ?? sectionLocation
        var valid = true
        func problem(_ message: String, at location: SourceLocation) {
            report(message, at: location)
            valid = false
        }
        guard delta.isEnabled else {
            for key in ["DeltaField", "DeltaQuery", "DeltaTokenPath", "DeletedPath", "DeletedValue", "DeltaExpired", "FullResyncIntervalSec"] {
                if let location = lastAssigned[key] {
                    let mode = key == "DeltaField" ? "Delta=watermark" : key == "DeltaTokenPath" ? "Delta=token" : "Delta=watermark or Delta=token"
                    problem("\(key)= has no effect without \(mode); set Delta= or remove it", at: location)
                }
            }
            return valid
        }
        if scheme == "file" { problem("Delta=\(delta.mode.rawValue) needs an http or https URL: a file: URL has no query to ask for changes", at: at) }
        let placeholder = DeltaSettings.placeholder
        switch delta.mode {
        case .none:
            break
        case .watermark:
            if delta.field.isEmpty {
                problem("Delta=watermark needs DeltaField=, the JSON pointer to each record's change stamp, e.g. DeltaField=/last_modified", at: at)
            }
            if !delta.query.contains(placeholder) {
                problem("Delta=watermark needs DeltaQuery= with \(placeholder) where the highest stamp goes, e.g. "
                        + "DeltaQuery=_since=\(placeholder)", at: lastAssigned["DeltaQuery"] ?? at)
            }
            if let location = lastAssigned["DeltaTokenPath"] { problem("DeltaTokenPath= is for Delta=token; Delta=watermark reads DeltaField=", at: location) }
        case .token:
            if delta.tokenPath.isEmpty {
                problem("Delta=token needs DeltaTokenPath=, the JSON pointer to the next checkpoint on a listing's last page, "
                        + "e.g. DeltaTokenPath=/nextSyncToken", at: at)
            }
            if !delta.query.isEmpty && !delta.query.contains(placeholder) {
                problem("DeltaQuery= needs \(placeholder) where the token goes, e.g. DeltaQuery=syncToken=\(placeholder); "
                        + "leave it empty when the token is the next request's URL", at: lastAssigned["DeltaQuery"] ?? at)
            }
            if let location = lastAssigned["DeltaField"] { problem("DeltaField= is for Delta=watermark; Delta=token reads DeltaTokenPath=", at: location) }
        }
        if lastAssigned["DeletedValue"] != nil && delta.deletedPath.isEmpty {
            problem("DeletedValue= needs DeletedPath=, the JSON pointer inside a record that marks it deleted, e.g. DeletedPath=/deleted",
                    at: lastAssigned["DeletedValue"] ?? at)
        }
        return valid
    }
}
