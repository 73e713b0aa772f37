internal import CShim
internal import Glibc
import SyncCore
internal import SyncSystem
import Synchronization

/// The store writes a listing's bodies into the cache folder and nowhere else (docs/architecture.md, "Storing
/// listings"); these are the document's parts around the records.
extension CacheFolder {
    /// The document's bytes before its first record: up to and including `"records":[`, then spaces to a
    /// whole number of blocks, so that the records start at a block boundary (`BlockAlignment`).
    static func header(source: String, account: String, savedAt: String?, etag: String?) -> [UInt8] {
        var bytes = Array(("{\"schemaVersion\":1,\"source\":\(JSONText.quoted(source)),\"accountID\":\(JSONText.quoted(account)),"
                           + "\"savedAt\":\(JSONText.quotedOrNull(savedAt)),\"etag\":\(JSONText.quotedOrNull(etag)),\n\"records\":[").utf8)
        BlockAlignment.pad(&bytes)
        return bytes
    }

    /// The document's bytes after its last record.
    static func trailer(pending: [RecordID], parked: [RecordID], conflicts: [RecordID]) -> [UInt8] {
        // IDs as the records write them: 7 for a record whose ID is 7, "a" for "a".
        Array(("\n],\n\"pending\":[\(pending.map(\.jsonLiteral).joined(separator: ","))],"
               + "\"parked\":[\(parked.map(\.jsonLiteral).joined(separator: ","))],"
               + "\"conflicts\":[\(conflicts.map(\.jsonLiteral).joined(separator: ","))]}\n").utf8)
    }
}

/// "OPERATION: strerror(errno)", the reason part of a failed system call (as `SystemError.reason` words it).
func systemReason(_ operation: String, code: Int32 = errno) -> String {
    "\(operation): \(String(cString: strerror(code)))"
}

extension StoreError {
    /// A failed system call `operation` while writing the cache file at `path`, with its errno.
    static func cacheFileWrite(path: String, failed operation: String, code: Int32 = errno) -> StoreError {
        .cacheFileWrite(path: path, reason: systemReason(operation, code: code), code: code)
    }
}

/// The status of an open file as a fingerprint with `hash`.
func fingerprint(of fd: Int32, hash: UInt64) -> SnapshotFingerprint? {
    var info = stat()
    guard fstat(fd, &info) == 0 else { return nil }
    return SnapshotFingerprint(size: Int64(info.st_size), inode: UInt64(info.st_ino),
                               changeTime: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec), hash: hash)
}

/// A new cache file being written: a temporary file in the folder (`.<source>.json.tmp-…`, `O_EXCL`, the
/// folder's mode and group), fed through a 256 KiB buffer (runs of 64 KiB or more, such as a listing's
/// index chunks, go to the file directly: no copy), or by range copies from the previous file
/// (`copyRange`). Every 4 MiB written, a thread of its own flushes what is written so far (`StepFlusher`),
/// so the disk works while the listing still arrives and `finish`'s `fsync` has only the last step left;
/// that `fsync` stays the point of durability. Where no thread can be started, the kernel is only asked to
/// start writeback (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, which waits for nothing). `finish` flushes
/// the file to disk; `install` renames it over the final name and flushes the folder; `discard` removes it.
/// The content hash is the writer's (`CacheFileDigest`): nothing here hashes.
final class CacheFileOutput {
    let folder: CacheFolder
    let source: String
    /// The temporary file's name inside the folder.
    let temporaryName: String
    private let directoryFD: Int32
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Copies a range between files in the kernel; `copy_file_range(2)` unless a test injects a failure.
    var rangeCopier: RangeCopier = RangeCopier.kernel
    /// How the file is flushed to disk: `fsync(2)`, or a stand-in in tests.
    var syncer: FileSyncer = FileSyncer.kernel
    /// Bytes `copyRange` moved by `copy_file_range(2)` and by read/write.
    private(set) var copied = (kernel: 0, readWrite: 0)
    private var closed = false
    private var installed = false
    /// Bytes written to the file so far, and how many of them (with the kernel's copies) a flush or
    /// writeback was asked for.
    private var written = 0
    private var stepped = 0
    /// Flushes the file in steps while it is written: started at the first step; nil before, and where no
    /// thread could be started (`flusherRefused`).
    private(set) var flusher: StepFlusher?
    private var flusherRefused = false
    private static let capacity = 256 << 10
    /// Runs at least this long skip the buffer.
    private static let direct = 64 << 10
    /// How much is written between two flushes while the file is written (docs/benchmarks.md, "Flushing the
    /// cache file while it arrives").
    static let flushStep = 4 << 20

