import Foundation
import SyncCore
import SyncStore
import Testing
@testable import SyncEngine

/// `RecordPipeline`: scanned records added to a real store and cache file on a second thread, in order,
/// all of them; a failure of the writer stops the pipeline and leaves the stored listing as it was.
@Suite("RecordPipeline") struct RecordPipelineTests {
    /// A store with its cache folder in a temporary directory.
    final class Place {
        let directory = NSTemporaryDirectory() + "pipeline-" + UUID().uuidString
        var cache: String { directory + "/cache" }
        let store: StateStore
        init() throws {
            try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
            store = try StateStore(path: directory + "/state.db",
                                   cacheFolder: CacheFolder(directory: directory + "/cache", account: "test", group: nil))
        }
        var cacheFile: String { (try? String(contentsOfFile: cache + "/posts.json", encoding: .utf8)) ?? "" }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func body(_ id: Int, _ version: Int) -> [UInt8] { Array("{\"id\":\(id),\"title\":\"Post \(id)\",\"v\":\(version)}".utf8) }

    /// Feeds records `1...count` of `version` through a pipeline into a new listing of `store`.
    static func feed(_ count: Int, version: Int, into writer: ListingWriter) throws {
        let pipeline = RecordPipeline(writer: writer)
        for id in 1...count {
            let bytes = body(id, version)
            try bytes.withUnsafeBytes { raw in
                try pipeline.add(ScannedRecord(index: id - 1, id: RecordID(key: String(id), kind: .integer), version: String(version), bytes: raw))
            }
        }
        try pipeline.finish()
        #expect(pipeline.count == count)
    }

    static func metadata(_ time: String) -> ListingMetadata {
        ListingMetadata(url: "http://h/posts", etag: nil, lastModified: nil, time: time, allowEmpty: false)
    }

    /// 20,000 records (about 1 MiB) are many batches, more than `inFlight`; 100 fit in the last one.
    @Test(arguments: [20_000, 100]) func everyRecordReachesTheCacheFileInOrder(count: Int) throws {
        let place = try Place()
        let writer = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        try Self.feed(count, version: 1, into: writer)
        #expect(writer.count == count)
        _ = try writer.commit(Self.metadata("2026-12-01T06:00:00Z"))
        // Parsed: spaces pad the file's chunks to whole blocks (docs/syncd.cache.5.md).
        let document = try JSONSerialization.jsonObject(with: Data(place.cacheFile.utf8)) as? [String: Any]
        let records = try #require(document?["records"] as? [[String: Any]])
        #expect(records.map { $0["id"] as? Int } == Array(1...count), "the records, in order, each once")
        #expect(records.allSatisfy { $0["title"] as? String == "Post \($0["id"] as? Int ?? 0)" && $0["v"] as? Int == 1 })
        #expect(try place.store.state(of: "posts").recordCount == count)
    }

    /// 600 records (27 KB) never fill a batch: they are added on the caller's thread at `finish`, no thread
    /// started; 3000 (140 KB) go through the thread.
    @Test(arguments: [600, 3000]) func aWriterFailureStopsThePipelineAndTheStoredListingStays(count: Int) throws {
        let place = try Place()
        let first = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        try Self.feed(3000, version: 1, into: first)
        _ = try first.commit(Self.metadata("2026-12-01T06:00:00Z"))
        let before = place.cacheFile
        #expect(before.contains("{\"id\":3000,\"title\":\"Post 3000\",\"v\":1}"))

        // The next listing differs from its first chunk on, so its new cache file is created at once: with
        // the cache folder moved away, creating it fails on the pipeline's thread.
        let second = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T07:00:00Z", etag: nil))
        try FileManager.default.moveItem(atPath: place.cache, toPath: place.cache + ".away")
        #expect { try Self.feed(count, version: 2, into: second) } throws: { error in
            guard case .cacheFileWrite = error as? StoreError else { return false }
            let message = "\(error)"
            return message.hasPrefix("Failed to write cache file \(place.cache)/posts.json: ") && message.contains("open directory \(place.cache)")
        }
        #expect(second.count < count, "the writer stopped at the failure: \(second.count) records added")
        second.rollback()
        try FileManager.default.moveItem(atPath: place.cache + ".away", toPath: place.cache)

        #expect(place.cacheFile == before, "the cache file is untouched")
        let state = try place.store.state(of: "posts")
        #expect(state.recordCount == 3000 && state.savedAt == "2026-12-01T06:00:00Z", "the stored listing is the first one")
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.cache).filter { $0.contains(".tmp-") }.isEmpty)
    }
}
