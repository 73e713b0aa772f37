import SyncControl
import SyncCore
import SyncRemote
import SyncStore
import SyncEngine

extension DaemonLoop {
    // MARK: Refreshes

    /// Runs the ticket on a free refresh lane with a cancellation flag of its own.
    func startRefresh(_ ticket: RefreshTicket) {
        guard let source = sourcesByName[ticket.source] else {
            // The core only issues tickets for configured sources; answer it anyway so nothing waits.
            input.yield(.refreshed(ticket, .failed(RefreshFailure(.cancelled, "source no longer configured")), nil))
            return
        }
        let flag = CancellationFlag()
        cancellations[ticket.id] = flag
        logger.forSource(ticket.source).debug("refreshing \(source.url)")
        worker.refresh(source, cancellation: flag, progress: { [input] count in
            input.yield(.refreshProgress(source: ticket.source, count))
        }) { [input] result, state in
            input.yield(.refreshed(ticket, result, state))
        }
    }

    /// A control read found the cache file of `name` not matching the store: the local lane's engine, which
    /// owns the writes, checks it and sets it aside if it was changed outside syncd (it then reports
    /// `.cacheFileLost`, and the listing is fetched again). Reads never write: they only route this here.
    func recoverCacheFile(_ name: String) {
        guard sourcesByName[name] != nil else { return }
        Task(executorPreference: DaemonExecutor.shared) { [worker] in
            await worker.withEngine { engine in
                engine?.followReplacedStore()
                engine?.recoverCacheFile(name)
            }
        }
    }

    /// Keeps `stamped` as the source's state unless a state read later already arrived (a local change's,
    /// reported from another lane); returns the source's state to show either way (nil without a report).
    func keepNewest(_ stamped: StampedState?, of name: String) -> SourceState? {
        guard let stamped else { return nil }
        if stamped.stamp > stateStamps[name, default: 0] {
            stateStamps[name] = stamped.stamp
            states[name] = stamped.state
        }
        return states[name]
    }

    func finishRefresh(_ ticket: RefreshTicket, result: RefreshResult, state stamped: StampedState?) {
        cancellations[ticket.id] = nil
        let name = ticket.source
        let current = ticket.generation == core.generation && core.scheduler.source(name) != nil
        var wasFailing = false
        var succeededBefore = false
        if current {
            let previous = states[name]
            wasFailing = previous?.lastError != nil || previous?.isStale == true
            succeededBefore = previous?.lastSuccess != nil
            let state = keepNewest(stamped, of: name)
            if let stamped { notices[name] = stamped.state.notices }
            // The cache file was rewritten by this refresh: a new listing, or a push that settled local changes.
            let replaced: Bool
            switch result {
            case .updated: replaced = true
            case .failed(let failure): replaced = failure.listingReplaced  // pulled, but a change failed to push
            case .unchanged: replaced = false
            }
            // A new listing's buffers are free now: give their pages back (docs/benchmarks.md, "Daemon memory").
            if replaced { MemoryPolicy.returnFreedMemory() }
            // Watchers were told of a listing published before the refresh went on: not again for the same file.
            let told = published.removeValue(forKey: name)
            let rewritten = replaced && (told == nil || told != state.map { PublishedListing(seq: $0.changeSeq, savedAt: $0.savedAt) })
            if let state, rewritten || state.pendingCount != previous?.pendingCount || state.conflictCount != previous?.conflictCount {
                broadcast(watchEvent(name, state, .saved))
            }
        }
        let finish = classify(result, source: name)
        feed(.refreshFinished(ticket, finish))
        if current, let state = states[name] {
            // The stale period's edges for the apps (docs/control-api.md, Watch): its first failure and the
            // success that ends it; the failures in between send nothing.
            if case .failed(let failure) = result, failure.kind != .cancelled, !wasFailing {
                var event = watchEvent(name, state, .stale)
                event.reason = state.lastError ?? failure.message
                event.publicReason = state.lastErrorPublic ?? SourceState.reasonWithheld
                broadcast(event)
            } else if wasFailing, finish.report.succeeded {
                broadcast(watchEvent(name, state, .fresh))
            }
        }
        if current, case .failed(let failure) = result, failure.kind != .cancelled {
            // Only a source with a listing has a cached copy to serve (one set aside is gone; a cache file that
            // holds only local changes made meanwhile is not a copy of the server's listing).
            let serving = states[name]?.savedAt != nil ? "serving the cached copy" : "no cached copy yet"
            logger.forSource(name).warning("refresh failed, \(serving): \(failure.message); \(retryDescription(name, waitsForCreate: result.ending.waitsForCreate))",
                                           messageID: .refreshFailed)
        } else if current, wasFailing, finish.report.succeeded {
            // "again" only when it had succeeded before: a source whose first attempts failed is not recovering.
            logger.forSource(name).notice("refresh succeeded\(succeededBefore ? " again" : " after the failures before it"), the cache is "
                                          + "current (\(finish.report.result.rawValue))", messageID: .sourceRecovered)
        }
        // The last running refresh ended: plan the release of idle code pages (docs/architecture.md, "Memory").
        if cancellations.isEmpty { idlePages.refreshesEnded(at: monotonicNow()) }
    }

