import SyncCore
import SyncStore

/// One refresh's incremental pull (syncd.conf(5), "Incremental pull"; docs/architecture.md, "Incremental pull"):
/// what it asks the server for, and the checkpoint its commit stores. `DeltaPlan` decides; this performs.
final class DeltaPull {
    let source: SourceConfiguration
    /// What the checkpoint is bound to (`DeltaPlan.binding`).
    let binding: String
    /// The stored checkpoint this refresh started from, if any.
    let stored: DeltaCheckpoint?
    /// Changes only, or the whole listing and why.
    let fetch: DeltaPlan.Fetch
    /// `Delta=watermark`: the highest stamp the fetch saw.
    private(set) var watermark: DeltaWatermark?
    /// `Delta=token`: the token on the last page received.
    private(set) var token: String?
    /// A full listing of several pages under `Delta=watermark`: a delta from its checkpoint follows at once
    /// (`SyncEngine.refreshOnce`), for what changed while it was paged.
    private(set) var catchUp = false
    /// Warnings that did not fail the refresh (a last page without a token).
    private(set) var notices: [SourceNotice] = []

    init(source: SourceConfiguration, binding: String, stored: DeltaCheckpoint?, fetch: DeltaPlan.Fetch) {
        self.source = source
        self.binding = binding
        self.stored = stored
        self.fetch = fetch
    }

    /// Whether this refresh asks for changes only.
    var isDelta: Bool { if case .delta = fetch { true } else { false } }

    /// The same pull, now fetching the whole listing because the server refused the checkpoint with `status`.
    func expired(status: Int) -> DeltaPull {
        let pull = DeltaPull(source: source, binding: binding, stored: stored, fetch: .full(.expired(status: status)))
        pull.notices.append(SourceNotice(ownWords: "the server answered HTTP \(status) to the delta request (DeltaExpired=): the "
                                         + "checkpoint was too old, so the whole listing was fetched; the next refresh asks for changes again"))
        return pull
    }

    /// Tells `fetcher` what to ask for and where the watermark starts.
    func prepare(_ fetcher: ListingFetcher) {
        switch fetch {
        case .delta(let url, let checkpoint):
            fetcher.asking = .delta(url: url, checkpoint: checkpoint)
            if source.delta.mode == .watermark { fetcher.watermark = DeltaWatermark(checkpoint: checkpoint) }
        case .full:
            fetcher.asking = .listing
            if source.delta.mode == .watermark { fetcher.watermark = DeltaWatermark() }
        }
    }

    /// Takes what the fetch found: the watermark, or the token on its last page.
    func received(from fetcher: ListingFetcher) {
        // A full listing's checkpoint is its first page's highest stamp, not its own: changes made while later
        // pages were read may have lower stamps than records read after them.
        watermark = isDelta ? fetcher.watermark : fetcher.firstPageWatermark
        // Pages are separate requests: what changed after the first was served may be missing from the listing
        // (moved to a page already read) or held in an older copy, whatever its order.
        catchUp = !isDelta && fetcher.pagesFetched > 1 && fetcher.firstPageWatermark?.checkpoint != nil
        guard source.delta.mode == .token else { return }
        switch fetcher.lastDocument?.value(at: source.delta.tokenPath) {
        case .string(let text)? where !text.isEmpty: token = text
        case let number? where number.integerText != nil: token = number.integerText
        default:
            token = nil
            notices.append(SourceNotice(ownWords: "the \(isDelta ? "delta's" : "listing's") last page has no token at DeltaTokenPath="
                                        + "\(source.delta.tokenPathText); the next refresh fetches the whole listing again: point "
                                        + "DeltaTokenPath= at the token the server gives for the next changes"))
        }
    }

    /// The checkpoint a commit made `now` stores: nil when the fetch gave none (the next refresh is a full listing).
    func checkpoint(at now: String) -> DeltaCheckpoint? {
        let value = source.delta.mode == .watermark ? watermark?.checkpoint : token
        guard let value else { return nil }
        let fullListingAt = isDelta ? (stored?.fullListingAt ?? now) : now
        return DeltaCheckpoint(mode: source.delta.mode.rawValue, binding: binding, value: value, fullListingAt: fullListingAt,
                               deltaAt: isDelta ? now : nil)
    }
}

extension SyncEngine {
    /// The incremental pull of the refresh about to fetch `source`; nil under `Delta=none`.
    func deltaPull(_ source: SourceConfiguration, previous: SourceState) throws(RefreshFailure) -> DeltaPull? {
        guard source.delta.isEnabled else { return nil }
        let stored: DeltaCheckpoint?
        do {
            stored = try store.deltaCheckpoint(source: source.name)
        } catch {
            throw storeFailure(error)
        }
        let binding = DeltaPlan.binding(of: source, account: snapshots.folder.account)
        let fullAt = stored.flatMap { Timestamp(rfc3339: $0.fullListingAt)?.secondsSinceEpoch } ?? 0
        let asked = shared.memory.withLock { $0.fullListingsAsked.remove(source.name) != nil }
        guard var fetch = DeltaPlan.fetch(source, account: snapshots.folder.account, held: previous.savedAt != nil,
                                          stored: stored.map { ($0.value, $0.binding, fullAt) }, now: clock().secondsSinceEpoch)
        else { return nil }
        if asked, case .delta = fetch { fetch = .full(.asked) }
        // A full listing cut short (asked for, or due) is finished before deltas go on from the older checkpoint: its
        // staged pages would otherwise wait for the next full listing, a day later, and be resumed then, a day old.
        if case .delta = fetch, let point = previous.listingResume,
           point.binding == ListingResume.binding(of: source, account: snapshots.folder.account) {
            fetch = .full(.resuming)
        }
        if case .full(let reason) = fetch, reason != .noListing {
            logger.forSource(source.name).info("fetching the whole listing: \(reason.text)")
        }
        return DeltaPull(source: source, binding: binding, stored: stored, fetch: fetch)
    }

