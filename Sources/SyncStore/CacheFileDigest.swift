internal import Glibc
import SyncCore

/// The content hash of a cache file's fingerprint (docs/architecture.md, "The cache file"), composed from
/// the parts the store already hashes, so that neither a refresh nor a local change rereads the file for it:
///
///     XXH64 over the little-endian UInt64s  XXH64(header), file_hash of chunk 0, 1, …, XXH64(tail)
///
/// where the header is the bytes before `records_start`, each chunk's `file_hash` is the XXH64 of its range
/// of the records section (as `chunks` stores it), and the tail is the bytes from `listing_end` to the end
/// (local creations and the trailer). Any changed byte changes one part's hash and so the whole.
public struct CacheFileDigest {
    private var hasher = XXHash64()

    /// An empty digest.
    public init() {}

    /// Adds the hash of the next part.
    public mutating func add(_ partHash: UInt64) {
        withUnsafeBytes(of: partHash.littleEndian) { hasher.update($0) }
    }

    /// Adds the next part by its bytes.
    mutating func add(bytes: [UInt8]) { add(XXHash64.hash(bytes)) }

    /// The composed hash.
    public func finalize() -> UInt64 { hasher.finalize() }
}

extension StateStore {
    /// The fingerprint hash of the file open as `fd`, read whole and cut where the store's layout of the
    /// cache file of `source` says its parts lie; nil when the store records no layout or the file's size
    /// does not fit it. Throws `StoreError.cacheFileMismatch` when the file cannot be read.
    public func cacheFileDigest(source: String, fd: Int32) throws -> UInt64? {
        guard let layout = try fileLayout(source: source) else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let path = folder(source: source)
        return try composedHash(fd: fd, path: path, size: Int(info.st_size), layout: layout, chunks: try chunkLayouts(source: source)) { chunk, offset in
            var bytes = [UInt8](repeating: 0, count: chunk.fileBytes)
            try readExactly(fd, path: path, into: &bytes, at: offset)
            return XXHash64.hash(bytes)
        }
    }

    /// The fingerprint hash of the cache file open as `fd` (`size` bytes), its header and tail read where
    /// `layout` cuts them and each chunk's part hashed by `chunkHash` (given the chunk and its offset: read
    /// from the file, or the stored `file_hash`); nil when the layout does not fit the chunks or the size.
    func composedHash(fd: Int32, path: String, size: Int, layout: FileLayout, chunks: [ChunkLayout],
                      chunkHash: (ChunkLayout, Int) throws -> UInt64) throws -> UInt64? {
        guard layout.recordsStart + chunks.reduce(0, { $0 + $1.fileBytes }) == layout.listingEnd, layout.listingEnd <= size else { return nil }
        var digest = CacheFileDigest()
        var bytes = [UInt8](repeating: 0, count: layout.recordsStart)
        try readExactly(fd, path: path, into: &bytes, at: 0)
        digest.add(bytes: bytes)
        var offset = layout.recordsStart
        for chunk in chunks {
            digest.add(try chunkHash(chunk, offset))
            offset += chunk.fileBytes
        }
        bytes = [UInt8](repeating: 0, count: size - layout.listingEnd)
        try readExactly(fd, path: path, into: &bytes, at: layout.listingEnd)
        digest.add(bytes: bytes)
        return digest.finalize()
    }

    /// The path of the cache file of `source` (its name alone for a store without its cache folder).
    func folder(source: String) -> String { cacheFolder?.path(of: source) ?? source + ".json" }
}
