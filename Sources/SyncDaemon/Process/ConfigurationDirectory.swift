// Reading a configuration directory: the only I/O of configuration. The text
// goes to the pure parser in SyncCore (Configuration+Parsing.swift).
//
//   DIR/syncd.conf                main file (optional)
//   DIR/syncd.conf.d/*.conf       drop-ins, lexical (byte) order, later wins
//   DIR/sources.d/*.source        one source each, lexical order
//
// Missing directories and files mean defaults, as in systemd; a file that is
// there but cannot be read is an error, because silently ignoring it would
// run with a configuration the administrator did not write.

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
public import SyncCore
import SyncEngine

/// Finds and reads syncd's configuration files.
public enum ConfigurationDirectory {
    /// The largest configuration file read; a larger one is an error.
    public static let maximumFileSize = 1024 * 1024

    /// The directory used without `--config-dir`: `/etc/syncd`, or in user
    /// mode `$XDG_CONFIG_HOME/syncd`, else `$HOME/.config/syncd` (XDG Base
    /// Directory Specification; a relative `$XDG_CONFIG_HOME` is ignored).
    public static func defaultDirectory(userMode: Bool, environment: [String: String]) -> String {
        guard userMode else { return "/etc/syncd" }
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") {
            return join(base, "syncd")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? passwdHome() ?? "/"
        return join(join(home, ".config"), "syncd")
    }

    /// Reads every configuration file below `directory` and parses them; any problem, in a `.source`
    /// file too, fails the whole (what `syncd --check-config` reports).
    ///
    /// - Returns: the configuration, or every problem: files that cannot be
    ///   read (`FILE: cannot read: reason`) as well as parse errors.
    public static func load(directory: String) -> Result<Configuration, ConfigurationErrors> {
        switch loadSkippingFailedSources(directory: directory) {
        case .failure(let errors): return .failure(errors)
        case .success(let loaded) where loaded.failedSources.isEmpty: return .success(loaded.configuration)
        case .success(let loaded): return .failure(ConfigurationErrors(problems: loaded.problems))
        }
    }

    /// Reads every configuration file below `directory`; a `.source` file with a problem (unreadable,
    /// invalid, a dangling link, a name that is not UTF-8) is left out and listed as failed.
    ///
    /// - Returns: the configuration and the failed sources, or every problem when `syncd.conf`, a drop-in
    ///   or one of the directories has one.
    public static func loadSkippingFailedSources(directory: String) -> Result<LoadedConfiguration, ConfigurationErrors> {
        var problems: [ConfigurationProblem] = []
        let mainPath = join(directory, "syncd.conf")
        let dropInDirectory = join(directory, "syncd.conf.d")
        let sourceDirectory = join(directory, "sources.d")
        let dropInPaths = listFiles(in: dropInDirectory, suffix: ".conf", problems: &problems)
        var sourceProblems: [ConfigurationProblem] = []
        let sourcePaths = listFiles(in: sourceDirectory, suffix: ".source", problems: &problems,
                                    entryProblems: &sourceProblems)
        let main = readFile(mainPath, problems: &problems)
        let dropIns = dropInPaths.compactMap { readFile($0, problems: &problems) }
        let sources = sourcePaths.compactMap { readFile($0, problems: &sourceProblems) }
        let unreadable = sourceProblems.map { problem in
            FailedSource(name: PrintableText.escaping(sourceName(forFile: problem.location.file)),
                         file: problem.location.file, problems: [problem])
        }
        let parsed = Configuration.load(main: main, dropIns: dropIns, sources: sources, unreadableSources: unreadable)
        guard !problems.isEmpty else {
            guard case .success(var loaded) = parsed else { return parsed }
            // Reading order: by file name bytes, as the directory was read.
            loaded.failedSources.sort { Array($0.file.utf8).lexicographicallyPrecedes(Array($1.file.utf8)) }
            return .success(loaded)
        }
        switch parsed {
        case .failure(let errors): problems += errors.problems
        case .success(let loaded): problems += loaded.problems
        }
        // Report in reading order: each directory before its files, then by line.
        let order = [mainPath, dropInDirectory] + dropInPaths + [sourceDirectory] + sourcePaths
        let rank = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let sorted = problems.enumerated().sorted { a, b in
            (rank[a.element.location.file] ?? order.count, a.element.location.line, a.offset)
                < (rank[b.element.location.file] ?? order.count, b.element.location.line, b.offset)
        }
        return .failure(ConfigurationErrors(problems: sorted.map(\.element)))
    }

    /// The source name a file gives when it has no `Name=`: its stem
    /// (`sources.d/posts.source` → `posts`).
    public static func sourceName(forFile path: String) -> String {
        SourceConfiguration.defaultName(forFile: path)
    }

