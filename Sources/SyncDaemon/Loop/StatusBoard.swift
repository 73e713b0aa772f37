import SyncCore
import SyncStore
import SyncEngine

/// What the loop holds of each source's status besides the core (its stored state, its listing's notices)
/// and the `GetStatus` reply made from them (docs/architecture.md, "Status at scale"). A call re-serialises
/// only the sources marked changed since the previous one and copies the rest; with nothing marked the
/// `sources` array is the bytes of the previous call.
struct StatusBoard {
    /// Stored state of every source, refreshed after each refresh and local change.
    var states = SourceTable<SourceState>()
    /// Each source's warnings from its latest listing (an unfollowed next page, an oversized validator).
    var notices = SourceTable<[SourceNotice]>()
    private var fragments = SourceStatusFragments()
    /// The folder of the account's cache files (it never changes on reload), for each source's `cacheFile`.
    var cacheFolder = CacheFolder(directory: "", account: "", group: nil)
    /// The same for callers outside ControlGroup= (`Redaction.Audience.everyone`), made at their first call.
    private var publicFragments = SourceStatusFragments()

    /// How many source objects were serialised since the board was made.
    var serializedCount: Int { fragments.serializedCount + publicFragments.serializedCount }

    /// The configured sources, in configuration order (at start and after a reload): every object is made anew.
    mutating func setSources(_ sources: [SourceConfiguration]) {
        fragments.setSources(sources.map(\.name))
        publicFragments.setSources(sources.map(\.name))
    }

    /// The one place that decides which sources' status changed: every input of `status(of:)` marks its
    /// source where it changes (the core's scheduler and lanes, `states`, `notices`; a reload marks all), and
    /// this collects the marks. Called after every event and before every reply.
    mutating func collectChanges(from core: inout DaemonStateMachine) {
        var changes = core.takeStatusChanges()
        changes.formUnion(states.changes.take())
        changes.formUnion(notices.changes.take())
        fragments.invalidate(changes)
        publicFragments.invalidate(changes)
    }

    /// The parameters of the `GetStatus` reply for `audience`, serialised; `sources` is the configuration the
    /// board was set to.
    mutating func reply(core: inout DaemonStateMachine, sources: [SourceConfiguration], daemon: DaemonStatus,
                        failed: [FailedSourceStatus], now: MonotonicInstant, wall: Timestamp,
                        audience: Redaction.Audience = .privileged) -> [UInt8] {
        collectChanges(from: &core)
        // Moved out while it is filled, so that making an object may read the rest of the board.
        // Each audience has its own serialised objects.
        let kept: WritableKeyPath<StatusBoard, SourceStatusFragments> = audience == .everyone ? \.publicFragments : \.fragments
        var fragments = self[keyPath: kept]
        self[keyPath: kept] = SourceStatusFragments()
        let joined = fragments.sources { position in
            status(of: sources[position], core: core, now: now, wall: wall, audience: audience)
        }
        self[keyPath: kept] = fragments
        return StatusReplyWriter.reply(daemon: daemon.shown(to: audience), sources: joined, failed: failed.map { $0.shown(to: audience) })
    }

