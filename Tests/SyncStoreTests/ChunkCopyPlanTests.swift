import Foundation
import Testing
@testable import SyncStore
import SyncCore

/// Which chunks a local change copies and which it writes again (docs/architecture.md, "Storing listings").
@Suite("Chunk copy plan")
struct ChunkCopyPlanTests {
    /// Four chunks of 100, 100, 100 and 50 bytes (512, 512, 512 and 7 records).
    let chunks = [ChunkLayout(records: 512, fileBytes: 100, fileHash: 1), ChunkLayout(records: 512, fileBytes: 100, fileHash: 2),
                  ChunkLayout(records: 512, fileBytes: 100, fileHash: 3), ChunkLayout(records: 7, fileBytes: 50, fileHash: 4)]

    @Test func anUntouchedListingIsOneCopy() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [])
        #expect(plan.steps { _ in 0 } == [.copy(seqs: 0..<4, offset: 0, bytes: 350, records: 1543)])
    }

    @Test func anOverlayInChunkZeroRewritesOnlyIt() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [0])
        #expect(plan.steps { _ in 90 } == [.reemit(seq: 0), .copy(seqs: 1..<4, offset: 100, bytes: 250, records: 1031)])
    }

    @Test func anOverlayInTheLastChunkCopiesEverythingBeforeIt() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [3])
        #expect(plan.steps { _ in 60 } == [.copy(seqs: 0..<3, offset: 0, bytes: 300, records: 1536), .reemit(seq: 3)])
    }

    @Test func twoTouchedChunksSplitTheCopies() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [1, 2])
        #expect(plan.steps { _ in 100 } == [.copy(seqs: 0..<1, offset: 0, bytes: 100, records: 512), .reemit(seq: 1), .reemit(seq: 2),
                                             .copy(seqs: 3..<4, offset: 300, bytes: 50, records: 7)])
    }

    /// Chunk 0 removed whole: chunk 1's first record becomes the file's first, whose separator is "\n"
    /// instead of ",\n", so chunk 1 is written again; the chunks after it are copied.
    @Test func aDeleteThatEmptiesChunkZeroRewritesTheNextChunk() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [0])
        #expect(plan.steps { $0 == 0 ? 0 : 100 } == [.reemit(seq: 0), .reemit(seq: 1), .copy(seqs: 2..<4, offset: 200, bytes: 150, records: 519)])
    }

    /// Emptying a chunk in the middle changes no separator: the next chunk is copied.
    @Test func aDeleteThatEmptiesAMiddleChunkCopiesTheNext() {
        let plan = ChunkCopyPlan(chunks: chunks, touched: [1])
        #expect(plan.steps { _ in 0 } == [.copy(seqs: 0..<1, offset: 0, bytes: 100, records: 512), .reemit(seq: 1),
                                           .copy(seqs: 2..<4, offset: 200, bytes: 150, records: 519)])
    }

    /// A chunk emptied by an earlier removal is overlaid, so touched; when its records come back (the removal
    /// was dropped) the next chunk's separator turns from "\n" into ",\n" and it is written again.
    @Test func aChunkThatHadNoBytesBeforeIsRewrittenWhenRecordsPrecedeItAgain() {
        let emptied = [ChunkLayout(records: 512, fileBytes: 0, fileHash: 9)] + chunks.dropFirst()
        let plan = ChunkCopyPlan(chunks: emptied, touched: [0])
        #expect(plan.steps { _ in 120 } == [.reemit(seq: 0), .reemit(seq: 1), .copy(seqs: 2..<4, offset: 100, bytes: 150, records: 519)])
    }
}

/// The chunks the store finds touched, and the rebuild by copies against a full rebuild.
@Suite("Local change rebuild by copies")
struct LocalChangeCopyTests {
    func queue(_ store: StateStore, _ id: Int, _ operation: OutboxRecord.Operation, _ body: String? = nil) throws {
        try store.enqueue(source: "posts", recordID: String(id), idIsInteger: true, operation: operation, body: body.map { Array($0.utf8) },
                          baseVersion: nil, at: "2026-11-29T10:00:00Z", idempotencyKey: UUID().uuidString)
    }

