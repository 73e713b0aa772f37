import SyncCore
import SyncRemote
import SyncStore

/// Refreshes sources: fetch, validate, reconcile into the store in one transaction, publish the cache file.
/// The only writer of the store. Blocking: run it off the cooperative pool, one refresh at a time.
public final class SyncEngine {
    /// The account's store.
    public let store: StateStore
    /// The account's cache folder.
    public let snapshots: SnapshotWriter
    let client: HTTPClient
    let logger: Logger
    let environment: [String: String]
    let clock: () -> Timestamp

    /// Creates an engine over an opened store.
    public init(store: StateStore, snapshots: SnapshotWriter, logger: Logger, environment: [String: String], clock: @escaping () -> Timestamp = currentTimestamp) throws(RefreshFailure) {
        do {
            client = try HTTPClient()
        } catch {
            throw RefreshFailure(.transient, "\(error)")
        }
        self.store = store
        self.snapshots = snapshots
        self.logger = logger
        self.environment = environment
        self.clock = clock
    }

    /// Cancels the refresh in progress, if any (from any thread).
    public func cancel() { client.cancellation.cancel() }

    /// Refreshes `source` once. The previous copy stays byte-for-byte unless a complete valid listing arrived.
    public func refresh(_ source: SourceConfiguration, progress: ((RefreshProgressCount) -> Void)? = nil) -> RefreshResult {
        client.cancellation.reset()
        let now = clock().rfc3339
        let previous: SourceState
        do {
            previous = try store.state(of: source.name)
        } catch {
            return fail(source, storeFailure(error), at: now)
        }
        let fetched: ListingFetcher.Result
        let pushFailure: RefreshFailure?
        do {
            let token = try source.bearerTokenCredential.map { name throws(RefreshFailure) in try Credentials.read(name, environment: environment) }
            // Local changes go out first, then the listing is pulled (SPEC "Local changes").
            pushFailure = try push(source, token: token)
            fetched = try ListingFetcher(source: source, client: client, store: store, environment: environment, token: token,
                                         progress: progress).fetch(previous: previous)
        } catch {
            return fail(source, error, at: now)
        }
        switch fetched {
        case .notModified:
            do {
                try store.recordUnchanged(source: source.name, at: now)
                confirmSent(source)
                try publishOrTouch(source, changed: false)
            } catch let failure as RefreshFailure {
                return fail(source, failure, at: now)
            } catch {
                return fail(source, RefreshFailure(.transient, "\(error)"), at: now)
            }
            tidyWriteAheadLog()
            logger.info("\(source.name): not modified (HTTP 304), \(counted(previous.recordCount, "record")) current")
            return settle(source, .unchanged(count: previous.recordCount), pushFailure: pushFailure, at: now)
        case .listing(let writer, let etag, let lastModified):
            let outcome: ListingOutcome
            do {
                outcome = try writer.commit(ListingMetadata(url: source.url, etag: etag, lastModified: lastModified, time: now, allowEmpty: source.allowEmpty))
            } catch {
                return fail(source, storeFailure(error, prefix: ""), at: now)
            }
            confirmSent(source)
            do {
                try publishOrTouch(source, changed: !outcome.unchanged)
            } catch let failure as RefreshFailure {
                return fail(source, failure, at: now)
            } catch {
                return fail(source, RefreshFailure(.transient, "\(error)"), at: now)
            }
            if outcome.unchanged {
                tidyWriteAheadLog()
                logger.info("\(source.name): listing unchanged, \(counted(outcome.count, "record")) current")
                return settle(source, .unchanged(count: outcome.count), pushFailure: pushFailure, at: now)
            }
            logger.info("\(source.name): synced \(counted(outcome.count, "record")) (listing changed)")
            return settle(source, .updated(outcome), pushFailure: pushFailure, at: now)
        }
    }

    /// The result of a pull after a push in which some record's change failed: the new listing is in place,
    /// yet the refresh counts as failed, so the change is retried with backoff (SPEC rule 7) and the reason shows.
    private func settle(_ source: SourceConfiguration, _ pulled: RefreshResult, pushFailure: RefreshFailure?, at time: String) -> RefreshResult {
        guard let pushFailure else { return pulled }
        var failure = pushFailure
        failure.message += " (the listing was pulled; the change stays queued and is retried)"
        return fail(source, failure, at: time)
    }

    /// After a refresh that changed nothing: fold a large write-ahead log into the database.
    func tidyWriteAheadLog() {
        do {
            if try store.checkpointIfWriteAheadLog(largerThan: 8 << 20) { logger.debug("Checkpointed the write-ahead log") }
        } catch {
            logger.warning("Failed to checkpoint the write-ahead log, continuing: \(error)")
        }
    }

    /// Rewrites the cache file when the content changed or an earlier write failed; otherwise only moves its mtime.
    func publishOrTouch(_ source: SourceConfiguration, changed: Bool) throws {
        let state: SourceState
        do {
            state = try store.state(of: source.name)
        } catch {
            throw storeFailure(error)
        }
        if changed || state.snapshotDirty {
            try publish(source.name, state: state)
        } else if try !snapshots.touch(source: source.name) {
            try publish(source.name, state: state)
        }
    }

    /// Writes the cache file of `name` from the store and clears its dirty mark.
    func publish(_ name: String, state: SourceState) throws {
        do {
            try snapshots.publish(source: name, state: state, store: store)
        } catch {
            // The store keeps the new data and the dirty mark, so the next refresh or start retries the write.
            try? store.setSnapshotDirty(source: name, true)
            throw RefreshFailure(.transient, "Failed to write cache file \(snapshots.path(of: name)), keeping the previous copy: \(error)")
        }
        do {
            try store.setSnapshotDirty(source: name, false)
        } catch {
            throw storeFailure(error)
        }
    }

    /// Makes sure every source's cache file exists and is sound (startup): a damaged one is moved aside
    /// and rewritten from the store.
    public func restoreSnapshots(_ sources: [SourceConfiguration]) {
        for name in snapshots.removeStaleTemporaries() {
            logger.notice("Removed \(name), left behind by an interrupted run")
        }
        for source in sources {
            do {
                let state = try store.state(of: source.name)
                switch try snapshots.inspect(source: source.name, now: clock()) {
                case .valid:
                    if state.snapshotDirty { try publish(source.name, state: state) }
                case .missing:
                    if state.lastSuccess != nil { try publish(source.name, state: state) }
                case .movedAside(let target, let reason):
                    logger.warning("\(source.name): cache file was damaged (\(reason)); moved it to \(target)")
                    if state.lastSuccess != nil { try publish(source.name, state: state) }
                }
            } catch {
                logger.error("\(source.name): Failed to restore the cache file: \(error)")
            }
        }
    }

    private func fail(_ source: SourceConfiguration, _ failure: RefreshFailure, at time: String) -> RefreshResult {
        if failure.kind == .cancelled {
            logger.info("\(source.name): refresh cancelled")
            return .failed(failure)
        }
        do {
            try store.recordFailure(source: source.name, url: source.url, message: failure.message, at: time)
        } catch {
            logger.error("\(source.name): Failed to record the failure: \(error)")
        }
        // The caller logs the failure: it knows what happens next (a retry, or the exit status of --once).
        return .failed(failure)
    }
}
