/// What the cache file shows of a record once its outbox entry was dropped (`DropOutbox`'s `shows`).
public enum DroppedRecordView: String, Sendable, CaseIterable {
    /// The server's version, as its latest listing has it.
    case server
    /// A newer local change of the record, still in the outbox.
    case local
    /// Nothing: the record left the local view, as the server's listing does not have it (a create never taken).
    case nothing
}
