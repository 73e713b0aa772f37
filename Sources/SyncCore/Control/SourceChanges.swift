/// Which sources' `GetStatus` objects may have changed since they were last collected: the names of the
/// sources touched, or every source (docs/architecture.md, "Status at scale"). Marking a source that did not
/// change costs one serialisation; missing one that did would serve a stale object, so whatever changes a
/// status input marks the source where it changes it (the scheduler, the core's refresh lanes, the loop's
/// stored states and notices, a reload).
public struct SourceChanges: Sendable, Equatable {
    /// Every source changed (a reload, a logout, the links going down).
    public private(set) var all = false
    /// The sources changed, unless `all`.
    public private(set) var names: Set<String> = []

    /// No source changed.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool { !all && names.isEmpty }

    /// Marks one source.
    public mutating func insert(_ name: String) {
        if !all { names.insert(name) }
    }

    /// Marks every source.
    public mutating func insertAll() {
        all = true
        names = []
    }

    /// Adds the marks of `other`.
    public mutating func formUnion(_ other: SourceChanges) {
        if other.all { insertAll() } else { for name in other.names { insert(name) } }
    }

    /// Returns the marks and clears them.
    public mutating func take() -> SourceChanges {
        defer { self = SourceChanges() }
        return self
    }
}

/// A value per source (the loop's stored states, its notices) that marks a source in `changes` whenever its
/// value is set, so the status of a source cannot change without its `GetStatus` object being made anew.
public struct SourceTable<Value: Sendable>: Sendable {
    private var storage: [String: Value]
    /// The sources whose value was set since the last `changes.take()`.
    public var changes = SourceChanges()

    /// A table holding `values`.
    public init(_ values: [String: Value] = [:]) {
        storage = values
    }

    /// One source's value; setting it (even to an equal value) marks the source.
    public subscript(name: String) -> Value? {
        get { storage[name] }
        set {
            storage[name] = newValue
            changes.insert(name)
        }
    }

    /// Every value, in no particular order.
    public var values: Dictionary<String, Value>.Values { storage.values }

    /// Every source with a value, in no particular order.
    public var keys: Dictionary<String, Value>.Keys { storage.keys }

    /// How many sources have a value.
    public var count: Int { storage.count }

    /// Removes one source's value and marks the source; returns the value removed.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> Value? {
        changes.insert(name)
        return storage.removeValue(forKey: name)
    }

    /// Replaces every value (a logout, a replaced store) and marks every source.
    public mutating func replaceAll(with values: [String: Value]) {
        storage = values
        changes.insertAll()
    }
}