    func bytes(_ path: String) throws -> [UInt8] { Array(try #require(FileManager.default.contents(atPath: path))) }

    /// The same listing and outbox written by a refresh (every record passes through the writer).
    func fullRebuild(_ changes: (StateStore) throws -> Void) throws -> (TemporaryStore, [UInt8]) {
        let t = try TemporaryStore()
        try changes(t.store)
        try store(records(2100), into: t.store)
        return (t, try bytes(t.folder.path(of: "posts")))
    }

    @Test func touchedChunksAreTheOverlaidOnesAndThoseHoldingAnOutboxID() throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        // Record 600 is in chunk 1, record 2000 in chunk 3; 9999 is a creation, in no chunk.
        #expect(try t.store.touchedChunks(source: "posts", overlay: ["600", "2000", "9999"]) == [1, 3])
        try queue(t.store, 600, .update, "{\"id\":600,\"local\":1}")
        try t.store.rebuildCacheFile(source: "posts")
        // The overlay of 600 stays in the index until a rebuild without it.
        #expect(try t.store.touchedChunks(source: "posts", overlay: []) == [1])
        // Without the ID index, the chunks are searched by ID.
        try t.store.run("UPDATE sources SET id_index_stamp = NULL WHERE name = ?1", "posts")
        #expect(try t.store.touchedChunks(source: "posts", overlay: ["2000", "9999"]) == [1, 3])
    }

    /// An update, a removal emptying nothing, a creation, and a removal of all of chunk 0: each rebuild by
    /// copies writes the same bytes as a refresh with the same outbox, and the fingerprint is the file's.
    @Test(arguments: ["update", "delete", "create", "emptyChunkZero"])
    func aRebuildByCopiesEqualsAFullRebuild(change: String) throws {
        let apply: (StateStore) throws -> Void = { store in
            switch change {
            case "update": try queue(store, 1700, .update, "{\"id\":1700,\"local\":true}")
            case "delete": try queue(store, 1, .delete)
            case "create": try queue(store, 5000, .create, "{\"id\":5000}")
            default: for id in 1...512 { try queue(store, id, .delete) }
            }
        }
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        try apply(t.store)
        try t.store.rebuildCacheFile(source: "posts")
        let (reference, expected) = try fullRebuild(apply)
        _ = reference
        #expect(try bytes(t.folder.path(of: "posts")) == expected)
        let fingerprint = try #require(try t.store.state(of: "posts").snapshotFingerprint)
        let fd = open(t.folder.path(of: "posts"), O_RDONLY)
        defer { close(fd) }
        #expect(try t.store.cacheFileDigest(source: "posts", fd: fd) == fingerprint.hash)
        #expect(try storedBodies(t.store).count == 2100, "the server's listing reads back whole")
    }

    /// Status and Watch count the local view after every change: with the file current, that is the count
    /// the store recorded when writing it, no walk of the listing (the file is not even opened here);
    /// while the outbox is ahead of the file (dirty), the listing is walked.
    @Test func theLocalViewOfACurrentFileIsCountedWithoutReadingIt() throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        try queue(t.store, 7, .delete)
        try queue(t.store, 9000, .create, "{\"id\":9000}")
        try t.store.rebuildCacheFile(source: "posts")
        try FileManager.default.moveItem(atPath: t.folder.path(of: "posts"), toPath: t.directory + "/moved")
        #expect(try t.store.state(of: "posts", countingLocalView: true).localRecordCount == 2100)
        try t.store.setSnapshotDirty(source: "posts", true)
        #expect(throws: StoreError.self) { try t.store.state(of: "posts", countingLocalView: true) }
        try FileManager.default.moveItem(atPath: t.directory + "/moved", toPath: t.folder.path(of: "posts"))
        #expect(try t.store.state(of: "posts", countingLocalView: true).localRecordCount == 2100)
    }

