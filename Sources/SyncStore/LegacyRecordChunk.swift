/// The chunk framing of schema version 1, where the store held every body (docs/architecture.md,
/// "Upgrading from schema 1"): for each record, little-endian
///
///     u32 idLength, id bytes, u8 flags (bit 0: integer ID, bit 1: has version),
///     [u32 versionLength, version bytes], u32 bodyLength, body bytes
///
/// Kept only to migrate such a file: the daemon publishes the cache file from these chunks once, then
/// drops them (`StateStore.migrateLegacyListing`).
enum LegacyRecordChunk {
    /// Decodes every record of `chunk`. A damaged chunk throws rather than reading out of bounds.
    static func forEach(in chunk: UnsafeRawBufferPointer, _ body: (StoredRecord) throws -> Void) throws {
        var offset = 0
        let truncated = StoreError.corrupt(path: "chunk", reason: "record framing is truncated")
        func length() throws -> Int {
            guard offset + 4 <= chunk.count else { throw truncated }
            let value = Int(chunk[offset]) | Int(chunk[offset + 1]) << 8 | Int(chunk[offset + 2]) << 16 | Int(chunk[offset + 3]) << 24
            offset += 4
            guard offset + value <= chunk.count else { throw truncated }
            return value
        }
        func slice(_ count: Int) -> UnsafeRawBufferPointer {
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + count])
        }
        while offset < chunk.count {
            let id = String(decoding: slice(try length()), as: UTF8.self)
            guard offset < chunk.count else { throw truncated }
            let flags = chunk[offset]
            offset += 1
            let version = flags & 2 != 0 ? String(decoding: slice(try length()), as: UTF8.self) : nil
            let bytes = slice(try length())
            try body(StoredRecord(id: id, idIsInteger: flags & 1 != 0, version: version, body: bytes))
        }
    }

    /// Appends one record in the version-1 framing (to build version-1 files in tests).
    static func append(id: String, idIsInteger: Bool, version: String?, body: [UInt8], to buffer: inout [UInt8]) {
        func length(_ value: Int) {
            let v = UInt32(truncatingIfNeeded: value)
            buffer += [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)]
        }
        length(id.utf8.count)
        buffer += Array(id.utf8)
        buffer.append((idIsInteger ? 1 : 0) | (version != nil ? 2 : 0))
        if let version {
            length(version.utf8.count)
            buffer += Array(version.utf8)
        }
        length(body.count)
        buffer += body
    }
}
