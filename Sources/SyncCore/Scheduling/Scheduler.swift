// All sources' schedulers behind one value, so the daemon has one thing to
// feed and one deadline to sleep until.

/// The refresh schedulers of every configured source, keyed by source name.
///
/// The daemon owns one `Scheduler` (inside its actor), feeds it every event
/// with the current monotonic instant, performs the returned actions and
/// sleeps until `nextDeadline()`; no polling.
public struct Scheduler: Sendable {
    /// Timing rules applied to every source.
    public private(set) var settings: SchedulerSettings
    /// The link monitor's last verdict, applied to sources added later.
    public private(set) var isOnline: Bool = true
    private var sources: [String: SourceScheduler] = [:]
    /// Sources whose URL needs no network link (a loopback host, a `file:` URL): the link state never makes
    /// them offline, so with only loopback up they are still refreshed at start and by the timer.
    public private(set) var localSources: Set<String> = []
    /// Every source's next deadline: `.tick` and `nextDeadline()` touch only the sources that are due.
    private var deadlines = DeadlineQueue()
    /// The sources whose scheduler was added, replaced, removed or fed an event since the last
    /// `statusChanges.take()`: the only ones whose `status(of:)` may differ (docs/architecture.md, "Status at scale").
    public internal(set) var statusChanges = SourceChanges()

    /// An empty scheduler.
    public init(settings: SchedulerSettings = SchedulerSettings()) {
        self.settings = settings
    }

    /// The names of the sources, sorted.
    public var sourceNames: [String] {
        sources.keys.sorted()
    }

    /// Adds a source (or replaces one of the same name), restoring its saved
    /// retry state if given. It inherits the current link state; feed it
    /// `.trigger(.startup)` (or `.reload` when added by a reload) afterwards.
    public mutating func addSource(_ name: String, restoring saved: PersistedRetryState? = nil, at now: MonotonicInstant) {
        var source = SourceScheduler(name: name, settings: settings, restoring: saved, at: now)
        if !isOnline && !localSources.contains(name) {
            var noJitter = ConstantJitter(0)
            _ = source.handle(.linkState(online: false), at: now, jitter: &noJitter)
        }
        store(source, as: name)
    }

    /// Sets the sources that need no network link (`localSources`), for sources added and link changes from now.
    public mutating func setLocalSources(_ names: Set<String>) {
        localSources = names
    }

    /// Removes a source; a refresh of it that ends later is ignored.
    public mutating func removeSource(_ name: String) {
        store(nil, as: name)
    }

    /// The one place a source's scheduler changes: its deadline follows, and its status is marked changed.
    private mutating func store(_ source: SourceScheduler?, as name: String) {
        sources[name] = source
        deadlines.set(name, source?.nextDeadline())
        statusChanges.insert(name)
    }

    /// Replaces the timing rules of every source (on reload); they apply from
    /// each source's next decision, already scheduled deadlines stay.
    public mutating func updateSettings(_ settings: SchedulerSettings) {
        self.settings = settings
        statusChanges.insertAll()
        for name in sources.keys {
            sources[name]?.settings = settings
            deadlines.set(name, sources[name]?.nextDeadline())
        }
    }

    /// Feeds an event at `now`.
    ///
    /// - `.trigger`: to `source`, or to every source when `source` is nil.
    /// - `.refreshFinished`: to `source` (required; nil or unknown is ignored).
    /// - `.linkState`: to every source but the local ones (`localSources`); `.tick`: to every source due
    ///   (`source` is ignored).
    ///
    /// Returns the actions of all sources concerned, in source-name order.
    public mutating func handle<J: JitterSource>(
        _ event: SchedulerEvent, source: String? = nil, at now: MonotonicInstant, jitter: inout J
    ) -> [SchedulerAction] {
        let targets: [String]
        switch event {
        case .trigger:
            targets = source.map { sources[$0] == nil ? [] : [$0] } ?? sourceNames
        case .refreshFinished:
            targets = source.map { sources[$0] == nil ? [] : [$0] } ?? []
        case .linkState(let online):
            isOnline = online
            targets = sourceNames.filter { !localSources.contains($0) }
        case .tick:
            // Only the sources whose deadline passed: a tick of any other source changes nothing.
            targets = deadlines.popDue(at: now)
        }
        var actions: [SchedulerAction] = []
        for name in targets {
            guard var source = sources[name] else { continue }
            actions += source.handle(event, at: now, jitter: &jitter)
            store(source, as: name)
        }
        return actions
    }

    /// The earliest instant any source needs `.tick`; nil if none does. O(1).
    public func nextDeadline() -> MonotonicInstant? {
        deadlines.earliest
    }

    /// One source's scheduler, for inspection.
    public func source(_ name: String) -> SourceScheduler? {
        sources[name]
    }

    /// One source's status for `GetStatus`; nil for an unknown source.
    public func status(of name: String) -> SourceScheduleStatus? {
        sources[name]?.status
    }

    /// The retry state of every source that has one, to save at `now`.
    public func exportRetryStates(at now: MonotonicInstant) -> [String: PersistedRetryState] {
        sources.compactMapValues { $0.exportRetryState(at: now) }
    }
}
