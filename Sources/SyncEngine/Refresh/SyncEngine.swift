import SyncCore
import SyncRemote
import SyncStore

/// Refreshes sources: fetch, validate, reconcile into the store in one transaction, publish the cache file.
/// The daemon has several (docs/architecture.md, "Concurrency"), each with its own connection and libcurl
/// handle, sharing `EngineShared`. Blocking: run it off the cooperative pool, one piece of work at a time.
public final class SyncEngine {
    /// How large the write-ahead log may grow before a refresh folds it in: about sixteen no-change
    /// refreshes (each appends one 64 KiB page), measured in docs/benchmarks.md; a changed listing of more
    /// than a few thousand records passes it at once.
    static let writeAheadLogLimit = 1 << 20
    /// The account's store; replaced by an empty one when SQLite finds it damaged (`recoverDamagedStore`).
    public private(set) var store: StateStore
    /// The account's cache folder.
    public let snapshots: CacheFileKeeper
    /// The network: libcurl in the daemon, a script in tests.
    let client: any HTTPTransport
    let logger: Logger
    let environment: [String: String]
    /// The engine's clocks (`EngineClock.system` in the daemon).
    let clocks: EngineClock
    /// What this engine shares with the daemon's other engines (docs/architecture.md, "Concurrency").
    public let shared: EngineShared
    /// Whether this engine is `syncd --once`'s: what a failure advises is to run it again, not `syncctl`, and no
    /// daemon retries.
    public var runsOnce = false
    /// The `shared.storeGeneration` this engine's store belongs to.
    private var storeGeneration: Int
    /// The last listing could not be committed because local changes rewrote the file meanwhile.
    private var overtaken = false
    /// A cache file was found damaged or missing and its listing forgotten (`forget`) since the refresh began.
    var forgotListing = false
    /// When the refresh under way began: its push and its listing share one deadline (`RefreshDeadline`).
    var refreshStarted: Duration?

    /// Creates an engine over an opened store; engines of one daemon pass the same `shared`. Without a
    /// `transport` the engine talks HTTP through libcurl (`HTTPClient`).
    public init(store: StateStore, snapshots: CacheFileKeeper, logger: Logger, environment: [String: String],
                shared: EngineShared = EngineShared(), clock: EngineClock = .system,
                transport: (any HTTPTransport)? = nil) throws(RefreshFailure) {
        // libcurl is loaded at the first transfer, and unloaded by `closeConnections()` once no one uses it.
        client = transport ?? HTTPClient()
        self.store = store
        self.snapshots = snapshots
        // The listings' bodies are in the cache files: the store reads and writes them there.
        store.cacheFolder = snapshots.folder
        self.logger = logger
        self.environment = environment
        self.shared = shared
        storeGeneration = shared.storeGeneration.withLock { $0 }
        self.clocks = clock
    }

    /// The wall clock's now.
    func clock() -> Timestamp { clocks.wall() }

    /// Reopens the store when another engine replaced the damaged database since this one opened it:
    /// the old connection still reads the file moved aside. Call before each piece of work.
    public func followReplacedStore() {
        let current = shared.storeGeneration.withLock { $0 }
        if current != storeGeneration { reopenStore(generation: current) }
    }

    private func reopenStore(generation: Int) {
        let path = store.path
        store.close()
        do {
            store = try StateStore(path: path, cacheFolder: snapshots.folder)
            storeGeneration = generation
        } catch {
            // The closed store fails every operation with a clear error; the next piece of work tries again.
            logger.error("Failed to reopen the replaced state database \(path): \(failureReason(error))")
        }
    }

    /// The warnings of each source's latest listing that did not fail it (an oversized validator): logged
    /// once per source until they change.
    /// Each is redacted (`redaction(for:)`) when noted.
    public var notices: [String: [SourceNotice]] {
        shared.memory.withLock { memory in
            memory.sharedClientIDs.reduce(into: memory.notices) { notices, shared in
                if !shared.value.isEmpty { notices[shared.key, default: []] += shared.value }
            }
        }
    }

