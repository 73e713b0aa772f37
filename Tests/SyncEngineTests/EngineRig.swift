import Foundation
import SyncStore
import Testing
@testable import SyncEngine

/// An engine over a fresh store and cache folder, talking to a `FakeCollection` through a `ScriptedTransport`,
/// on a `ManualClock`: a whole refresh, push and listing, runs in milliseconds, and every rule about time is
/// driven by moving the clock.
final class EngineRig {
    let directory = NSTemporaryDirectory() + "syncd-engine-\(UUID().uuidString)"
    let clock = ManualClock()
    let server: FakeCollection
    let transport: ScriptedTransport
    let engine: SyncEngine
    private(set) var source: SourceConfiguration

    /// `settings`: lines of the `[Source]` section besides `URL=` (as a user writes them in a `.source` file).
    init(_ settings: String = "Writable=yes\nVersionField=version", server: FakeCollection = FakeCollection(),
         shared: EngineShared = EngineShared(), sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        self.server = server
        transport = ScriptedTransport(clock: clock, server: { [server] in server.answer($0) })
        source = try Self.source(url: server.url, settings, sourceLocation: sourceLocation)
        try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
        engine = try SyncEngine(store: StateStore(path: directory + "/state.db"),
                                snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                                logger: Logger(journal: false, threshold: .error), environment: [:],
                                shared: shared, clock: clock.engineClock, transport: transport)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A source named "posts" from the text of its `.source` file, parsed as syncd parses it.
    static func source(url: String, _ settings: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> SourceConfiguration {
        let text = "[Source]\nName=posts\nURL=\(url)\n\(settings)\n"
        switch Configuration.parse(main: nil, dropIns: [], sources: [ConfigurationFile(path: "posts.source", text: text)]) {
        case .success(let configuration):
            return try #require(configuration.sources.first, sourceLocation: sourceLocation)
        case .failure(let errors):
            Issue.record("posts.source does not parse: \(errors.problems.map(\.description))", sourceLocation: sourceLocation)
            throw errors
        }
    }

    /// Changes the source's settings (as a reload would).
    func configure(_ settings: String) throws { source = try Self.source(url: server.url, settings) }

    /// One refresh: push, then listing.
    @discardableResult
    func refresh() -> RefreshResult { engine.refresh(source) }

    /// The refresh's failure message, nil when it succeeded.
    func refreshFailure() -> RefreshFailure? {
        if case .failed(let failure) = refresh() { return failure }
        return nil
    }

    /// A local change of record `id`.
    @discardableResult
    func put(_ id: String, _ fields: [(String, JSONValue)] = []) throws -> String {
        try engine.put(JSONObject([("id", .string(id))] + fields), into: source)
    }

    func delete(_ id: String) throws { try engine.delete(id: id, from: source) }

    /// The outbox of the source.
    func outbox() throws -> [OutboxRecord] { try engine.store.outbox(source: "posts") }

    /// The cache file apps read, parsed.
    func cacheFile() throws -> JSONObject {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/cache/posts.json")))
        return try #require(try JSONValue(parsing: bytes).objectValue)
    }

    /// The records of the cache file by ID.
    func cachedRecords() throws -> [String: JSONObject] {
        let records = try #require(cacheFile()["records"]?.arrayValue)
        return Dictionary(uniqueKeysWithValues: records.compactMap { record in
            record.objectValue.flatMap { object in (object["id"]?.stringValue ?? object["id"]?.integerText).map { ($0, object) } }
        })
    }

    /// The requests the engine made, "METHOD URL", since the last call.
    func requests() -> [String] {
        defer { seen = transport.requests.count }
        return Array(transport.log.dropFirst(seen))
    }
    private var seen = 0
}