    /// Applies a delta received whole (`collector`) in one transaction with its checkpoint, publishes the cache
    /// file, and settles what it shows.
    func concludeDelta(_ source: SourceConfiguration, _ collector: DeltaCollector, pull: DeltaPull?, pushFailure: RefreshFailure?,
                       lostCreateIDs: Set<RecordID>?, listedAt: Int64, now: String) -> RefreshResult {
        let changes = collector.changes
        let outcome: ListingOutcome
        do {
            outcome = try store.applyDelta(source: source.name, upserts: changes.upserts, removals: changes.removals,
                                           metadata: ListingMetadata(url: source.url, etag: nil, lastModified: nil, time: now, allowEmpty: true,
                                                                     checkpoint: pull?.checkpoint(at: now)))
        } catch {
            // The old file, compared chunk by chunk, is not the one syncd wrote: set aside, fetched again.
            recoverCacheFile(source.name, after: error)
            return fail(source, cacheFileFailure(error) ?? storeFailure(error, prefix: ""), at: now)
        }
        settleAfterCommit(source, lostCreateIDs: lostCreateIDs, listedAt: listedAt)
        do {
            // Changes this delta settled, or a file an earlier failure held back, are written now.
            if try store.state(of: source.name).snapshotDirty { try publish(source.name) }
        } catch let failure as RefreshFailure {
            return fail(source, failure, at: now)
        } catch {
            return fail(source, RefreshFailure(.transient, "\(error)"), at: now)
        }
        tidyWriteAheadLog()
        let said = "a delta of \(counted(changes.upserts.count, "record")) and \(counted(changes.removals.count, "tombstone"))"
        if outcome.unchanged {
            let received = collector.received == 0 ? "nothing changed" : "\(counted(collector.received, "record")) received, none differs from the held copy"
            logger.forSource(source.name).info("delta: \(received), \(counted(outcome.count, "record")) current")
            return settle(source, .unchanged(count: outcome.count), pushFailure: pushFailure, at: now)
        }
        logger.forSource(source.name).info("synced \(counted(outcome.count, "record")) (\(said))")
        return settle(source, .updated(outcome), pushFailure: pushFailure, at: now)
    }
}

extension SyncEngine {
    /// Whether and how the full listing about to be fetched stages its pages, and the staged listing it resumes
    /// (docs/architecture.md, "Resuming an interrupted listing"). Pages are staged for a source that can resume
    /// (`ListingResume.method`) when no listing is held (a first sync, or after a logout or a lost cache file) or
    /// under `Delta=`, where a full listing is rare; a source listed whole at every refresh does not pay for it.
    /// Staged pages of other settings, or of a source that can no longer resume, go.
    func resumePlan(_ source: SourceConfiguration, pull: DeltaPull?, previous: SourceState, now: String) -> ListingFetcher.ResumePlan? {
        let point = previous.listingResume
        guard pull?.isDelta != true else { return nil }
        let binding = ListingResume.binding(of: source, account: snapshots.folder.account)
        guard let method = ListingResume.method(for: source), previous.savedAt == nil || source.delta.isEnabled else {
            if point != nil { dropStagedListing(source, because: "the source no longer resumes a listing") }
            return nil
        }
        if let point {
            if point.binding == binding && point.method == method.rawValue {
                logger.forSource(source.name).notice("resuming the listing at record \(point.keep + 1) (page \(point.pages + 1)); it began \(point.startedAt)")
                return ListingFetcher.ResumePlan(staging: ListingStaging(method: method, binding: binding, startedAt: point.startedAt,
                                                                         stagesFrom: clocks.sinceBoot() + source.stagePagesAfter), point: point)
            }
            dropStagedListing(source, because: "the source's settings changed since it began")
        }
        return ListingFetcher.ResumePlan(staging: ListingStaging(method: method, binding: binding, startedAt: now,
                                                                 stagesFrom: clocks.sinceBoot() + source.stagePagesAfter), point: nil)
    }

    /// Drops the staged pages of an interrupted listing of `source`: the listing starts over.
    func dropStagedListing(_ source: SourceConfiguration, because reason: String) {
        do {
            try store.discardListingResume(source: source.name)
            logger.forSource(source.name).notice("starting the listing over: \(reason)")
        } catch {
            logger.forSource(source.name).warning("Failed to drop the staged pages of the interrupted listing: \(failureReason(error))")
        }
    }
}
