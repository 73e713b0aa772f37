/// Each source's `SourceStatus` object, serialised, kept from one `GetStatus` call to the next, so that a
/// reply for 10,000 sources is mostly a concatenation of bytes made earlier (docs/architecture.md,
/// "Status at scale"; figures in docs/benchmarks.md, "Scale in sources").
///
/// An entry is keyed by the status value it was made from: a source whose status differs in any field
/// (state, counts, times, error, warnings, URL) is serialised anew, one whose status is equal reuses its
/// bytes. Nothing has to remember to invalidate an entry, so a stale one cannot be served.
public struct SourceStatusFragments: Sendable {
    struct Entry: Sendable {
        let status: SourceStatus
        let bytes: [UInt8]
    }

    private var entries: [String: Entry] = [:]
    /// How many fragments were serialised rather than reused, since creation.
    public private(set) var serializedCount = 0

    /// An empty cache.
    public init() {}

    /// Sources with a fragment.
    public var count: Int { entries.count }

    /// The compact JSON object of `status`: the bytes made for an equal status last time, or new ones.
    public mutating func fragment(for status: SourceStatus) -> [UInt8] {
        if let entry = entries[status.name], entry.status == status { return entry.bytes }
        let bytes = JSONValue.object(status.json).serializedBytes()
        entries[status.name] = Entry(status: status, bytes: bytes)
        serializedCount += 1
        return bytes
    }

    /// Forgets the fragments of sources not in `names` (sources a reload removed).
    public mutating func keepOnly(_ names: Set<String>) {
        entries = entries.filter { names.contains($0.key) }
    }
}

/// Writes the parameters of the `GetStatus` reply as compact JSON from each source's serialised object (in
/// configuration order, e.g. from `SourceStatusFragments`): the same bytes as
/// `JSONValue.object(ManagerStatus.json).serializedBytes()` for the equivalent status, without serialising
/// every source again.
public struct StatusReplyWriter: Sendable {
    private var out: [UInt8] = []
    private var sourceCount = 0

    /// Starts a reply; `capacity` pre-sizes the buffer (the previous reply's size), so a reply of megabytes is
    /// not copied while it grows.
    public init(daemon: DaemonStatus, capacity: Int = 0) {
        out.reserveCapacity(capacity)
        out += #"{"daemon":"#.utf8
        JSONValue.object(daemon.json).write(to: &out)
        out += #","sources":["#.utf8
    }

    /// Appends the next source's object.
    public mutating func appendSource(_ fragment: [UInt8]) {
        if sourceCount > 0 { out.append(UInt8(ascii: ",")) }
        out += fragment
        sourceCount += 1
    }

    /// Ends the reply with the sources left out because of a configuration error.
    public consuming func finish(failed: [FailedSourceStatus]) -> [UInt8] {
        out += #"],"failed":"#.utf8
        JSONValue.array(failed.map { .object($0.json) }).write(to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