    /// Path of the final file.
    var path: String { folder.path(of: source) }

    /// The bytes the file holds so far, buffered ones included.
    var size: Int { written + buffer.count + copied.kernel }

    /// Creates the temporary file. Throws `StoreError.cacheFileWrite`.
    init(folder: CacheFolder, source: String) throws(StoreError) {
        self.folder = folder
        self.source = source
        let finalPath = folder.path(of: source)
        let directoryFD = retryingEINTR { open(folder.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard directoryFD >= 0 else { throw .cacheFileWrite(path: finalPath, failed: "open directory \(folder.directory)") }
        let name = ".\(source).json.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = retryingEINTR { openat(directoryFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, folder.mode) }
        guard fd >= 0 else {
            let error = StoreError.cacheFileWrite(path: finalPath, failed: "create temporary file in \(folder.directory)")
            close(directoryFD)
            throw error
        }
        self.directoryFD = directoryFD
        self.fd = fd
        self.temporaryName = name
        buffer.reserveCapacity(CacheFileOutput.capacity)
        // The umask may have narrowed the mode; set it exactly.
        guard fchmod(fd, folder.mode) == 0 else { throw failure("set mode of \(finalPath)") }
        if let group = folder.group, fchown(fd, uid_t.max, group) != 0 { throw failure("set group of \(finalPath)") }
    }

    deinit {
        discard()
        close(directoryFD)
    }

    private func failure(_ operation: String) -> StoreError {
        let error = StoreError.cacheFileWrite(path: path, failed: operation)
        discard()
        return error
    }

    /// Appends bytes.
    func write(_ bytes: UnsafeRawBufferPointer) throws(StoreError) {
        if buffer.count + bytes.count > CacheFileOutput.capacity || bytes.count >= CacheFileOutput.direct {
            try flush()
            if bytes.count >= CacheFileOutput.direct {
                try writeAll(bytes)
                return
            }
        }
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes.
    func write(_ bytes: [UInt8]) throws(StoreError) {
        var failure: StoreError?
        bytes.withUnsafeBytes { raw in
            do { try write(raw) } catch { failure = error as? StoreError ?? .cacheFileWrite(path: path, reason: "\(error)") }
        }
        if let failure { throw failure }
    }

    /// Copies `count` bytes at `offset` of the previous file `source` (read whole, as one index chunk's
    /// range), after checking them against `expectedHash`: a mismatch is `StoreError.cacheFileMismatch`.
    func copy(from source: Int32, sourcePath: String, offset: Int, count: Int, expectedHash: UInt64) throws(StoreError) {
        var bytes = [UInt8](repeating: 0, count: count)
        try readExactly(source, path: sourcePath, into: &bytes, at: offset)
        guard XXHash64.hash(bytes) == expectedHash else {
            throw .cacheFileMismatch(path: sourcePath, reason: "the bytes at offset \(offset) differ from what the store recorded")
        }
        try write(bytes)
    }

    /// Copies `count` bytes at `offset` of the previous file `source` without reading them into memory or
    /// hashing them (their hash is the stored one): `copy_file_range(2)`, or read/write when the kernel or
    /// the file systems cannot (`EXDEV`, `ENOSYS`, `EINVAL`, `EOPNOTSUPP`). A source shorter than the
    /// store says is `StoreError.cacheFileMismatch`; a failed write is `StoreError.cacheFileWrite`.
    func copyRange(from source: Int32, sourcePath: String, offset: Int, count: Int) throws(StoreError) {
        try flush()
        var position = Int64(offset)
        var left = count
        while left > 0 && !rangeCopier.unsupported {
            let n = retryingMinusEINTR { rangeCopier.copy(source, &position, fd, left) }
            if n > 0 {
                left -= n
                copied.kernel += n
                stepIfDue()
            } else if n == 0 {
                throw .cacheFileMismatch(path: sourcePath, reason: "it ends at byte \(position); the store expects \(offset + count)")
            } else if RangeCopier.fallbackErrors.contains(Int32(-n)) {
                rangeCopier.unsupported = true
            } else {
                discard()
                throw .cacheFileWrite(path: path, failed: "copy \(sourcePath) into \(path)", code: Int32(-n))
            }
        }
        var block = [UInt8](repeating: 0, count: min(left, CacheFileOutput.capacity))
        while left > 0 {
            if block.count > left { block = [UInt8](repeating: 0, count: left) }
            try readExactly(source, path: sourcePath, into: &block, at: Int(position))
            try write(block)
            try flush()
            position += Int64(block.count)
            left -= block.count
            copied.readWrite += block.count
        }
    }

    private func flush() throws(StoreError) {
        guard !buffer.isEmpty else { return }
        // Written from the buffer in place and emptied after: a copy would make `removeAll` allocate a new
        // 256 KiB buffer at every flush (with the daemon's 128 KiB mmap threshold, an mmap and its page faults).
        var failure: StoreError?
        buffer.withUnsafeBytes { raw in
            do { try writeAll(raw) } catch { failure = error as? StoreError ?? .cacheFileWrite(path: path, reason: "\(error)") }
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw failure }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let n = retryingEINTR { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else {
                let code = n < 0 ? errno : EIO
                discard()
                throw .cacheFileWrite(path: path, failed: "write \(path)", code: code)
            }
            offset += n
        }
        written += bytes.count
        stepIfDue()
    }

    /// Asks for a flush of what is written so far once `flushStep` more bytes are (`StepFlusher`), or, without
    /// a flusher, for writeback to start: a hint, whose failure leaves the work to `finish`'s fsync.
    private func stepIfDue() {
        let size = written + copied.kernel
        guard size - stepped >= CacheFileOutput.flushStep else { return }
        if flusher == nil && !flusherRefused {
            flusher = StepFlusher.start(fd, syncer: syncer)
            flusherRefused = flusher == nil
        }
        if let flusher {
            flusher.step()
        } else {
            _ = cshim_start_writeback(fd, 0, 0)
        }
        stepped = size
    }

    /// Writes out what is buffered and flushes the file to disk; returns its fingerprint with `hash`.
    func finish(hash: UInt64) throws(StoreError) -> SnapshotFingerprint {
        try flush()
        if let flusher {
            // Its thread makes the final flush, after the steps (not a second one here).
            self.flusher = nil
            do {
                try flusher.finish(path: path).wait()
            } catch {
                discard()
                throw error
            }
            guard let written = fingerprint(of: fd, hash: hash) else { throw failure("inspect \(path)") }
            return written
        }
        let syncer = syncer
        guard retryingEINTR({ syncer.sync(fd) }) == 0 else { throw failure("flush \(path) to disk") }
        guard let written = fingerprint(of: fd, hash: hash) else { throw failure("inspect \(path)") }
        return written
    }

    /// `finish` with the flush to disk running on a thread of its own while the caller prepares what it will
    /// commit (a first sync's ID index and change log): writes out what is buffered, reads the fingerprint (an
    /// `fsync` changes neither size, inode nor change time) and starts the flush, on a duplicate of the file's
    /// descriptor, so that a `discard` meanwhile cannot close it under the flush. Nothing may count on the
    /// file being on disk before `DiskFlush.wait()` returns. Where no thread can be started, the flush runs
    /// here, as in `finish`.
    func finishFlushing(hash: UInt64) throws(StoreError) -> (SnapshotFingerprint, DiskFlush) {
        try flush()
        guard let written = fingerprint(of: fd, hash: hash) else { throw failure("inspect \(path)") }
        if let flusher {
            // Its thread makes the final flush, after the steps, on its own descriptor.
            self.flusher = nil
            return (written, flusher.finish(path: path))
        }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw failure("duplicate the descriptor of \(path)") }
        let outcome = DiskFlush.Outcome()
        let syncer = syncer
        let thread = try? SystemThread.joinable(name: "syncd-flush") { outcome.flush(copy, with: syncer) }
        if thread == nil { outcome.flush(copy, with: syncer) }
        let flush = DiskFlush(path: path, outcome: outcome, thread: thread)
        return (written, flush)
    }

    /// Renames the file over the final name. Throws `.cacheFileWrite` when the rename failed (the temporary
    /// file stays, for the caller to finish later) and returns the folder flush's failure, if any.
    func install() throws(StoreError) -> String? {
        guard renameat(directoryFD, temporaryName, directoryFD, CacheFolder.fileName(of: source)) == 0 else {
            throw .cacheFileWrite(path: path, failed: "replace \(path)")
        }
        installed = true
        if !closed { close(fd); closed = true }
        return retryingEINTR({ fsync(directoryFD) }) == 0 ? nil : systemReason("flush directory \(folder.directory)")
    }

    /// The final file's fingerprint after `install`, with `hash`.
    func installedFingerprint(hash: UInt64) -> SnapshotFingerprint? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return fingerprint(of: fd, hash: hash)
    }

    /// Keeps the temporary file when the store names it (`pending_rename`) and the rename failed.
    func keep() { installed = true }

    /// Removes the temporary file unless it was installed or kept.
    func discard() {
        _ = flusher?.stop()
        flusher = nil
        if !closed { close(fd); closed = true }
        if !installed {
            unlinkat(directoryFD, temporaryName, 0)
            installed = true
        }
    }
}

/// How `CacheFileOutput.copyRange` copies in the kernel: `copy_file_range(2)`, or a stand-in that fails
/// the way an unsupported file system does (tests of the read/write fallback).
struct RangeCopier: Sendable {
    /// Copies up to `count` bytes from `source` at `offset` (advanced) to `target`'s file position;
    /// the count copied, 0 at the end of `source`, or -errno.
    var copy: @Sendable (_ source: Int32, _ offset: inout Int64, _ target: Int32, _ count: Int) -> Int
    /// Set once the copier failed with one of `fallbackErrors`: the rest goes through read/write.
    var unsupported = false