    /// Unmaps the pages of code and read-only data the idle loop does not use, when `idlePages` says it is
    /// time and no refresh runs; they stay cached and come back on use (docs/architecture.md, "Memory").
    func releaseIdlePagesIfDue(at now: MonotonicInstant) {
        // libcurl, kept loaded a while after its last use (`libraryLinger`), goes first: the release waits for it.
        if let due = idlePages.due, due <= now, HTTPClient.loadedLibraryReleases() != nil {
            idlePages.refreshesEnded(at: now)
            return
        }
        guard idlePages.shouldRelease(at: now, refreshing: !cancellations.isEmpty) else { return }
        switch MemoryPolicy.releaseCleanFilePages() {
        case nil: idlePages.refreshesEnded(at: now)  // a local change's transfer has libcurl loaded: try later
        case .success(let kib): logger.debug("Idle: unmapped \(kib) KiB of clean code and read-only data pages")
        case .failure(let error): logger.debug("\(error), not unmapping idle code pages")
        }
    }

    /// The engine's result as the core sees it (`RefreshEnding.finish` decides).
    func classify(_ result: RefreshResult, source name: String) -> RefreshFinish {
        result.ending.finish(source: name, records: states[name]?.cachedRecordCount ?? 0, stale: states[name]?.isStale ?? false,
                             now: currentTimestamp().secondsSinceEpoch, interval: configuration.refresh.interval)
    }

    /// `waitsForCreate`: the failure is a create that waits for the listing, which is retried past MaxAttempts=.
    func retryDescription(_ name: String, waitsForCreate: Bool = false) -> String {
        guard let status = core.scheduler.status(of: name) else { return "source removed" }
        switch status.state {
        case .backoff:
            let delay = status.nextAttempt.map { $0 - monotonicNow() } ?? .zero
            // Only a failure while the server answers (a full disk; a create that waits for the listing) is
            // retried past MaxAttempts=: it is never given up.
            if status.attempt >= core.scheduler.settings.maxAttempts {
                return "retrying in \(formatDelay(delay)) until it succeeds ("
                    + (waitsForCreate ? "a create waits for the listing, which the server serves)" : "a local failure, not the server's)")
            }
            return "retrying in \(formatDelay(delay)) (attempt \(status.attempt + 1) of \(core.scheduler.settings.maxAttempts))"
        case .error:
            return "not retrying until the next trigger"
        case .offline:
            return "offline; retrying when the network returns"
        default:
            return "will retry"
        }
    }

    func saveRetryState(_ name: String) {
        let saved = core.scheduler.source(name)?.exportRetryState(at: monotonicNow())
        let text = saved?.jsonText
        guard states[name]?.retryState != text else { return }
        states[name]?.retryState = text
        Task(executorPreference: DaemonExecutor.shared) { [worker, logger] in
            await worker.withEngine { engine in
                do {
                    try engine?.store.saveRetryState(source: name, text)
                } catch {
                    logger.forSource(name).error("Failed to save retry state: \(failureReason(error))")
                }
            }
        }
    }

    /// The retry state `source` saved; nil (a fresh retry cycle, logged) when the saved text is damaged.
    static func decodeRetryState(_ text: String?, source: String, logger: Logger) -> PersistedRetryState? {
        guard let text else { return nil }
        do {
            return try PersistedRetryState(jsonText: text)
        } catch {
            logger.forSource(source).warning("\(error); starting a new retry cycle")
            return nil
        }
    }

    // MARK: Network

    func updateLinks(state: String, online isOnline: Bool, significant: Bool) {
        let significant = significant && !skipInitialLinkReport
        skipInitialLinkReport = false
        let wasOnline = core.online
        linkState = state
        if let line = linkLog.changed(to: isOnline, from: wasOnline, state: state, significant: significant, at: monotonicNow()) {
            if line.notice { logger.notice(line.text) } else { logger.info(line.text) }
        }
        feed(.links(online: isOnline, significant: significant))
        pacing.changed = true
    }

    func startProbe(_ failing: [String]) {
        let urls = configuration.network.reachabilityURL.map { [$0] }
            ?? failing.compactMap { name in configuration.sources.first { $0.name == name }?.url }
        prober.probe(urls: urls) { [input] isReachable in input.yield(.probed(reachable: isReachable)) }
    }

    func broadcast(_ event: WatchEvent) {
        for watcher in watchers.values { watcher.yield(event) }
    }

    /// The `Watch` reply telling that `source` is now as `state` says.
    func watchEvent(_ source: String, _ state: SourceState, _ kind: WatchEvent.Kind) -> WatchEvent {
        var event = WatchEvent(source: source, records: Int64(state.cachedRecordCount), pending: Int64(state.pendingCount),
                               conflicts: Int64(state.conflictCount), savedAt: state.savedAt, event: kind.rawValue)
        event.seq = state.changeSeq
        return event
    }
}

func formatDelay(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    if seconds < 10 {
        let tenths = Int(attoseconds / 100_000_000_000_000_000)
        return "\(seconds).\(tenths)s"
    }
    if seconds < 120 { return "\(seconds)s" }
    if seconds < 7200 { return "\(seconds / 60)min" }
    return "\(seconds / 3600)h"
}

/// What watchers were told of a listing published by a refresh that went on (`DaemonEvent.listingPublished`).
struct PublishedListing: Equatable {
    let seq: Int64
    let savedAt: String?
}