    /// Keeps `current` as the source's notices, redacted (syncd(8), SECURITY, "Secrets"), and logs each once
    /// per source (a warning repeated at every refresh would drown the journal).
    func note(_ current: [SourceNotice], of source: SourceConfiguration) {
        let redaction = redaction(for: source)
        let unique = current.map { $0.redacted(by: redaction) }.reduce(into: [SourceNotice]()) { if !$0.contains($1) { $0.append($1) } }
        let known = shared.memory.withLock { memory in
            defer { memory.notices[source.name] = unique.isEmpty ? nil : unique }
            return memory.notices[source.name] ?? []
        }
        for notice in unique where !known.contains(notice) { logger.forSource(source.name).warning(notice.text) }
    }

    /// Closes the libcurl handle and its connections, so that an idle engine keeps no libcurl loaded
    /// (docs/architecture.md, "libcurl on demand"); the next transfer opens a new one.
    public func closeConnections() { client.close() }

    /// Cancels the refresh in progress, if any (from any thread).
    public func cancel() { client.cancellation.cancel() }

    /// Refreshes `source` once. The previous copy stays byte-for-byte unless a complete valid listing arrived.
    /// When the refresh finds the database damaged, the database is replaced by an empty one and the source
    /// is fetched again, whole, into it: the same refresh rebuilds what the damaged file held.
    /// `cancellation`, when given, is this refresh's own flag (the daemon's ticket): it replaces the client's
    /// flag for the transfers of this refresh and is never cleared here, so a cancel that came early stands.
    /// `cacheFileChecked`: the caller has checked the source's cache file (`restoreSnapshots`, when `syncd --once`
    /// starts), so this refresh does not check it again before its request. Should the file have changed since
    /// (damaged, removed: found by the 304's confirmation or the commit's comparison, which set it aside and forget
    /// the listing), the listing is fetched again, whole, in this refresh: `--once` has no next refresh, and its
    /// apps would be left without a file until the next run.
    public func refresh(_ source: SourceConfiguration, cancellation: CancellationFlag? = nil, cacheFileChecked: Bool = false,
                        progress: ((RefreshProgressCount) -> Void)? = nil) -> RefreshResult {
        if let cancellation { client.cancellation = cancellation }
        forgotListing = false
        // A failure of the state folder's file system during this refresh makes its failure local (`fail`).
        store.clearStorageFailure()
        var result = refreshOnce(source, progress: progress, cacheFileChecked: cacheFileChecked)
        if cacheFileChecked, forgotListing, case .failed(let failure) = result, failure.kind != .cancelled {
            logger.forSource(source.name).notice("fetching the whole listing again now")
            result = refreshOnce(source, progress: progress)
        }
        if overtaken {
            // A local change rewrote the cache file while the listing was paging: the listing could not be
            // committed over it; fetched again now, it is.
            overtaken = false
            logger.forSource(source.name).info("local changes were written while the listing was fetched; fetching it again")
            result = refreshOnce(source, progress: progress)
        }
        guard recoverDamagedStore() else { return result }
        if case .failed(let failure) = result, failure.kind == .cancelled { return result }
        // A cancel that came during the recovery stands.
        if client.cancellation.isCancelled { return .failed(RefreshFailure(.cancelled, "cancelled")) }
        logger.forSource(source.name).notice("refreshing again into the new state database")
        return refreshOnce(source, progress: progress)
    }

    /// When an operation found the database damaged (SQLITE_CORRUPT, SQLITE_NOTADB), closes it, moves it aside
    /// and continues on an empty one (`AccountStorage.replaceDamagedStore`); returns true when it did. Retrying
    /// on the damaged file cannot help: every operation that reaches the damaged page fails the same way.
    /// No check runs on open (`PRAGMA quick_check` reads the whole file); damage is found when it is read.
    @discardableResult
    public func recoverDamagedStore() -> Bool {
        guard let damage = store.damage else { return false }
        let path = store.path
        // One engine replaces the file; another that met the same damage meanwhile opens the new file instead.
        return shared.storeGeneration.withLock { generation in
            if generation != storeGeneration {
                reopenStore(generation: generation)
                return true
            }
            let undelivered = store.undeliveredChangeCount()
            let builtAside = store.isBuiltAside
            store.close()
            do {
                // The new store is created in place: the run goes on with it as with any store (nothing to finish).
                store = try AccountStorage.replaceDamagedStore(
                    at: path, builtAside: builtAside, problem: "is damaged (SQLite said \"\(damage.message)\", code \(damage.code), while trying to \(damage.operation))",
                    undeliveredChanges: undelivered, logger: logger, now: clock())
                store.cacheFolder = snapshots.folder
                generation += 1
                storeGeneration = generation
                return true
            } catch {
                // The closed store fails every operation; the next one tries again.
                logger.error("Failed to replace the damaged state database \(path): \(failureReason(error))")
                return false
            }
        }
    }

