import Foundation
import Glibc
import Testing
@testable import SyncStore
import SyncCore

/// The cache file's block alignment (docs/architecture.md, "Storing listings", block alignment): the header and
/// every chunk padded with spaces to whole blocks, the document the same JSON value as without them, the
/// hashes over the padded bytes, range copies at block boundaries only, and a file of the earlier, unpadded
/// layout read as it is and rewritten padded by the next rebuild or delta.
@Suite("Cache file block alignment")
struct BlockAlignmentTests {
    static let block = 4096

    /// Records of varied sizes, so that chunks end at varied offsets.
    func listing(_ count: Int, from start: Int = 1, text: String = "") -> [(String, [UInt8])] {
        (start..<start + count).map { i in
            (String(i), Array("{\"id\":\(i),\"text\":\"\(text)\(String(repeating: "x", count: i % 97))\"}".utf8))
        }
    }

    func contents(_ t: TemporaryStore) throws -> [UInt8] { Array(try #require(FileManager.default.contents(atPath: t.folder.path(of: "posts")))) }

    func parsed(_ bytes: [UInt8]) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    /// The document without padding: the header, each record after its separator, the trailer (no local changes).
    func unpadded(_ records: [(String, [UInt8])], savedAt: String = "2026-11-29T10:00:00Z") -> [UInt8] {
        var bytes = Array(("{\"schemaVersion\":1,\"source\":\"posts\",\"accountID\":\"test\",\"savedAt\":\"\(savedAt)\",\"etag\":\"\\\"e\\\"\",\n"
                           + "\"records\":[").utf8)
        for (index, record) in records.enumerated() { bytes += Array((index == 0 ? "\n" : ",\n").utf8) + record.1 }
        return bytes + CacheFolder.trailer(pending: [], parked: [], conflicts: [])
    }

    /// Checks the layout of the file of `t` holding `records` (chunk by chunk as `sizes` says): header and chunks
    /// whole blocks at block boundaries, each chunk its records then spaces only, the trailer after; the hashes
    /// the store recorded are those of the padded bytes.
    func checkLayout(_ t: TemporaryStore, _ records: [(String, [UInt8])], savedAt: String = "2026-11-29T10:00:00Z") throws {
        let data = try contents(t)
        let layout = try #require(try t.store.fileLayout(source: "posts"))
        let chunks = try t.store.chunkLayouts(source: "posts")
        #expect(BlockAlignment.isAligned(layout, chunks: chunks))
        #expect(layout.recordsStart == Self.block)
        let header = unpadded([], savedAt: savedAt).prefix { $0 != UInt8(ascii: "[") } + [UInt8(ascii: "[")]
        #expect(Array(data[0..<header.count]) == Array(header))
        #expect(data[header.count..<layout.recordsStart].allSatisfy { $0 == 0x20 })
        var offset = layout.recordsStart
        var next = 0
        for chunk in chunks {
            #expect(offset % Self.block == 0 && chunk.fileBytes % Self.block == 0)
            var expected: [UInt8] = []
            for record in records[next..<next + chunk.records] { expected += Array((next == 0 && expected.isEmpty ? "\n" : ",\n").utf8) + record.1 }
            next += chunk.records
            let range = Array(data[offset..<offset + chunk.fileBytes])
            #expect(Array(range.prefix(expected.count)) == expected)
            #expect(range.count - expected.count < Self.block && range[expected.count...].allSatisfy { $0 == 0x20 })
            #expect(XXHash64.hash(range) == chunk.fileHash)
            offset += chunk.fileBytes
        }
        #expect(next == records.count && offset == layout.listingEnd)
        #expect(Array(data[offset...]) == CacheFolder.trailer(pending: [], parked: [], conflicts: []))
        // The same JSON value as the document without padding, and the fingerprint hashes the padded bytes.
        #expect(try parsed(data) == parsed(unpadded(records, savedAt: savedAt)))
        let fd = open(t.folder.path(of: "posts"), O_RDONLY)
        defer { close(fd) }
        #expect(try t.store.cacheFileDigest(source: "posts", fd: fd) == t.store.state(of: "posts").snapshotFingerprint?.hash)
    }

    @Test func paddingMakesWholeBlocksOfSpaces() {
        #expect([0, 1, 4095, 4096, 4097, 8191].map(BlockAlignment.padding(for:)) == [0, 4095, 1, 0, 4095, 1])
        for count in [0, 1, 100, 4095, 4096, 5000, 12288] {
            var bytes = [UInt8](repeating: 0x7b, count: count)
            BlockAlignment.pad(&bytes)
            #expect(bytes.count % Self.block == 0 && bytes.count - count < Self.block)
            #expect(bytes[count...].allSatisfy { $0 == 0x20 })
        }
        #expect(CacheFolder.header(source: "posts", account: "a", savedAt: nil, etag: nil).count == Self.block)
        #expect(CacheFolder.header(source: "posts", account: "a", savedAt: nil, etag: String(repeating: "e", count: 5000)).count == 2 * Self.block)
        #expect([UInt8]("  ".utf8).withUnsafeBytes(BlockAlignment.isPadding))
        #expect(![UInt8](" }".utf8).withUnsafeBytes(BlockAlignment.isPadding))
        #expect(![UInt8](repeating: 0x20, count: Self.block).withUnsafeBytes(BlockAlignment.isPadding))
    }

    @Test func everyChunkStartsAtABlockBoundaryAndTheDocumentParsesAsWithoutPadding() throws {
        let t = try TemporaryStore()
        let records = listing(1300)
        try store(records, into: t.store)
        #expect(try t.store.chunkLayouts(source: "posts").map(\.records) == [512, 512, 276])
        try checkLayout(t, records)
        var read: [String] = []
        try t.store.forEachRecord(source: "posts") { read.append(String(decoding: $0.body, as: UTF8.self)) }
        #expect(read == records.map { String(decoding: $0.1, as: UTF8.self) })
        // An empty listing: the header's padding, then the trailer.
        let empty = try TemporaryStore()
        try store([], into: empty.store, allowEmpty: true)
        try checkLayout(empty, [])
    }

    /// Copies through the kernel, noting each range's source offset, target offset and length.
    final class Copies: @unchecked Sendable {
        private let lock = NSLock()
        private var ranges: [(source: Int64, target: Int64, count: Int)] = []

        /// The ranges copied, a range the kernel copied in several calls as one.
        var all: [(source: Int64, target: Int64, count: Int)] {
            lock.withLock {
                ranges.reduce(into: []) { merged, range in
                    if let last = merged.last, last.source + Int64(last.count) == range.source, last.target + Int64(last.count) == range.target {
                        merged[merged.count - 1].count += range.count
                    } else {
                        merged.append(range)
                    }
                }
            }
        }

        var copier: RangeCopier {
            RangeCopier { source, offset, target, count in
                let (from, to) = (offset, Int64(lseek(target, 0, SEEK_CUR)))
                let n = RangeCopier.kernel.copy(source, &offset, target, count)
                if n > 0 { self.lock.withLock { self.ranges.append((from, to, n)) } }
                return n
            }
        }
    }

    /// A record of the first chunk grows by more than a block (a delta, or a local edit): the chunk is written
    /// again, a block longer, and every later chunk is copied from the previous file at block boundaries in both
    /// files and in whole blocks, the shift between them a whole number of blocks.
    @Test(arguments: [false, true])
    func chunksAfterARewrittenOneAreCopiedAtBlockBoundaries(localEdit: Bool) throws {
        let t = try TemporaryStore()
        var records = listing(2100)
        try store(records, into: t.store)
        let copies = Copies()
        t.store.rangeCopier = copies.copier
        let grown = Array("{\"id\":3,\"text\":\"\(String(repeating: "y", count: 6000))\"}".utf8)
        records[2].1 = grown
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        if localEdit {
            try t.store.enqueue(source: "posts", recordID: "3", idIsInteger: true, operation: .update, body: grown,
                                baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: UUID().uuidString)
            try t.store.rebuildCacheFile(source: "posts")
        } else {
            try t.store.applyDelta(source: "posts", upserts: [DeltaRecord(id: "3", idIsInteger: true, version: nil, body: grown)],
                                   removals: [], metadata: ListingMetadata(url: "http://h/posts", etag: "\"e\"", lastModified: nil,
                                                                           time: "2026-11-29T10:00:00Z", allowEmpty: false))
        }
        #expect((counter.reemittedChunks, counter.copiedChunks) == (1, 4))
        let ranges = copies.all
        #expect(!ranges.isEmpty)
        for range in ranges {
            #expect(range.source % Int64(Self.block) == 0 && range.target % Int64(Self.block) == 0 && range.count % Self.block == 0,
                    "copy of \(range.count) bytes from \(range.source) to \(range.target)")
            #expect((range.target - range.source) % Int64(Self.block) == 0 && range.target > range.source)
        }
        if localEdit {
            let data = try contents(t)
            #expect(try parsed(data)["pending"] as? [Int] == [3])
            #expect(try (parsed(data)["records"] as? [NSDictionary])?.count == 2100)
        } else {
            try checkLayout(t, records)
        }
    }

    /// A delta changing a record late in a chunk: the chunk's whole blocks before that record are range-copied
    /// from the current file (shared where the file system can), only the rest of the chunk is written.
    @Test func aRewrittenChunkCopiesTheBlocksBeforeItsFirstChange() throws {
        let t = try TemporaryStore()
        var records = listing(2100)
        try store(records, into: t.store)
        let before = try t.store.chunkLayouts(source: "posts")
        let copies = Copies()
        t.store.rangeCopier = copies.copier
        records[999].1 = Array("{\"id\":1000,\"text\":\"\(String(repeating: "z", count: 300))\"}".utf8)
        try t.store.applyDelta(source: "posts", upserts: [DeltaRecord(id: "1000", idIsInteger: true, version: nil, body: records[999].1)],
                               removals: [], metadata: ListingMetadata(url: "http://h/posts", etag: "\"e\"", lastModified: nil,
                                                                       time: "2026-11-29T10:00:00Z", allowEmpty: false))
        try checkLayout(t, records)
        // Chunk 0 (the prefix) and the start of chunk 1 up to the block holding record 1000, in one range at the
        // same offsets; then chunks 2 to 4.
        let ranges = copies.all
        let unchanged = records[512..<999].reduce(2 * 487) { $0 + $1.1.count } / Self.block * Self.block
        #expect(unchanged > 0)
        #expect(ranges.map(\.source) == [Int64(Self.block), Int64(Self.block + before[0].fileBytes + before[1].fileBytes)])
        #expect(ranges.first?.target == Int64(Self.block) && ranges.first?.count == before[0].fileBytes + unchanged)
        #expect(ranges.allSatisfy { ($0.target - $0.source) % Int64(Self.block) == 0 })
    }

    /// Rewrites the file of `t` and what the store recorded of it in the layout syncd wrote before the padding:
    /// the header and the chunks' records with no spaces after them.
    func unpad(_ t: TemporaryStore) throws {
        let data = try contents(t)
        let layout = try #require(try t.store.fileLayout(source: "posts"))
        let chunks = try t.store.chunkLayouts(source: "posts")
        var header = Array(data[0..<layout.recordsStart])
        while header.last == 0x20 { header.removeLast() }
        var file = header
        var digest = CacheFileDigest()
        digest.add(bytes: header)
        var offset = layout.recordsStart
        for (seq, chunk) in chunks.enumerated() {
            var range = Array(data[offset..<offset + chunk.fileBytes])
            while range.last == 0x20 { range.removeLast() }
            offset += chunk.fileBytes
            file += range
            digest.add(XXHash64.hash(range))
            try t.store.database.execute("UPDATE chunks SET file_bytes = \(range.count), file_hash = \(Int64(bitPattern: XXHash64.hash(range))) WHERE source = 'posts' AND seq = \(seq)")
        }
        let listingEnd = file.count
        let tail = Array(data[offset...])
        file += tail
        digest.add(bytes: tail)
        try Data(file).write(to: URL(fileURLWithPath: t.folder.path(of: "posts")))
        try t.store.database.execute("UPDATE sources SET records_start = \(header.count), listing_end = \(listingEnd) WHERE name = 'posts'")
        let fd = open(t.folder.path(of: "posts"), O_RDONLY)
        defer { close(fd) }
        try t.store.recordSnapshot(source: "posts", try #require(fingerprint(of: fd, hash: digest.finalize())))
        #expect(!BlockAlignment.isAligned(try #require(try t.store.fileLayout(source: "posts")), chunks: try t.store.chunkLayouts(source: "posts")))
    }

    /// A store whose file has the layout written before the padding: read as it is, never copied from; the
    /// next delta (or local change) reads every chunk and writes the file padded, and the one after copies again.
    @Test(arguments: [false, true])
    func aFileOfTheUnpaddedLayoutIsReadThenRewrittenPaddedOnce(localEdit: Bool) throws {
        let t = try TemporaryStore()
        var records = listing(1300)
        try store(records, into: t.store)
        try unpad(t)
        #expect(try parsed(contents(t)) == parsed(unpadded(records)))
        var read: [String] = []
        try t.store.forEachRecord(source: "posts") { read.append(String(decoding: $0.body, as: UTF8.self)) }
        #expect(read == records.map { String(decoding: $0.1, as: UTF8.self) })
        #expect(try t.store.copyableFile(source: "posts", chunks: t.store.chunkLayouts(source: "posts")) == nil)
        let counter = StoreWorkCounter()
        t.store.workCounter = counter
        func change(_ id: Int, _ text: String) throws {
            let body = Array("{\"id\":\(id),\"text\":\"\(text)\"}".utf8)
            records[id - 1].1 = body
            if localEdit {
                try t.store.enqueue(source: "posts", recordID: String(id), idIsInteger: true, operation: .update, body: body,
                                    baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: UUID().uuidString)
                try t.store.rebuildCacheFile(source: "posts")
            } else {
                try t.store.applyDelta(source: "posts", upserts: [DeltaRecord(id: String(id), idIsInteger: true, version: nil, body: body)],
                                       removals: [], metadata: ListingMetadata(url: "http://h/posts", etag: "\"e\"", lastModified: nil,
                                                                               time: "2026-11-29T10:00:00Z", allowEmpty: false))
            }
        }
        try change(1200, "changed")
        #expect(counter.copiedChunks == 0)
        if !localEdit { #expect(counter.reemittedChunks == 3) }
        #expect(BlockAlignment.isAligned(try #require(try t.store.fileLayout(source: "posts")), chunks: try t.store.chunkLayouts(source: "posts")))
        if !localEdit { try checkLayout(t, records) }
        try change(5, "again")
        #expect(counter.copiedChunks > 0)
        if !localEdit { try checkLayout(t, records) }
        let data = try contents(t)
        #expect(try (parsed(data)["records"] as? [NSDictionary])?.map { $0["text"] as? String } == records.map {
            (try? JSONSerialization.jsonObject(with: Data($0.1)) as? NSDictionary)?["text"] as? String
        })
    }

    /// The bytes after a chunk's records must be padding: anything else is a mismatch with the store.
    @Test func aChunkWhoseRestIsNotPaddingIsAMismatch() throws {
        let t = try TemporaryStore()
        let records = listing(600)
        try store(records, into: t.store)
        let layout = try #require(try t.store.fileLayout(source: "posts"))
        let chunk = try #require(try t.store.chunkLayouts(source: "posts").first)
        try #require(BlockAlignment.padding(for: records.prefix(512).reduce(2 * 512 - 1) { $0 + $1.1.count }) > 0)
        // The last byte of the first chunk's padding becomes "x", and the store is told that is what it wrote.
        let path = t.folder.path(of: "posts")
        let fd = open(path, O_RDWR)
        var byte = UInt8(ascii: "x")
        #expect(pwrite(fd, &byte, 1, off_t(layout.recordsStart + chunk.fileBytes - 1)) == 1)
        var range = [UInt8](repeating: 0, count: chunk.fileBytes)
        #expect(pread(fd, &range, chunk.fileBytes, off_t(layout.recordsStart)) == chunk.fileBytes)
        close(fd)
        try t.store.database.execute("UPDATE chunks SET file_hash = \(Int64(bitPattern: XXHash64.hash(range))) WHERE source = 'posts' AND seq = 0")
        #expect { try t.store.forEachRecord(source: "posts") { _ in } } throws: { error in
            guard case StoreError.cacheFileMismatch(_, let reason) = error else { return false }
            return reason.contains("chunk 0 describes")
        }
    }
}
