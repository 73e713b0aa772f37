import SyncCore

/// Which records a listing changed and removed against the stored one, for the change log
/// (StateStore+ChangeLog; docs/architecture.md, "The change log").
///
/// Only the chunks the writer stages are compared: a chunk equal to the stored one at the same place holds the
/// same records with the same bytes, and since IDs are unique no record of a differing chunk can be in an
/// equal one. So the work follows the chunks that differ (one for a record changed in place), never the
/// listing: each record of a differing chunk, new and old, is hashed once (the server's body, as the index
/// and file hold it). A record inserted or removed near the start shifts every later chunk: then every record is
/// compared (the writer writes every chunk again anyway), up to `ChangeFeed.comparedPerListing` records, and
/// only the records that differ are logged.
struct ListingDiff {
    /// The differing new chunks' records, in listing order: the ID (compared by its bytes) and the hash of the
    /// server's body.
    private(set) var fresh: [(id: RecordID, hash: UInt64)] = []
    /// The listing is logged without IDs: a first listing (nothing stored to compare with) of more records than
    /// a change lists (`ChangeFeed.listedPerListing`), or more differing records than are compared
    /// (`ChangeFeed.comparedPerListing`). Its records are not kept here.
    private(set) var unlisted = false
    /// Whether a stored listing exists to compare with (set by the writer).
    var comparing = true
    /// A delta's: the `RecordChunk.hash` of every ID whose record may differ (the delta's upserts and removals, the
    /// local changes over them). A re-emitted chunk's other records are its stored bytes again, so they are left
    /// out here and on the stored side (`StateStore.feedDelta`): the work follows the change, not the chunk.
    var only: Set<UInt64>?

    /// The hash a record is compared by: its server body, and whether its ID is a number.
    static func digest(_ body: UnsafeRawBufferPointer, idIsInteger: Bool) -> UInt64 {
        XXHash64.hash(body) &+ (idIsInteger ? 1 : 0)
    }

    /// Notes the records of one staged chunk: `entries` its index entries, `file` its range of the new cache
    /// file (each record after its separator, `fileLength` bytes).
    mutating func note(entries: [UInt8], file: [UInt8], counter: StoreWorkCounter?) throws {
        guard !unlisted else { return }
        try entries.withUnsafeBytes { entryBytes in
            try file.withUnsafeBytes { fileBytes in
                var cursor = 0
                try RecordChunk.forEachRaw(in: entryBytes) { entry in
                    var body = entry.serverBody
                    if let length = entry.fileLength {
                        if cursor < fileBytes.count, fileBytes[cursor] == 0x2c { cursor += 1 }
                        if cursor < fileBytes.count, fileBytes[cursor] == 0x0a { cursor += 1 }
                        guard cursor + length <= fileBytes.count else {
                            throw StoreError.corrupt(path: "chunk", reason: "index entry \"\(String(decoding: entry.id, as: UTF8.self))\" runs past its chunk's bytes")
                        }
                        if body == nil { body = UnsafeRawBufferPointer(rebasing: fileBytes[cursor..<(cursor + length)]) }
                        cursor += length
                    }
                    guard let body, !unlisted else { return }
                    if let only, !only.contains(RecordChunk.hash(entry.id)) { return }
                    counter?.changeDigests += 1
                    fresh.append((RecordID(String(decoding: entry.id, as: UTF8.self)),
                                  ListingDiff.digest(body, idIsInteger: entry.flags & RecordChunk.integerID != 0)))
                    if fresh.count > (comparing ? ChangeFeed.comparedPerListing : ChangeFeed.listedPerListing) {
                        unlisted = true
                        fresh = []
                    }
                }
            }
        }
    }

    /// The IDs changed (new, or with other bytes) and removed, against `old` (the stored records of the chunks
    /// that differ, by ID); nil when they are more than a change lists.
    func changes(against old: [RecordID: UInt64]) -> (changed: [[UInt8]], removed: [[UInt8]])? {
        guard !unlisted else { return nil }
        var seen: Set<RecordID> = []
        var changed: [[UInt8]] = []
        for record in fresh {
            seen.insert(record.id)
            if old[record.id] != record.hash { changed.append(Array(record.id.key.utf8)) }
        }
        let removed = old.keys.filter { !seen.contains($0) }.sorted().map { Array($0.key.utf8) }
        guard changed.count + removed.count <= ChangeFeed.listedPerListing else { return nil }
        return (changed, removed)
    }
}

extension ListingWriter {
    /// The stored records of the chunks a refresh replaces or drops (those it staged, and those past its end),
    /// by ID, with their digests; nil when the stored listing cannot be read (its file changed): the listing
    /// is then logged without IDs.
    func replacedRecords(staged: Set<Int>) -> [RecordID: UInt64]? {
        let seqs = (staged.filter { $0 < stored.count } + Array(min(nextSeq, stored.count)..<stored.count)).sorted()
        guard seqs.reduce(0, { $0 + stored[$1].records }) <= ChangeFeed.comparedPerListing else { return nil }
        var old: [RecordID: UInt64] = [:]
        // A delta read each chunk it wrote again, and kept what the log needs: no second read.
        if seqs.allSatisfy({ readChunks[$0] != nil }) {
            for seq in seqs {
                for record in readChunks[seq] ?? [] { old[record.id] = record.hash }
            }
            return old
        }
        var index = 0
        do {
            while index < seqs.count {
                // Contiguous runs in one walk: a listing shifted by an insertion differs in every later chunk.
                var last = index
                while last + 1 < seqs.count, seqs[last + 1] == seqs[last] + 1 { last += 1 }
                try store.walkListing(source: source, first: seqs[index], last: seqs[last]) { record in
                    store.workCounter?.changeDigests += 1
                    old[RecordID(record.id)] = ListingDiff.digest(record.body, idIsInteger: record.idIsInteger)
                    return true
                }
                index = last + 1
            }
        } catch {
            return nil
        }
        return old
    }

    /// What this refresh or delta changed (before the commit's transaction, while the stored listing is still the
    /// old one): nil when it changed no record (or is not from the server); `changed` and `removed` both nil when the
    /// records are too many to list or the old ones could not be read.
    func measureChanges() -> (changed: [[UInt8]], removed: [[UInt8]])?? {
        guard purpose.fromServer else { return nil }
        let old = diff.unlisted ? nil : replacedRecords(staged: stagedSeqs)
        guard let old, var found = diff.changes(against: old) else { return .some(nil) }
        // A record the listing no longer has that a local change still shows (a conflict, an edit not yet pushed)
        // is still in the view apps read: changed, not removed.
        let stillShown = found.removed.filter { id in
            overlay[RecordID(String(decoding: id, as: UTF8.self))].map { $0.operation != .delete } ?? false
        }
        if !stillShown.isEmpty {
            found.removed.removeAll { stillShown.contains($0) }
            found.changed += stillShown
        }
        guard !found.changed.isEmpty || !found.removed.isEmpty else { return nil }
        return .some(found)
    }

    /// Logs `measured` (from `measureChanges`) in the commit's transaction.
    func log(_ measured: (changed: [[UInt8]], removed: [[UInt8]])??) throws {
        guard let measured else { return }
        try store.logChange(source: source, changed: measured?.changed ?? [], removed: measured?.removed ?? [], unlisted: measured == nil)
    }
}
