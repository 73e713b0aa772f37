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

    /// Reads every configuration file below `directory` and parses them.
    ///
    /// - Returns: the configuration, or every problem: files that cannot be
    ///   read (`FILE: cannot read: reason`) as well as parse errors.
    public static func load(directory: String) -> Result<Configuration, ConfigurationErrors> {
        var problems: [ConfigurationProblem] = []
        let mainPath = join(directory, "syncd.conf")
        let dropInDirectory = join(directory, "syncd.conf.d")
        let sourceDirectory = join(directory, "sources.d")
        let dropInPaths = listFiles(in: dropInDirectory, suffix: ".conf", problems: &problems)
        let sourcePaths = listFiles(in: sourceDirectory, suffix: ".source", problems: &problems)
        let main = readFile(mainPath, problems: &problems)
        let dropIns = dropInPaths.compactMap { readFile($0, problems: &problems) }
        let sources = sourcePaths.compactMap { readFile($0, problems: &problems) }
        let parsed = Configuration.parse(main: main, dropIns: dropIns, sources: sources)
        guard !problems.isEmpty else { return parsed }
        if case .failure(let errors) = parsed { problems += errors.problems }
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
    static func listFiles(in directory: String, suffix: String, problems: inout [ConfigurationProblem]) -> [String] {
        guard let stream = opendir(directory) else {
            let code = errno
            if code != ENOENT {
                problems.append(readProblem(directory, reason: errorDescription(code)))
            }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { problems.append(readProblem(directory, reason: errorDescription(errno))) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") || !name.hasSuffix(suffix) || name.utf8.count == suffix.utf8.count { continue }
            names.append(name)
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { join(directory, $0) }
    }

    /// The file's text, nil if it does not exist; a problem if it cannot be read.
    static func readFile(_ path: String, problems: inout [ConfigurationProblem]) -> ConfigurationFile? {
        switch readBytes(path) {
        case .success(nil):
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
