/// What a reload does to the list of sources (syncd.conf(5), DESCRIPTION): which sources are new, which changed
/// settings (the core refreshes them, cancelling a running refresh) and which are gone. Computed here from the two
/// configurations, so the loop only logs each entry and hands `changed` to the core in its `SourcePlan`.
public struct SourceListChanges: Sendable, Equatable {
    /// How a source of the new configuration differs from the one in force.
    public enum Change: Sendable, Equatable {
        /// No source of that name was configured.
        case added
        /// A source of that name was configured with other settings.
        case changed
    }

    /// One source of the new configuration that is new or changed.
    public struct Entry: Sendable, Equatable {
        /// The source's name.
        public var name: String
        /// How it differs.
        public var change: Change

        /// Creates an entry.
        public init(_ name: String, _ change: Change) {
            self.name = name
            self.change = change
        }
    }

    /// The sources that are new or changed, in the new configuration's order; unchanged ones are left out.
    public var entries: [Entry]
    /// The sources configured before and not any more, by name.
    public var removed: [String]

    /// The changes from the sources in force, `old`, to those of the new configuration, `new`. Names are unique in a
    /// loaded configuration; should one repeat, its first definition counts, as it does for the loop's lookups.
    public init(from old: [SourceConfiguration], to new: [SourceConfiguration]) {
        let previous = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = []
        entries = new.compactMap { source in
            guard seen.insert(source.name).inserted else { return nil }
            guard let before = previous[source.name] else { return Entry(source.name, .added) }
            return before == source ? nil : Entry(source.name, .changed)
        }
        removed = previous.keys.filter { !seen.contains($0) }.sorted()
    }

    /// The sources whose settings changed (not the new ones: every new source is refreshed anyway).
    public var changed: Set<String> {
        Set(entries.filter { $0.change == .changed }.map(\.name))
    }
}