    private func refreshOnce(_ source: SourceConfiguration, progress: ((RefreshProgressCount) -> Void)?,
                             confirming: Bool = false, cacheFileChecked: Bool = false, carrying: [SourceNotice] = []) -> RefreshResult {
        if client.cancellation.isCancelled { return .failed(RefreshFailure(.cancelled, "cancelled")) }
        let now = clock().rfc3339
        refreshStarted = clocks.sinceBoot()
        // A listing whose conversion failed at the start is converted first: fetching over it would leave the old
        // copy behind, and the file apps read is the one it describes.
        if let failure = convertLegacyListing(source.name) { return fail(source, failure, at: now) }
        let previous: SourceState
        do {
            // The cache file is the only copy of the bodies: one found damaged is set aside and the
            // listing fetched whole, unconditionally (docs/architecture.md, "Storing listings").
            let forgotten = !cacheFileChecked && shared.withSourceLock(source.name) { () -> Bool in
                let held = (try? store.state(of: source.name))?.savedAt != nil
                checkCacheFile(source.name)
                return held && (try? store.state(of: source.name))?.savedAt == nil
            }
            // The status says so while the listing is fetched again, not only once it is back.
            if forgotten { shared.reportState(of: source.name, from: store) }
            previous = try store.state(of: source.name)
        } catch {
            return fail(source, storeFailure(error), at: now)
        }
        var fetched: ListingFetcher.Result
        var pull: DeltaPull?
        let pushFailure: RefreshFailure?
        var lostCreateIDs: Set<RecordID>?
        var listedAt = clocks.uptimeMilliseconds()
        var notices: [SourceNotice] = []
        // The listing resumed staged pages (ListingFetcher+Resume).
        var resumed = false
        var pages = 1
        var token: String?
        // The changes queued before the push: each must be delivered, or the refresh retried (requireDelivery).
        let lastQueued = lastQueuedChange(of: source)
        do {
            token = try source.bearerTokenCredential.map { name throws(RefreshFailure) in try Credentials.token(name, environment: environment) }
            let read = token
            shared.memory.withLock { $0.tokens[source.name] = read }
            // Local changes go out first, then the listing is pulled (docs/local-changes.md).
            if source.writable { pruneDiscarded(source) }
            pushFailure = try push(source, token: token)
            // Lost creates are looked for in the listing pulled now, among records not in the one before.
            lostCreateIDs = lostCreates(of: source).isEmpty ? nil : listingIDs(of: source)
            func fetcher(_ pull: DeltaPull?, previous: SourceState = previous) -> ListingFetcher {
                let fetcher = ListingFetcher(source: source, client: client, clocks: clocks, store: store, environment: environment, token: token,
                                             progress: progress)
                fetcher.savedAt = now
                fetcher.deadline = refreshStarted.map { $0 + source.listingTimeout }
                fetcher.cacheFileFailure = { [self] in cacheFileFailure($0) }
                pull?.prepare(fetcher)
                fetcher.resumePlan = resumePlan(source, pull: pull, previous: previous, now: now)
                return fetcher
            }
            // Delta=: changes only since the checkpoint, or the whole listing and why (syncd.conf(5), "Incremental pull").
            pull = try deltaPull(source, previous: previous)
            var listing = fetcher(pull)
            listedAt = clocks.uptimeMilliseconds()
            do {
                fetched = try listing.fetch(previous: previous)
            } catch where listing.resumeRefused {
                // The server refused where the staged listing continues (a page token it forgot), and the staged pages
                // went: the listing starts over now, not at the next trigger (syncd.conf(5), "RESUMING A FIRST SYNC").
                logger.forSource(source.name).notice("starting the listing over: the server refused where the interrupted listing "
                                                     + "stopped (\(error.message))")
                var fresh = previous
                fresh.listingResume = nil
                listing = fetcher(pull, previous: fresh)
                fetched = try listing.fetch(previous: fresh)
            }
            if case .expired(let status) = fetched {
                // Once: the full listing is not a delta and cannot expire.
                pull = pull?.expired(status: status)
                logger.forSource(source.name).notice("fetching the whole listing: \(DeltaPlan.FullListingReason.expired(status: status).text)")
                listing = fetcher(pull)
                fetched = try listing.fetch(previous: previous)
            }
            pull?.received(from: listing)
            if let at = listing.resumedAtRecord {
                resumed = true
                let skipped = listing.skippedAfterResume
                logger.forSource(source.name).info("the listing resumed after \(counted(at, "staged record"))"
                    + (skipped > 0 ? "; \(counted(skipped, "record")) received again \(skipped == 1 ? "was" : "were") left out (the staged copy stands)" : ""))
            }
            pages = listing.pagesFetched
            notices = listing.notices + (pull?.notices ?? [])
        } catch {
            return fail(source, error, at: now)
        }
        // From the commit to the published file the source's lock is held: a local change of the same source
        // waits for that much, never for the paging above (docs/architecture.md, "Concurrency").
        let result = shared.withSourceLock(source.name) { () -> RefreshResult in
            let result = conclude(source, fetched, pull: pull, previous: previous, pushFailure: pushFailure, lostCreateIDs: lostCreateIDs,
                                  listedAt: listedAt, pages: pages, now: now)
            // A 304 or a failure says nothing new about the listing: its warnings stand until the next listing.
            switch fetched {
            case .listing, .delta: note(carrying + notices, of: source)
            case .notModified, .expired: break
            }
            if case .failed = result {} else { checkClientIDs(source, newListing: { if case .listing = fetched { true } else { false } }()) }
            return result
        }
        // The changes queued behind a create whose answer was lost waited for this listing to settle it: they
        // go out now rather than at the next refresh (docs/local-changes.md, "Changes made while one is out").
        if case .failed = result { return result }
        if lostCreateIDs != nil {
            do {
                if let failure = try push(source, token: token) { return fail(source, failure, at: now) }
            } catch {
                return fail(source, error, at: now)
            }
        }
        if let failure = requireDelivery(source, result, through: lastQueued) { return fail(source, failure, at: now) }
        // A full listing of several pages is caught up now by a delta from its checkpoint: a record changed after
        // its page was read, or moved by a change to a page already read, is not left out until the next refresh.
        // A resumed listing without that delta may lack what the server changed before its resume point while it was
        // interrupted (a record added or edited there, one deleted from the staged pages): listed again now, whole,
        // it is complete before anyone waits for the next periodic refresh (syncd.conf(5), "RESUMING A FIRST SYNC").
        if resumed, pull?.catchUp != true, !confirming, case .updated = result {
            logger.forSource(source.name).info("listing again now, for what changed on the server while the listing was interrupted")
            // Apps read the resumed listing's file from now on: the status and watchers say so while it is listed again.
            shared.reportPublished(of: source.name, from: store)
            let again = refreshOnce(source, progress: progress, confirming: true, carrying: notices)
            if case .unchanged = again { return result }
            return again
        }
        if pull?.catchUp == true, !confirming {
            logger.forSource(source.name).info("asking for the changes made while the listing was paged")
            if case .updated = result { shared.reportPublished(of: source.name, from: store) }
            // The listing's warnings stand with the delta's: the two are one refresh.
            let caughtUp = refreshOnce(source, progress: progress, confirming: true, carrying: notices)
            if case .unchanged = caughtUp, case .updated = result { return result }
            if case .failed(var failure) = caughtUp, failure.kind != .cancelled {
                failure.append(" (the whole listing was saved; this was the delta asked for right after it, for the changes made while "
                               + "it was paged: check DeltaQuery=, which 'syncd --probe \(source.name)' tries)")
                return .failed(failure)
            }
            return caughtUp
        }
        // What that late push sent is shown by a listing pulled now, not at the next periodic refresh: until
        // then the status would count it pending. Once: a listing that still lags leaves it to the next refresh.
        guard lostCreateIDs != nil, !confirming, hasUnconfirmedPush(source) else { return result }
        let confirmed = refreshOnce(source, progress: progress, confirming: true)
        if case .unchanged = confirmed, case .updated = result { return result }
        return confirmed
    }

