/// Where the cache file's parts lie relative to the file system's blocks (docs/architecture.md, "Storing
/// listings", block alignment): the header and every chunk's range of the records section are padded with
/// spaces (JSON white space: the document parses to the same value) to a whole number of blocks, so every
/// chunk starts at a block boundary. A rebuild or a delta then copies its unchanged chunks from the previous
/// file at block-aligned offsets and lengths in both files, even after a rewritten chunk changed size, and
/// `copy_file_range(2)` shares their extents on a file system that can (XFS with reflink, btrfs) instead
/// of copying the bytes. An empty chunk (a delta removed its records) has no bytes and no padding.
enum BlockAlignment {
    /// The block size aligned to: the usual one of XFS, btrfs and ext4.
    static let block = 4096
    /// The padding byte: a space.
    static let space: UInt8 = 0x20

    /// The spaces that make `count` bytes a whole number of blocks (none for none).
    static func padding(for count: Int) -> Int { (block - count % block) % block }

    /// Appends to `bytes` the spaces that make them a whole number of blocks.
    static func pad(_ bytes: inout [UInt8]) {
        bytes.append(contentsOf: repeatElement(space, count: padding(for: bytes.count)))
    }

    /// Whether `bytes`, what follows a chunk's records in its range, are padding: fewer than a block, all spaces.
    static func isPadding(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count < block && bytes.allSatisfy { $0 == space }
    }

    /// Whether a file of `layout` with `chunks` has every chunk at a block boundary. A file written before the
    /// padding has not; it is read as it is, but never copied from: the next rebuild or delta reads and writes
    /// every chunk, padded, and later ones copy again.
    static func isAligned(_ layout: FileLayout, chunks: [ChunkLayout]) -> Bool {
        layout.recordsStart % block == 0 && chunks.allSatisfy { $0.fileBytes % block == 0 }
    }
}
