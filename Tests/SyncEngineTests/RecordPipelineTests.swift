import Foundation
import SyncCore
@testable import SyncStore
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

    /// A record's body, about 40 bytes, or `extra` bytes more in a `text` member.
    static func body(_ id: Int, _ version: Int, extra: Int = 0) -> [UInt8] {
        Array("{\"id\":\(id),\"title\":\"Post \(id)\",\(extra > 0 ? "\"text\":\"" + String(repeating: "x", count: extra) + "\"," : "")\"v\":\(version)}".utf8)
    }

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

    /// 300 records (13 KB) never fill a batch (a batch is a chunk, 512 records): they are added on the caller's
    /// thread at `finish`, no thread started, and the new file is first needed when the commit closes their
    /// chunk; 3000 (140 KB) go through the thread, which needs it when the first chunk is full.
    @Test(arguments: [300, 3000]) func aWriterFailureStopsThePipelineAndTheStoredListingStays(count: Int) throws {
        let place = try Place()
        let first = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        try Self.feed(3000, version: 1, into: first)
        _ = try first.commit(Self.metadata("2026-12-01T06:00:00Z"))
        let before = place.cacheFile
        #expect(before.contains("{\"id\":3000,\"title\":\"Post 3000\",\"v\":1}"))

        // The next listing differs from its first chunk on, so its new cache file is created as soon as that chunk
        // is closed: with the cache folder moved away, creating it fails (on the pipeline's thread for 3000).
        let second = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T07:00:00Z", etag: nil))
        try FileManager.default.moveItem(atPath: place.cache, toPath: place.cache + ".away")
        #expect {
            try Self.feed(count, version: 2, into: second)
            _ = try second.commit(Self.metadata("2026-12-01T07:00:00Z"))
        } throws: { error in
            guard case .cacheFileWrite = error as? StoreError else { return false }
            let message = "\(error)"
            return message.hasPrefix("Failed to write cache file \(place.cache)/posts.json: ") && message.contains("open directory \(place.cache)")
        }
        if count > ListingWriter.recordsPerChunk {
            #expect(second.count < count, "the writer stopped at the failure: \(second.count) records added")
        }
        second.rollback()
        try FileManager.default.moveItem(atPath: place.cache + ".away", toPath: place.cache)

        #expect(place.cacheFile == before, "the cache file is untouched")
        let state = try place.store.state(of: "posts")
        #expect(state.recordCount == 3000 && state.savedAt == "2026-12-01T06:00:00Z", "the stored listing is the first one")
        #expect(try FileManager.default.contentsOfDirectory(atPath: place.cache).filter { $0.contains(".tmp-") }.isEmpty)
    }

    /// Records `range` of `version` as the scanner gives them, through `pipeline`.
    static func feed(_ range: ClosedRange<Int>, version: Int, extra: Int = 0, through pipeline: RecordPipeline) throws {
        for id in range {
            let bytes = body(id, version, extra: extra)
            try bytes.withUnsafeBytes { raw in
                try pipeline.add(ScannedRecord(index: id - 1, id: RecordID(key: String(id), kind: .integer), version: String(version), bytes: raw))
            }
        }
    }

    /// The cache file and index of records `1...count` added one by one, without a pipeline: the reference.
    static func referenceFile(_ count: Int, extra: Int) throws -> (file: String, index: [String]) {
        let place = try Place()
        let writer = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        for id in 1...count {
            let key = Array(String(id).utf8), version = Array("1".utf8), bytes = body(id, 1, extra: extra)
            try key.withUnsafeBytes { key in
                try version.withUnsafeBytes { version in
                    try bytes.withUnsafeBytes { try writer.add(idBytes: key, idIsInteger: true, versionBytes: version, body: $0) }
                }
            }
        }
        #expect(writer.imagesTaken == 0)
        _ = try writer.commit(Self.metadata("2026-12-01T06:00:00Z"))
        return (place.cacheFile, try index(of: place.store))
    }

    /// What the store holds of `posts`'s listing, as text: every index chunk with its layout, the ID index's
    /// buckets, and the counts and file layout of its row.
    static func index(of store: StateStore) throws -> [String] {
        var lines: [String] = []
        func blob(_ rows: Statement) -> String { rows.withBlob(0) { $0.map { String($0, radix: 16) }.joined() } }
        let chunks = try store.database.prepare("SELECT data, records, file_bytes, file_hash FROM chunks WHERE source = 'posts' ORDER BY seq")
        while try chunks.step() { lines.append("chunk \(blob(chunks)) \(chunks.int64(1)) \(chunks.int64(2)) \(chunks.int64(3))") }
        let buckets = try store.database.prepare("SELECT entries, bucket FROM id_index WHERE source = 'posts' ORDER BY bucket")
        while try buckets.step() { lines.append("bucket \(buckets.int64(1)) \(blob(buckets))") }
        let row = try store.database.prepare("SELECT record_count, snapshot_records, records_start, listing_end, snapshot_size FROM sources WHERE name = 'posts'")
        while try row.step() { lines.append("row " + (0..<5).map { String(row.int64(Int32($0))) }.joined(separator: " ")) }
        #expect(lines.contains { $0.hasPrefix("chunk") } && lines.contains { $0.hasPrefix("bucket") } && lines.last?.hasPrefix("row") == true)
        return lines
    }

    /// A batch that is a whole chunk becomes the chunk's file bytes without a copy: 20,000 records are 39 full
    /// chunks, each one batch taken whole, and 32 records more, added one by one at the end of the page; the file
    /// and the index are byte for byte those of the same records added one by one.
    @Test func wholeChunksAreTakenAsTheyAreAndWriteTheSameFile() throws {
        try Self.expectSameAsOneByOne(20_000, images: 39) { writer in
            let pipeline = RecordPipeline(writer: writer)
            try Self.feed(1...20_000, version: 1, through: pipeline)
            try pipeline.finish()
        }
    }

    /// Records of about 300 bytes: a chunk of them is more than `batchBytes`, so its batches are cut by size and
    /// added record by record; no image, the same file and index.
    @Test func aChunkLargerThanABatchGoesRecordByRecord() throws {
        #expect(ListingWriter.recordsPerChunk * (Self.body(1000, 1, extra: 260).count + 2) > RecordPipeline.batchBytes)
        try Self.expectSameAsOneByOne(1100, images: 0, extra: 260) { writer in
            let pipeline = RecordPipeline(writer: writer)
            try Self.feed(1...1100, version: 1, extra: 260, through: pipeline)
            try pipeline.finish()
        }
    }

    /// Records `1...count` of version 1 added by `add` to a new listing: `images` of them taken whole, and the
    /// file and index byte for byte those of `referenceFile(count)`.
    static func expectSameAsOneByOne(_ count: Int, images: Int, extra: Int = 0, add: (ListingWriter) throws -> Void) throws {
        let place = try Place()
        let writer = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        try add(writer)
        #expect(writer.imagesTaken == images)
        _ = try writer.commit(Self.metadata("2026-12-01T06:00:00Z"))
        let reference = try Self.referenceFile(count, extra: extra)
        #expect(place.cacheFile == reference.file)
        #expect(try Self.index(of: place.store) == reference.index)
    }

    /// Pages that end inside a chunk: the next page's first batch completes a chunk begun by the page before, so
    /// it is added record by record (a copy), and the batches after it are whole chunks again. Same file, same index.
    @Test func aChunkBegunByThePageBeforeIsCompletedRecordByRecord() throws {
        // Page 1: 512 taken, 188 one by one (a chunk begun); page 2: 324 one by one, 512 taken, 76 one by one.
        try Self.expectSameAsOneByOne(1600, images: 2) { writer in
            for page in [1...700, 701...1600] {
                let pipeline = RecordPipeline(writer: writer)
                try Self.feed(page, version: 1, through: pipeline)
                try pipeline.finish()
            }
        }
    }

    /// A record with a local change is shown with it: while the outbox holds one, no image is taken and each
    /// record is added by itself, so the file shows the change in the record's place.
    @Test func aLocalChangeMakesEveryRecordGoOneByOne() throws {
        let place = try Place()
        let first = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T06:00:00Z", etag: nil))
        try Self.feed(1200, version: 1, into: first)
        _ = try first.commit(Self.metadata("2026-12-01T06:00:00Z"))
        try place.store.enqueue(source: "posts", recordID: "600", idIsInteger: true, operation: .update, body: Array("{\"id\":600,\"mine\":true}".utf8),
                                baseVersion: nil, at: "2026-12-01T06:30:00Z", idempotencyKey: UUID().uuidString)
        let second = try place.store.beginListing(source: "posts", header: CacheHeader(savedAt: "2026-12-01T07:00:00Z", etag: nil))
        try Self.feed(1200, version: 2, into: second)
        #expect(second.imagesTaken == 0)
        _ = try second.commit(Self.metadata("2026-12-01T07:00:00Z"))
        let document = try JSONSerialization.jsonObject(with: Data(place.cacheFile.utf8)) as? [String: Any]
        let records = try #require(document?["records"] as? [[String: Any]])
        #expect(records.map { $0["id"] as? Int } == Array(1...1200))
        #expect(records[599]["mine"] as? Bool == true && records[599]["v"] == nil, "the local change, in its record's place")
        #expect(records[598]["v"] as? Int == 2 && records[600]["v"] as? Int == 2)
    }
}