    /// One source's status: its stored state, what the scheduler plans for it, and whether it is refreshing.
    /// `nextAttempt` is rendered as a wall-clock time when the object is made, and kept while nothing marks
    /// the source.
    ///
    /// For `.everyone` (docs/control-api.md, "Secrets") the URLs hold no query values, and `lastError` (the
    /// status line and the kind of failure only) and `warnings` (`SourceNotice.publicText`) quote nothing the
    /// server wrote.
    func status(of configuration: SourceConfiguration, core: DaemonStateMachine, now: MonotonicInstant, wall: Timestamp,
                audience: Redaction.Audience = .privileged) -> SourceStatus {
        let source = configuration.name
        let state = states[source] ?? SourceState(name: source)
        let status = core.scheduler.status(of: source)
        // `syncing` only while a refresh lane runs it: one the scheduler made due that waits for a free lane
        // is `idle` (waiting for a refresh that was asked for), as syncctl(1) documents the states.
        let scheduled = status?.state ?? .idle
        let name: SourceStateName = core.isRefreshing(source) ? .syncing : scheduled == .syncing ? .idle : scheduled
        let next = status?.nextAttempt.map { instant -> String in
            let seconds = max(0, (instant - now).components.seconds)
            return Timestamp(secondsSinceEpoch: wall.secondsSinceEpoch + seconds).rfc3339
        }
        let lastError = audience == .everyone && state.lastError != nil
            ? state.lastErrorPublic ?? SourceState.reasonWithheld : state.lastError
        let shown = { (text: String) in Redaction.scrubbingURLs(in: text, for: audience) }
        var shownStatus = SourceStatus(
            name: source, url: shown(configuration.url), state: name, records: Int64(state.cachedRecordCount),
            pending: Int64(state.pendingCount), parked: Int64(state.parkedCount), conflicts: Int64(state.conflictCount),
            warnings: ((notices[source] ?? []) + (state.holdsNoListingAnyMore ? [SourceState.listingBeingFetchedAgain] : []))
                .map { shown($0.shown(to: audience)) },
            lastSuccess: state.lastSuccess, lastAttempt: state.lastAttempt, lastError: lastError.map(shown),
            stale: state.isStale, attempt: Int64(status?.attempt ?? 0), nextAttempt: next,
            cacheFile: PrintableText.escaping(cacheFolder.path(of: source)), mode: SourceMode(configuration))
        shownStatus.seq = state.changeSeq
        if configuration.delta.isEnabled {
            // A checkpoint taken for other settings (a reload changed them) is none: the next refresh lists whole.
            let binding = DeltaPlan.binding(of: configuration, account: cacheFolder.account)
            let held = state.deltaCheckpoint.flatMap { $0.binding == binding ? $0 : nil }
            shownStatus.delta = DeltaStatus(mode: configuration.delta.mode.rawValue, lastDelta: held?.deltaAt, lastFullListing: held?.fullListingAt)
        }
        // Staged pages of other settings are none: the next listing starts over.
        if let point = state.listingResume, point.binding == ListingResume.binding(of: configuration, account: cacheFolder.account) {
            shownStatus.resume = ResumeStatus(records: Int64(point.keep), pages: Int64(point.pages), began: point.startedAt)
        }
        return shownStatus
    }
}

extension SourceState {
    /// `lastError` for callers outside ControlGroup= when an older syncd stored it without keeping the server's
    /// words apart (until the next refresh of the source).
    static let reasonWithheld = "the last refresh failed; its reason is shown to root and members of ControlGroup="

    /// A listing was held (a refresh succeeded) and was forgotten since: its cache file was lost or damaged and
    /// set aside, and no listing has been stored again yet. `list` and `get` show only local changes meanwhile.
    var holdsNoListingAnyMore: Bool { savedAt == nil && lastSuccess != nil }

    /// The status warning while `holdsNoListingAnyMore`.
    static let listingBeingFetchedAgain = SourceNotice(ownWords: "no listing held: the cache file was lost or damaged and set "
        + "aside, and the listing is being fetched again; until then list and get show only pending local changes")
}

extension DaemonStatus {
    /// The status as `audience` sees it: the rejected reload's problem without the URLs' query values for everyone.
    func shown(to audience: Redaction.Audience) -> DaemonStatus {
        guard audience == .everyone, let reloadRejected else { return self }
        var copy = self
        copy.reloadRejected = Redaction.scrubbingURLs(in: reloadRejected, for: .everyone)
        return copy
    }
}

extension FailedSourceStatus {
    /// The failed source as `audience` sees it: the problem without the URLs' query values for everyone.
    func shown(to audience: Redaction.Audience) -> FailedSourceStatus {
        guard audience == .everyone else { return self }
        var copy = self
        copy.problem = Redaction.scrubbingURLs(in: problem, for: .everyone)
        return copy
    }
}