    /// Commits (or confirms) what the listing brought and publishes the cache file.
    private func conclude(_ source: SourceConfiguration, _ fetched: ListingFetcher.Result, pull: DeltaPull?, previous: SourceState,
                          pushFailure: RefreshFailure?, lostCreateIDs: Set<RecordID>?, listedAt: Int64, pages: Int,
                          now: String) -> RefreshResult {
        switch fetched {
        case .notModified:
            // The listing is the one stored: a lost create is looked for in it too (found only by its ID), so
            // a 304 settles it like any listing and the push after it re-sends it (docs/local-changes.md).
            if let lostCreateIDs { settleLostCreates(source, previousIDs: lostCreateIDs, listedAt: listedAt) }
            settleNotFound(source)
            let publication: Publication
            do {
                confirmSent(source)
                // The confirmed file's new fingerprint is stored with the success: one commit per 304.
                publication = try publishOrTouch(source, changed: false)
                do {
                    try store.recordUnchanged(source: source.name, at: now, snapshot: publication.touched)
                } catch {
                    throw storeFailure(error)
                }
            } catch let failure as RefreshFailure {
                return fail(source, failure, at: now)
            } catch {
                return fail(source, RefreshFailure(.transient, "\(error)"), at: now)
            }
            tidyWriteAheadLog()
            logger.forSource(source.name).info("not modified (HTTP 304), \(counted(previous.recordCount, "record")) current\(publication.note)")
            let result: RefreshResult = publication.rewroteFile
                ? .updated(ListingOutcome(count: previous.recordCount, unchanged: false)) : .unchanged(count: previous.recordCount)
            return settle(source, result, pushFailure: pushFailure, at: now)
        case .listing(let writer, let etag, let lastModified):
            let outcome: ListingOutcome
            do {
                outcome = try writer.commit(ListingMetadata(url: source.url, etag: etag, lastModified: lastModified, time: now, allowEmpty: source.allowEmpty,
                                                            checkpoint: pull?.checkpoint(at: now)))
            } catch .duplicateID(let id, let index) where pages > 1 {
                // Records shift between pages when the collection changes during the listing; a new try sees it settled,
                // from the start.
                if ListingResume.method(for: source) != nil { dropStagedListing(source, because: "record \(index) repeats an ID") }
                return fail(source, RefreshFailure(.transient, "record \(index) repeats ID \"\(id)\" (\(pages) pages): the collection most "
                                                   + "likely changed on the server while it was being paged; retrying"), at: now)
            } catch {
                overtaken = writer.overtaken
                // The old file, compared chunk by chunk, is not the one syncd wrote: set aside, fetched again.
                recoverCacheFile(source.name, after: error)
                return fail(source, cacheFileFailure(error) ?? storeFailure(error, prefix: ""), at: now)
            }
            // Settled against this listing first, so that what it already shows is confirmed at once.
            settleAfterCommit(source, lostCreateIDs: lostCreateIDs, listedAt: listedAt)
            let publication: Publication
            do {
                // The commit wrote the file for the outbox as it was when the listing began: changes made or
                // settled since are applied now.
                let outbox = try store.outbox(source: source.name)
                let file = try store.state(of: source.name)
                if outbox != writer.outboxApplied || file.snapshotDirty {
                    try publish(source.name)
                    // Only a write an earlier failure held back is news to mention (not one a burst's coalescing scheduled).
                    publication = file.snapshotDirty && !file.cacheFileWriteScheduled && outcome.unchanged ? .heldBackWritten : .rewritten
                } else if outcome.unchanged {
                    publication = try publishOrTouch(source, changed: false)
                    if let touched = publication.touched { try store.recordSnapshot(source: source.name, touched) }
                } else {
                    publication = .rewritten
                }
            } catch let failure as StoreError {
                return fail(source, storeFailure(failure), at: now)
            } catch let failure as RefreshFailure {
                return fail(source, failure, at: now)
            } catch {
                return fail(source, RefreshFailure(.transient, "\(error)"), at: now)
            }
            // A changed listing leaves its records in the log: fold them in now rather than leave the next
            // process (the next `syncd --once`, a control read) to replay the log when it opens the store.
            tidyWriteAheadLog()
            if outcome.unchanged {
                logger.forSource(source.name).info("listing unchanged, \(counted(outcome.count, "record")) current\(publication.note)")
                // A listing an earlier failure kept out of the cache file is news to the apps that read it.
                guard publication.rewroteFile else {
                    return settle(source, .unchanged(count: outcome.count), pushFailure: pushFailure, at: now)
                }
                return settle(source, .updated(ListingOutcome(count: outcome.count, unchanged: false)), pushFailure: pushFailure, at: now)
            }
            logger.forSource(source.name).info("synced \(counted(outcome.count, "record")) (listing changed)")
            return settle(source, .updated(outcome), pushFailure: pushFailure, at: now)
        case .delta(let collector):
            return concludeDelta(source, collector, pull: pull, pushFailure: pushFailure, lostCreateIDs: lostCreateIDs, listedAt: listedAt, now: now)
        case .expired(let status):
            // Not reached: only a delta's answer is `.expired`, and `refreshOnce` follows it with a full listing,
            // which cannot be. Should it be, the refresh fails rather than store nothing in silence.
            return fail(source, RefreshFailure(.transient, "HTTP \(status) answered the whole listing's request too"), at: now)
        }
    }

