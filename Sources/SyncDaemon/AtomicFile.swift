internal import Glibc
import SyncCore

/// Replaces a file atomically: a temporary file in the same directory (`O_CREAT|O_EXCL`,
/// final mode), all bytes written, `fsync`, `rename` over the old one, `fsync` of the
/// directory. On any error the temporary file is removed and the old file stays.
public struct AtomicFileWriter {
    /// Directory holding the file.
    public let directory: String
    /// The file's name inside `directory`.
    public let name: String
    /// Mode of the new file.
    public let mode: UInt32
    /// Group to give the new file, if any (requires membership or root).
    public let group: UInt32?

    /// Creates a writer for `directory/name`.
    public init(directory: String, name: String, mode: UInt32, group: UInt32?) {
        self.directory = directory
        self.name = name
        self.mode = mode
        self.group = group
    }

    /// Writes the file with the bytes `produce` emits through the given sink; returns their number
    /// and their XXH64 hash, computed on the way (the bytes pass through memory anyway).
    @discardableResult
    public func write(_ produce: (inout BufferedFileSink) throws -> Void) throws -> (size: Int, hash: UInt64) {
        let path = directory + "/" + name
        let directoryFD = retryingEINTR { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard directoryFD >= 0 else { throw SystemError("open directory \(directory)") }
        defer { close(directoryFD) }
        let temporary = ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = retryingEINTR { openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw SystemError("create temporary file in \(directory)") }
        var committed = false
        var written = (size: 0, hash: UInt64(0))
        defer {
            if !committed { unlinkat(directoryFD, temporary, 0) }
        }
        do {
            defer { close(fd) }
            // The umask may have narrowed the mode; set it exactly.
            guard fchmod(fd, mode) == 0 else { throw SystemError("set mode of \(path)") }
            if let group, fchown(fd, uid_t.max, group) != 0 {
                throw SystemError("set group of \(path)")
            }
            var sink = BufferedFileSink(fd: fd, path: path)
            try produce(&sink)
            try sink.flush()
            written = (sink.hasher.count, sink.hasher.finalize())
            guard retryingEINTR({ fsync(fd) }) == 0 else { throw SystemError("flush \(path) to disk") }
        }
        guard renameat(directoryFD, temporary, directoryFD, name) == 0 else { throw SystemError("replace \(path)") }
        committed = true
        // The rename is durable only once the directory is flushed. If that fails the new file is in place
        // all the same: say so, so nobody reports the old copy as kept.
        guard retryingEINTR({ fsync(directoryFD) }) == 0 else {
            throw DirectoryNotFlushed(size: written.size, hash: written.hash, cause: SystemError("flush directory \(directory)"))
        }
        return written
    }

    /// The new file replaced the old one, but flushing the directory failed: the replacement may not survive
    /// a power cut. Carries what `write` would have returned.
    public struct DirectoryNotFlushed: FailureReason {
        /// Bytes written.
        public let size: Int
        /// Their XXH64 hash.
        public let hash: UInt64
        /// The failed `fsync(2)` of the directory.
        public let cause: SystemError

        public var description: String { cause.description }
        public var reason: String { cause.reason }
    }
}

/// Buffers writes to a file descriptor (64 KiB at a time).
public struct BufferedFileSink {
    let fd: Int32
    let path: String
    private var buffer: [UInt8] = []
    private static let capacity = 1 << 16
    /// Hash of every byte written out so far.
    public private(set) var hasher = XXHash64()

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(BufferedFileSink.capacity)
    }

    /// Appends text.
    public mutating func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Appends bytes.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > BufferedFileSink.capacity {
            try flush()
            if bytes.count > BufferedFileSink.capacity {
                hasher.update(bytes)
                try writeAll(bytes)
                return
            }
        }
        buffer.append(contentsOf: bytes)
    }

    /// Writes out what is buffered.
    public mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        var hasher = self.hasher
        try buffer.withUnsafeBytes { bytes in
            hasher.update(bytes)
            try writeAll(bytes)
        }
        self.hasher = hasher
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = retryingEINTR { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            guard n > 0 else { throw SystemError("write \(path)", code: n < 0 ? errno : EIO) }
            offset += n
        }
    }
}
