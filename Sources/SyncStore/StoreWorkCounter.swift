/// Counts units of work of the store's reads and cache file rebuilds, so tests can prove that a cost does not
/// grow with the listing or with what is queued (counts, never time). Nil on a store: nothing is counted.
final class StoreWorkCounter {
    /// Outbox rows decoded into `OutboxRecord`s.
    var outboxEntriesRead = 0
    /// Index entries of the listing decoded (walking chunks, or looking for an ID's position).
    var indexEntriesVisited = 0
    /// Counts of a whole outbox (`StateStore.outboxCounts` when it cannot add to the last ones).
    var outboxCounts = 0
    /// Local creations a rebuild appended to the previous file's without rewriting the rest.
    var appendedCreates = 0
    /// Records of a listing hashed to find what it changed (ListingWriter+Changes), new and old.
    var changeDigests = 0
    /// Chunks of the cache file a rebuild or a delta kept by range copies (or, for a delta, by not rewriting the
    /// file at all), without reading them.
    var copiedChunks = 0
    /// Chunks of the cache file a rebuild or a delta read and wrote again.
    var reemittedChunks = 0
    /// Reads of every chunk's index entries looking for overlaid ones (`StateStore.touchedChunks`).
    var overlayScans = 0

    init() {}
}
