import Testing
#if canImport(Glibc)
import Glibc
#endif
import SyncCore

/// The files shipped in config/ must parse cleanly and say what the model says.
@Suite("shipped configuration examples")
struct ConfigurationExampleTests {
    /// The repository root, found from this file's path (Tests/SyncCoreTests/...).
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    static func read(_ relativePath: String) throws -> String {
        try #require(ExampleFile.text(atPath: root + "/" + relativePath))
    }

    @Test("config/syncd.conf parses to the defaults")
    func syncdConf() throws {
        let text = try Self.read("config/syncd.conf")
        #expect(ConfigurationFixture.configuration(main: text) == .defaults)
        // Every key is there, commented out: uncommenting them all still gives the defaults.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("#") && $0.contains("=") ? String($0.dropFirst()) : String($0) }
            .joined(separator: "\n")
        #expect(uncommented.split(separator: "\n").filter { $0.contains("=") && !$0.hasPrefix("#") }.count == 16)
        #expect(ConfigurationFixture.configuration(main: uncommented) == .defaults)
    }

    @Test("config/sources.d/posts.source.example parses as the seed server's posts")
    func exampleSource() throws {
        let text = try Self.read("config/sources.d/posts.source.example")
        let configuration = ConfigurationFixture.configuration(main: nil, sources: [("sources.d/posts.source", text)])
        let source = try #require(configuration?.sources.first)
        #expect(source.name == "posts")
        #expect(source.url == "http://localhost:3000/posts")
        #expect(source.idField == "id")
        #expect(source.headers == [HTTPHeader(name: "Accept", value: "application/json")])
        #expect(source.maxBytes == SourceConfiguration.defaultMaxBytes)
    }
}

/// Reads a small text file without Foundation (SyncCoreTests has no platform module).
enum ExampleFile {
    static func text(atPath path: String) -> String? {
        #if canImport(Glibc)
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
        #else
        return nil
        #endif
    }
}
