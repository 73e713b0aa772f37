#if canImport(Glibc)
import Glibc
#endif
import SyncCore
import Testing
@testable import SyncDaemon

/// A real temporary directory, removed by `remove()`.
struct TemporaryConfigurationDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/syncd-config-test.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = try #require(created.map { String(cString: $0) })
    }

    func write(_ relativePath: String, _ text: String) throws {
        let full = path + "/" + relativePath
        let parent = String(full[..<full.lastIndex(of: "/")!])
        _ = mkdir(parent, 0o755)
        let file = try #require(fopen(full, "w"))
        _ = text.withCString { fputs($0, file) }
        fclose(file)
    }

    func makeDirectory(_ relativePath: String) {
        _ = mkdir(path + "/" + relativePath, 0o755)
    }

    func remove() {
        try? DirectoryTree.remove(path)
    }
}

@Suite("ConfigurationDirectory")
struct ConfigurationDirectoryTests {
    @Test("default directories", arguments: [
        (false, ["XDG_CONFIG_HOME": "/x", "HOME": "/home/u"], "/etc/syncd"),
        (true, ["XDG_CONFIG_HOME": "/home/u/.cfg", "HOME": "/home/u"], "/home/u/.cfg/syncd"),
        (true, ["XDG_CONFIG_HOME": "/home/u/.cfg/", "HOME": "/home/u"], "/home/u/.cfg/syncd"),
        (true, ["HOME": "/home/u"], "/home/u/.config/syncd"),
        (true, ["XDG_CONFIG_HOME": "", "HOME": "/home/u"], "/home/u/.config/syncd"),
        (true, ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"], "/home/u/.config/syncd"),
    ])
    func defaultDirectory(userMode: Bool, environment: [String: String], expected: String) {
        #expect(ConfigurationDirectory.defaultDirectory(userMode: userMode, environment: environment) == expected)
    }

    @Test("user mode without HOME falls back to the password database")
    func noHome() {
        let directory = ConfigurationDirectory.defaultDirectory(userMode: true, environment: [:])
        #expect(directory.hasPrefix("/"))
        #expect(directory.hasSuffix("/.config/syncd"))
    }

    @Test("source names are file stems")
    func sourceNames() {
        #expect(ConfigurationDirectory.sourceName(forFile: "/etc/syncd/sources.d/posts.source") == "posts")
        #expect(ConfigurationDirectory.sourceName(forFile: "todo.items.source") == "todo.items")
    }

    @Test("a missing directory means defaults")
    func missingDirectory() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        let result = ConfigurationDirectory.load(directory: directory.path + "/does-not-exist")
        #expect(try result.get() == .defaults)
    }

    @Test("an empty directory means defaults")
    func emptyDirectory() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        #expect(try ConfigurationDirectory.load(directory: directory.path).get() == .defaults)
    }

    @Test("main file, drop-ins in lexical order, sources; other files ignored")
    func fullDirectory() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        try directory.write("syncd.conf", "[Daemon]\nAccount=main\n[Retry]\nMaxAttempts=2\n")
        try directory.write("syncd.conf.d/20-late.conf", "[Daemon]\nAccount=late\n")
        try directory.write("syncd.conf.d/10-early.conf", "[Daemon]\nAccount=early\nControlGroup=staff\n")
        try directory.write("syncd.conf.d/99-ignored.conf.disabled", "garbage\n")
        try directory.write("syncd.conf.d/.hidden.conf", "garbage\n")
        try directory.write("sources.d/posts.source", "[Source]\nURL=http://localhost:3000/posts\n")
        try directory.write("sources.d/albums.source", "[Source]\nURL=http://localhost:3000/albums\n")
        try directory.write("sources.d/posts.source.example", "garbage\n")
        try directory.write("sources.d/.swap.source", "garbage\n")
        try directory.write("sources.d/README", "garbage\n")
        let configuration = try ConfigurationDirectory.load(directory: directory.path).get()
        #expect(configuration.daemon.account == "late")
        #expect(configuration.daemon.controlGroup == "staff")
        #expect(configuration.retry.maxAttempts == 2)
        #expect(configuration.sources.map(\.name) == ["albums", "posts"])
        #expect(configuration.sources.last?.location == SourceLocation(file: directory.path + "/sources.d/posts.source", line: 1))
    }

    @Test("problems carry the full path and line")
    func problemPaths() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        try directory.write("syncd.conf", "[Daemon]\nAccount=..\n")
        try directory.write("sources.d/posts.source", "[Source]\n")
        let result = ConfigurationDirectory.load(directory: directory.path + "/")
        #expect(throws: ConfigurationErrors(problems: [
            ConfigurationProblem(
                location: SourceLocation(file: directory.path + "/syncd.conf", line: 2),
                message: "Account: invalid account \"..\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)"),
            ConfigurationProblem(
                location: SourceLocation(file: directory.path + "/sources.d/posts.source", line: 1),
                message: "missing URL=; set it to the collection's http, https or file URL"),
        ])) { try result.get() }
    }

    @Test("a directory where a file should be is a read error")
    func directoryAsFile() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        directory.makeDirectory("syncd.conf.d")
        directory.makeDirectory("syncd.conf.d/x.conf")
        try directory.write("syncd.conf.d/y.conf", "[Retry]\nMaxAttempts=0\n")
        try directory.write("syncd.conf", "[Daemon]\nAccount=..\n")
        let errors = try #require(ConfigurationDirectory.load(directory: directory.path).failure)
        #expect(errors.problems.map(\.description) == [
            "\(directory.path)/syncd.conf:2: Account: invalid account \"..\": use 1 to 64 letters, digits, \"_\", \".\", \"@\" or \"-\" (it becomes a directory name)",
            "\(directory.path)/syncd.conf.d/x.conf: cannot read: Is a directory",
            "\(directory.path)/syncd.conf.d/y.conf:2: MaxAttempts: must be at least 1",
        ])
    }

    @Test("a file over 1 MiB is a read error")
    func oversized() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        let line = "# " + String(repeating: "x", count: 1021) + "\n"
        try directory.write("syncd.conf", String(repeating: line, count: 1025))
        let errors = try #require(ConfigurationDirectory.load(directory: directory.path).failure)
        #expect(errors.description
            == "\(directory.path)/syncd.conf: cannot read: larger than 1 MiB; configuration files are limited to 1 MiB")
    }

    @Test("a file of exactly 1 MiB is fine")
    func exactlyLimit() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        let line = "# " + String(repeating: "x", count: 1021) + "\n"  // 1024 bytes
        try directory.write("syncd.conf", String(repeating: line, count: 1024))
        #expect(try ConfigurationDirectory.load(directory: directory.path).get() == .defaults)
    }

    @Test("a file that is not UTF-8 is a read error")
    func notUTF8() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        let path = directory.path + "/syncd.conf"
        let file = try #require(fopen(path, "w"))
        let bytes: [UInt8] = [0x5B, 0xFF, 0x5D, 0x0A]
        _ = fwrite(bytes, 1, bytes.count, file)
        fclose(file)
        let errors = try #require(ConfigurationDirectory.load(directory: directory.path).failure)
        #expect(errors.description == "\(path): cannot read: not valid UTF-8; save the file as UTF-8")
    }

    @Test("a configuration path that is a file is a read error")
    func directoryIsAFile() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        try directory.write("sources.d", "not a directory\n")
        let errors = try #require(ConfigurationDirectory.load(directory: directory.path).failure)
        #expect(errors.description == "\(directory.path)/sources.d: cannot read: Not a directory")
    }
}

