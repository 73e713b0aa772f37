import SyncCore

/// The bytes of a cache file after the listing's records: the records created locally (each after its
/// separator), then the trailer (`CacheFolder.trailer`), cut where an append changes them.
struct CreatedTail {
    /// The bytes, from the listing's end to the end of the file.
    let bytes: [UInt8]
    /// Where the trailer begins (`\n],\n"pending":[`): the end of the local creations.
    let trailerStart: Int
    /// Where the `]` that closes `pending` is.
    let pendingEnd: Int
    /// Whether the file holds a record before the local creations.
    let precededByListing: Bool

    private static let opening = Array("\n],\n\"pending\":[".utf8)
    private static let closing = Array("],\"parked\":[".utf8)

    /// Cuts `bytes`; nil when they hold no trailer. The last occurrence of each pattern is the trailer's: the
    /// lists after them hold IDs as JSON literals, in which a newline is escaped and a quote is either escaped
    /// or delimits a string, so neither pattern can occur there (records before them may hold anything).
    init?(_ bytes: [UInt8], precededByListing: Bool) {
        guard let start = CreatedTail.lastIndex(of: CreatedTail.opening, in: bytes),
              let end = CreatedTail.lastIndex(of: CreatedTail.closing, in: bytes),
              end >= start + CreatedTail.opening.count else { return nil }
        self.bytes = bytes
        trailerStart = start
        pendingEnd = end
        self.precededByListing = precededByListing
    }

    /// The bytes with `entries` (local creations with bodies, oldest first) added: each record after the
    /// local creations already there, each ID at the end of `pending`, as `ListingWriter` writes them.
    func appending(_ entries: [OutboxRecord]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + entries.reduce(0) { $0 + ($1.body?.count ?? 0) + $1.recordID.utf8.count + 6 })
        result.append(contentsOf: bytes[0..<trailerStart])
        var preceded = precededByListing || trailerStart > 0
        for entry in entries {
            guard let body = entry.body else { continue }
            if preceded { result.append(0x2c) }
            result.append(0x0a)
            preceded = true
            result.append(contentsOf: body)
        }
        result.append(contentsOf: bytes[trailerStart..<pendingEnd])
        var listed = pendingEnd > trailerStart + CreatedTail.opening.count
        for entry in entries {
            if listed { result.append(0x2c) }
            listed = true
            result.append(contentsOf: RecordID(key: entry.recordID, kind: entry.idIsInteger ? .integer : .string).jsonLiteral.utf8)
        }
        result.append(contentsOf: bytes[pendingEnd...])
        return result
    }

    /// Where the last occurrence of `pattern` in `bytes` begins.
    private static func lastIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var start = bytes.count - pattern.count
        while start >= 0 {
            if bytes[start] == pattern[0] && bytes[start..<start + pattern.count].elementsEqual(pattern) { return start }
            start -= 1
        }
        return nil
    }
}