    /// The errors that mean "not between these files": read/write does it instead.
    static let fallbackErrors: Set<Int32> = [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP]

    /// `copy_file_range(2)`.
    static let kernel = RangeCopier { source, offset, target, count in
        cshim_copy_file_range(source, &offset, target, UInt(count))
    }
}

/// How a new cache file is flushed to disk: `fsync(2)`, or in tests a stand-in that fails as a full or broken
/// disk does (returns -1 with `errno` set).
struct FileSyncer: Sendable {
    var sync: @Sendable (_ fd: Int32) -> Int32

    /// `fsync(2)`.
    static let kernel = FileSyncer { fsync($0) }
}

/// Reads exactly `buffer.count` bytes at `offset` of `fd`; a short file is a mismatch with the store.
func readExactly(_ fd: Int32, path: String, into buffer: inout [UInt8], at offset: Int) throws(StoreError) {
    var done = 0
    let total = buffer.count
    while done < total {
        let n = buffer.withUnsafeMutableBytes { raw in
            retryingEINTR { pread(fd, raw.baseAddress! + done, total - done, off_t(offset + done)) }
        }
        if n < 0 { throw .cacheFileMismatch(path: path, reason: systemReason("read \(path)")) }
        if n == 0 { throw .cacheFileMismatch(path: path, reason: "it ends at byte \(offset + done); the store expects \(offset + total)") }
        done += n
    }
}


/// The flush to disk of a new cache file, started by `CacheFileOutput.finishFlushing`.
final class DiskFlush: Sendable {
    /// What the flush came to: the errno of a failed `fsync`, 0 once it succeeded, -1 before it returned.
    final class Outcome: Sendable {
        let code = Atomic<Int32>(-1)

        /// Flushes through `fd`, a descriptor of its own, and closes it.
        func flush(_ fd: Int32, with syncer: FileSyncer = .kernel) {
            let result = retryingEINTR({ syncer.sync(fd) }) == 0 ? 0 : errno != 0 ? errno : EIO
            close(fd)
            code.store(result, ordering: .releasing)
        }
    }

    let path: String
    private let outcome: Outcome
    /// The thread running the flush, or nil when it ran before `finishFlushing` returned.
    private let thread: SystemThread?

    init(path: String, outcome: Outcome, thread: SystemThread?) {
        self.path = path
        self.outcome = outcome
        self.thread = thread
    }

    /// Waits for the flush; throws `.cacheFileWrite` ("flush PATH to disk") when it failed.
    func wait() throws(StoreError) {
        thread?.join()
        let code = outcome.code.load(ordering: .acquiring)
        if code != 0 { throw .cacheFileWrite(path: path, failed: "flush \(path) to disk", code: code) }
    }

    /// An unwaited flush (a commit that failed before it) is still joined: no thread is left behind.
    deinit { thread?.join() }
}