extension Result {
    /// The error, if this is a failure.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// What a directory with broken `.source` entries loads to: the good sources, and each bad one reported.
@Suite("ConfigurationDirectory failed sources")
struct ConfigurationDirectoryFailedSourceTests {
    @Test("a file name that is not UTF-8 and a dangling link are reported; the good source still loads")
    func badEntriesAreReported() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        try directory.write("sources.d/good.source", "[Source]\nURL=http://localhost/good\n")
        // A file whose name is not valid UTF-8 (Latin-1 "é").
        let badName = directory.path + "/sources.d/caf\u{E9}.source"
        var raw = Array(badName.utf8.dropLast("é.source".utf8.count)) + [0xE9] + Array(".source".utf8) + [0]
        let file = raw.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { fopen($0, "w") }
        }
        try #require(file != nil)
        fclose(file)
        #expect(symlink(directory.path + "/nowhere.source", directory.path + "/sources.d/link.source") == 0)
        defer { unlink(directory.path + "/sources.d/link.source") }

        let loaded = try ConfigurationDirectory.loadSkippingFailedSources(directory: directory.path).get()
        #expect(loaded.configuration.sources.map(\.name) == ["good"])
        #expect(loaded.failedSources.map(\.problem) == [
            "\(directory.path)/sources.d/caf\\xe9.source: file name is not valid UTF-8; rename the file (e.g. \"mv\" it to a plain ASCII name)",
            "\(directory.path)/sources.d/link.source: cannot read: dangling symbolic link: its target \"\(directory.path)/nowhere.source\" does not exist; fix or remove the link",
        ])
        #expect(loaded.failedSources.map(\.name) == ["caf\\xe9", "link"])
        // --check-config's view: every problem fails the whole.
        guard case .failure(let errors) = ConfigurationDirectory.load(directory: directory.path) else {
            Issue.record("expected the strict load to fail")
            return
        }
        #expect(errors.problems.count == 2)
        raw.removeAll()
    }

    @Test("a dangling syncd.conf link is an error, not the defaults")
    func danglingMainFile() throws {
        let directory = try TemporaryConfigurationDirectory()
        defer { directory.remove() }
        #expect(symlink("/nonexistent/syncd.conf", directory.path + "/syncd.conf") == 0)
        defer { unlink(directory.path + "/syncd.conf") }
        guard case .failure(let errors) = ConfigurationDirectory.loadSkippingFailedSources(directory: directory.path) else {
            Issue.record("expected a failure")
            return
        }
        #expect(errors.problems.map(\.description) == [
            "\(directory.path)/syncd.conf: cannot read: dangling symbolic link: its target \"/nonexistent/syncd.conf\" does not exist; fix or remove the link",
        ])
    }
}