    /// The changes a committed listing or delta settles: lost creates it shows, changes whose record is gone,
    /// sent changes it shows taken.
    func settleAfterCommit(_ source: SourceConfiguration, lostCreateIDs: Set<RecordID>?, listedAt: Int64) {
        if let lostCreateIDs { settleLostCreates(source, previousIDs: lostCreateIDs, listedAt: listedAt) }
        settleNotFound(source)
        confirmSent(source)
    }

    /// The result of a pull after a push in which some record's change failed: the new listing is in place,
    /// yet the refresh counts as failed, so the change is retried with backoff (syncd(8) GUARANTEES 7) and the reason shows.
    func settle(_ source: SourceConfiguration, _ pulled: RefreshResult, pushFailure: RefreshFailure?, at time: String) -> RefreshResult {
        guard let pushFailure else { return pulled }
        var failure = pushFailure
        failure.append(" (the listing was pulled; the change stays queued and is retried)")
        if case .updated = pulled { failure.listingReplaced = true }
        return fail(source, failure, at: time)
    }

    /// After a refresh: fold the write-ahead log into the database and truncate it once it passes
    /// `SyncEngine.writeAheadLogLimit`. Every process that opens the store reads the whole log first
    /// (closing does not checkpoint), so a log left behind makes the next `syncd --once` pay for it, and
    /// its file holds a second copy of the listing on disk (docs/architecture.md, "Storing listings").
    func tidyWriteAheadLog() {
        // A truncating checkpoint holds the write lock while it waits for readers, such as another lane
        // publishing a large cache file: local changes would wait with it. The last refresh running folds it.
        guard shared.runningRefreshes.withLock({ $0 }) <= 1 else { return }
        do {
            if try store.checkpointIfWriteAheadLog(largerThan: SyncEngine.writeAheadLogLimit) { logger.debug("Checkpointed the write-ahead log") }
        } catch {
            logger.warning("Failed to checkpoint the write-ahead log, continuing: \(failureReason(error))")
        }
    }