    // MARK: Files

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The paths of the non-hidden entries of `directory` ending in `suffix`,
    /// sorted by bytes (as systemd sorts drop-ins). A missing directory has none.
    /// A directory that cannot be read is a problem in `problems`; an entry whose
    /// name is not valid UTF-8 (it cannot be named in a message or a source name)
    /// is one in `entryProblems`, under its name with the bad bytes as `\xNN`.
    static func listFiles(in directory: String, suffix: String, problems: inout [ConfigurationProblem]) -> [String] {
        var entryProblems: [ConfigurationProblem] = []
        let paths = listFiles(in: directory, suffix: suffix, problems: &problems, entryProblems: &entryProblems)
        problems += entryProblems
        return paths
    }

    static func listFiles(in directory: String, suffix: String, problems: inout [ConfigurationProblem],
                          entryProblems: inout [ConfigurationProblem]) -> [String] {
        guard let stream = opendir(directory) else {
            let code = errno
            if code != ENOENT {
                problems.append(readProblem(directory, reason: errorDescription(code)))
            }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        let suffixBytes = Array(suffix.utf8)
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { problems.append(readProblem(directory, reason: errorDescription(errno))) }
                break
            }
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes.first == UInt8(ascii: ".") || bytes.count <= suffixBytes.count
                || !bytes.suffix(suffixBytes.count).elementsEqual(suffixBytes) { continue }
            if let escaped = PrintableText.escapingInvalidUTF8(bytes) {
                entryProblems.append(ConfigurationProblem(
                    location: SourceLocation(file: join(directory, escaped), line: 0),
                    message: "file name is not valid UTF-8; rename the file (e.g. \"mv\" it to a plain ASCII name)"))
                continue
            }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { join(directory, $0) }
    }

    /// The file's text, nil if it does not exist; a problem if it cannot be read.
    static func readFile(_ path: String, problems: inout [ConfigurationProblem]) -> ConfigurationFile? {
        switch readBytes(path) {
        case .success(nil):
            if let target = danglingLinkTarget(path) {
                problems.append(readProblem(
                    path, reason: "dangling symbolic link: its target \"\(target)\" does not exist; fix or remove the link"))
            }
            return nil
        case .success(let bytes?):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                problems.append(readProblem(path, reason: "not valid UTF-8; save the file as UTF-8"))
                return nil
            }
            return ConfigurationFile(path: path, text: text)
        case .failure(let reason):
            problems.append(readProblem(path, reason: reason.message))
            return nil
        }
    }

    /// Where the symbolic link at `path` points, if `path` is a link whose target does not exist.
    static func danglingLinkTarget(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            readlink(path, UnsafeMutableRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self), raw.count)
        }
        guard count >= 0 else { return "?" }
        let target = Array(buffer[..<count])
        return PrintableText.escapingInvalidUTF8(target) ?? String(decoding: target, as: UTF8.self)
    }

    static func readProblem(_ path: String, reason: String) -> ConfigurationProblem {
        ConfigurationProblem(location: SourceLocation(file: path, line: 0), message: "cannot read: \(reason)")
    }

    /// Reads at most `maximumFileSize` bytes; nil if the file does not exist.
    static func readBytes(_ path: String) -> Result<[UInt8]?, ValueError> {
        // O_NONBLOCK: a FIFO dropped into the directory must not hang the daemon.
        let descriptor = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard descriptor >= 0 else {
            let code = errno
            return code == ENOENT ? .success(nil) : .failure(ValueError(errorDescription(code)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(ValueError(errorDescription(errno))) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(ValueError(errorDescription(EISDIR)))
        default: return .failure(ValueError("not a regular file"))
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingEINTR { read(descriptor, raw.baseAddress, raw.count) }
            }
            if count < 0 { return .failure(ValueError(errorDescription(errno))) }
            if count == 0 { return .success(bytes) }
            bytes += buffer[..<count]
            if bytes.count > maximumFileSize {
                return .failure(ValueError("larger than 1 MiB; configuration files are limited to 1 MiB"))
            }
        }
    }

    /// strerror(3), e.g. "Permission denied".
    static func errorDescription(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }

    /// The home directory from the password database, for a missing `$HOME`.
    static func passwdHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        let home = String(cString: directory)
        return home.isEmpty ? nil : home
    }
}

extension Logger {
    /// Logs a rejected configuration: each problem at error priority as `FILE:LINE: message`, with
    /// `MESSAGE_ID=` "configuration rejected" and `CONFIG_FILE=`/`CONFIG_LINE=`.
    public func configurationRejected(_ problems: [ConfigurationProblem], source: String? = nil) {
        for problem in problems {
            error(problem.description, source: source, messageID: .configurationRejected, location: problem.location)
        }
    }

    /// Logs a `.source` file that is left out: its problems, then what that means.
    public func sourceFailed(_ failed: FailedSource) {
        configurationRejected(failed.problems, source: failed.name)
        forSource(failed.name).error("not loaded because of the configuration error above; the other sources run. "
                                     + "Fix the file, then 'syncctl reload'")
    }
}
