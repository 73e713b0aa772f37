/// Each source's `SourceStatus` object, serialised, kept from one `GetStatus` call to the next, and the
/// `sources` array joined from them, so that a reply for 10,000 sources is a copy of bytes made earlier
/// (docs/architecture.md, "Status at scale"; figures in docs/benchmarks.md, "Scale in sources").
///
/// A fragment is made anew only after its source was marked changed (`invalidate(_:)`, fed from the
/// `SourceChanges` of everything a status is made of); the joined array is kept while nothing is marked.
public struct SourceStatusFragments: Sendable {
    /// The sources in configuration order.
    private var names: [String] = []
    private var positions: [String: Int] = [:]
    /// Each source's object, nil until made or after its source was marked.
    private var fragments: [[UInt8]?] = []
    /// The positions marked since the array was last joined.
    private var dirty: [Int] = []
    /// The `sources` array's elements joined with commas; nil after a mark.
    private var joined: [UInt8]?
    /// How many fragments were serialised, since creation.
    public private(set) var serializedCount = 0

    /// A cache for `names`, in configuration order.
    public init(sources names: [String] = []) {
        setSources(names)
    }

    /// The sources, in configuration order (after a reload): every fragment is made anew.
    public mutating func setSources(_ names: [String]) {
        self.names = names
        positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        fragments = Array(repeating: nil, count: names.count)
        dirty = Array(names.indices)
        joined = nil
    }

    /// Marks the changed sources: their objects are made anew at the next `sources(status:)`.
    public mutating func invalidate(_ changes: SourceChanges) {
        if changes.all {
            setSources(names)
            return
        }
        for name in changes.names {
            guard let position = positions[name], fragments[position] != nil else { continue }
            fragments[position] = nil
            dirty.append(position)
            joined = nil
        }
    }

    /// The elements of the `sources` array, joined with commas: the kept bytes when nothing was marked, else
    /// the marked sources' objects made from `status(position)` and the others copied.
    public mutating func sources(status: (Int) -> SourceStatus) -> [UInt8] {
        if let joined { return joined }
        for position in dirty where fragments[position] == nil {
            fragments[position] = JSONValue.object(status(position).json).serializedBytes()
            serializedCount += 1
        }
        dirty = []
        var out: [UInt8] = []
        out.reserveCapacity(fragments.reduce(names.count) { $0 + ($1?.count ?? 0) })
        for position in fragments.indices {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out += fragments[position] ?? []
        }
        joined = out
        return out
    }
}

/// Writes the parameters of the `GetStatus` reply as compact JSON from the sources' joined objects (in
/// configuration order, e.g. from `SourceStatusFragments`): the same bytes as
/// `JSONValue.object(ManagerStatus.json).serializedBytes()` for the equivalent status, without serialising
/// every source again.
public enum StatusReplyWriter {
    /// The reply: `daemon`, then `sources` (the objects joined with commas), then `failed`.
    public static func reply(daemon: DaemonStatus, sources: [UInt8], failed: [FailedSourceStatus]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(sources.count + 1024)
        out += #"{"daemon":"#.utf8
        JSONValue.object(daemon.json).write(to: &out)
        out += #","sources":["#.utf8
        out += sources
        out += #"],"failed":"#.utf8
        JSONValue.array(failed.map { .object($0.json) }).write(to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