    /// What hides `source`'s secrets (its token as last read, its headers', its URLs') in what this engine says.
    func redaction(for source: SourceConfiguration) -> Redaction {
        Redaction(source: source, token: shared.memory.withLock { $0.tokens[source.name] })
    }

    /// Every failure of a refresh passes here: redacted (syncd(8), SECURITY, "Secrets"), recorded, returned to be logged.
    func fail(_ source: SourceConfiguration, _ failure: RefreshFailure, at time: String) -> RefreshResult {
        let failure = StateStorageFailure.attributed(failure.redacted(by: redaction(for: source)), storage: store.storageFailure,
                                                   database: store.path, source: source.name, once: runsOnce)
        if failure.kind == .cancelled {
            logger.forSource(source.name).info("refresh cancelled")
            return .failed(failure)
        }
        // A damaged store is about to be replaced (see `refresh`); writing the failure into it would fail too.
        if store.damage != nil { return .failed(failure) }
        do {
            try store.recordFailure(source: source.name, url: source.url, message: failure.message,
                                    publicMessage: failure.publicMessage ?? failure.message, at: time)
        } catch {
            logger.forSource(source.name).error("Failed to record the failure: \(failureReason(error))")
        }
        // The caller logs the failure: it knows what happens next (a retry, or the exit status of --once).
        return .failed(failure)
    }
}