    /// The fingerprint's hash is composed from header, chunk hashes and tail; one changed byte anywhere
    /// (header, a chunk, the trailer) changes it.
    @Test(arguments: [10, 3000, -5])
    func theComposedHashFindsAChangedByteAnywhere(at position: Int) throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        let path = t.folder.path(of: "posts")
        let expected = try #require(try t.store.state(of: "posts").snapshotFingerprint).hash
        let fd = open(path, O_RDWR)
        defer { close(fd) }
        #expect(try t.store.cacheFileDigest(source: "posts", fd: fd) == expected)
        let offset = position >= 0 ? position : try bytes(path).count + position
        var byte: UInt8 = 0x21   // "!", in no record
        #expect(pwrite(fd, &byte, 1, off_t(offset)) == 1)
        #expect(try t.store.cacheFileDigest(source: "posts", fd: fd) != expected)
    }

    /// A file changed outside syncd (its change time moved) is not copied from: the rebuild reads every chunk,
    /// finds the damage, and leaves the file and the index as they were.
    @Test func aFileChangedOutsideSyncdIsReadWholeAndItsDamageFound() throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        let path = t.folder.path(of: "posts")
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(try bytes(path).count - 400))   // inside chunk 4 (records 2049–2100)
        handle.write(Data("9".utf8))
        try handle.close()
        let before = try bytes(path)
        try queue(t.store, 3, .update, "{\"id\":3,\"local\":1}")
        #expect { try t.store.rebuildCacheFile(source: "posts") } throws: { error in
            guard case StoreError.cacheFileMismatch(_, let reason) = error else { return false }
            return reason.contains("chunk 4") && reason.contains("differs from what the store recorded")
        }
        #expect(try bytes(path) == before)
        #expect(t.leftovers().isEmpty)
    }

    /// Damage that leaves the file's status as recorded (through the block device, say) in a chunk the
    /// change does not touch is copied unread; the next read of that chunk finds it (its stored hash no
    /// longer matches).
    @Test func damageWithTheStatusUnchangedIsCopiedUnreadAndFoundByTheNextReadOfIt() throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        let path = t.folder.path(of: "posts")
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(try bytes(path).count - 400))   // inside chunk 4
        handle.write(Data("9".utf8))
        try handle.close()
        // As if the status had not moved: the store records the file's status now, with the old hash.
        let recorded = try #require(try t.store.state(of: "posts").snapshotFingerprint)
        let fd = open(path, O_RDONLY)
        let now = try #require(fingerprint(of: fd, hash: recorded.hash))
        close(fd)
        try t.store.recordSnapshot(source: "posts", now)
        try queue(t.store, 3, .update, "{\"id\":3,\"local\":1}")
        try t.store.rebuildCacheFile(source: "posts")
        #expect { try storedBodies(t.store) } throws: { error in
            guard case StoreError.cacheFileMismatch(_, let reason) = error else { return false }
            return reason.contains("chunk 4") && reason.contains("differs from what the store recorded")
        }
    }

    /// A file whose header or tail no longer hashes to the fingerprint with the stored chunk hashes is not
    /// copied from: the rebuild reads every chunk (each hash-checked) and writes the same bytes as a refresh.
    @Test func aDamagedTailMakesTheRebuildReadEveryChunk() throws {
        let t = try TemporaryStore()
        try store(records(2100), into: t.store)
        let path = t.folder.path(of: "posts")
        let fd = open(path, O_RDWR)
        var byte: UInt8 = 0x21
        #expect(pwrite(fd, &byte, 1, off_t(try bytes(path).count - 5)) == 1)
        close(fd)
        let chunks = try t.store.chunkLayouts(source: "posts")
        #expect(try t.store.copyableFile(source: "posts", chunks: chunks) == nil)
        try queue(t.store, 1700, .update, "{\"id\":1700,\"local\":true}")
        try t.store.rebuildCacheFile(source: "posts")
        let (_, expected) = try fullRebuild { try queue($0, 1700, .update, "{\"id\":1700,\"local\":true}") }
        #expect(try bytes(path) == expected)
    }

    /// Copies through `copier` 1000 bytes of a 3000-byte file starting at 500 into a new cache file.
    func copy(with copier: RangeCopier?, in store: TemporaryStore? = nil) throws -> (TemporaryStore, CacheFileOutput, [UInt8]) {
        let t = try store ?? TemporaryStore()
        let previous = t.directory + "/previous"
        let content = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(content).write(to: URL(fileURLWithPath: previous))
        let fd = open(previous, O_RDONLY)
        defer { close(fd) }
        let output = try CacheFileOutput(folder: t.folder, source: "posts")
        if let copier { output.rangeCopier = copier }
        try output.write(Array("head".utf8))
        try output.copyRange(from: fd, sourcePath: previous, offset: 500, count: 1000)
        return (t, output, Array("head".utf8) + content[500..<1500])
    }

    func written(_ t: TemporaryStore, _ output: CacheFileOutput) throws -> [UInt8] {
        _ = try output.finish(hash: 0)
        _ = try output.install()
        return try bytes(t.folder.path(of: "posts"))
    }

    @Test func rangesAreCopiedByTheKernelOrByReadAndWrite() throws {
        let (t, output, expected) = try copy(with: nil)
        #expect(output.copied.kernel + output.copied.readWrite == 1000)
        #expect(try written(t, output) == expected)
    }

    /// A file system that cannot copy between the files (EXDEV, ENOSYS, EINVAL, EOPNOTSUPP), at once or
    /// after a first part: the rest goes through read/write, and the bytes are the same.
    @Test(arguments: [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP])
    func anUnsupportedCopyFallsBackToReadAndWrite(code: Int32) throws {
        let (t, output, expected) = try copy(with: RangeCopier { _, _, _, _ in -Int(code) })
        #expect(output.copied.kernel == 0 && output.copied.readWrite == 1000)
        #expect(try written(t, output) == expected)
        let partly = RangeCopier { source, offset, target, count in
            offset == 500 ? RangeCopier.kernel.copy(source, &offset, target, min(count, 300)) : -Int(code)
        }
        let (u, second, same) = try copy(with: partly)
        #expect(second.copied.readWrite == 1000 - second.copied.kernel)
        #expect(try written(u, second) == same)
    }

    /// A copy the disk refuses fails with the reason, and the temporary file is removed.
    @Test func aRefusedCopyIsAWriteFailureAndLeavesNothing() throws {
        let t = try TemporaryStore()
        #expect { _ = try copy(with: RangeCopier { _, _, _, _ in -Int(ENOSPC) }, in: t) } throws: { error in
            guard case StoreError.cacheFileWrite(let path, let reason, let code) = error, code == ENOSPC else { return false }
            return path.hasSuffix("/posts.json") && reason.contains("No space left on device") && reason.contains("previous")
        }
        #expect(t.leftovers().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: t.folder.path(of: "posts")))
    }
}
