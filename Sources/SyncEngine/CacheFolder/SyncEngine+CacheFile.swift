internal import Glibc
import SyncCore
import SyncStore

/// The cache file, which is the only copy of the listings' bodies (docs/architecture.md, "Storing
/// listings"): rewriting it for local changes, confirming it after a 304, and at startup converting a
/// schema-1 store, finishing a rename a crash interrupted and setting aside a damaged file.
extension SyncEngine {
    /// What `publishOrTouch` did to the cache file.
    enum Publication {
        /// Only its mtime moved; the fingerprint is for the caller to record.
        case touched(SnapshotFingerprint)
        /// It was written: new content, or local changes applied.
        case rewritten
        /// It was written with local changes an earlier failed write had held back: news to the apps that read it.
        case heldBackWritten

        /// The fingerprint to record after a touch.
        var touched: SnapshotFingerprint? {
            if case .touched(let fingerprint) = self { return fingerprint }
            return nil
        }

        /// Whether apps now read a file syncd wrote just now.
        var rewroteFile: Bool { touched == nil }

        /// What to add to the refresh's log line.
        var note: String {
            switch self {
            case .touched: return ""
            case .rewritten: return "; rewrote the cache file"
            case .heldBackWritten: return "; wrote the cache file an earlier failure had left behind"
            }
        }
    }

    /// After a refresh that changed nothing: rewrites the cache file when an earlier write of local changes
    /// failed; otherwise only moves its mtime, after checking that the file is still the one syncd wrote.
    /// A file found damaged here is set aside and its listing forgotten: the refresh fails, and the next one
    /// fetches the whole listing.
    func publishOrTouch(_ source: SourceConfiguration, changed: Bool) throws -> Publication {
        let state: SourceState
        do {
            state = try store.state(of: source.name)
        } catch {
            throw storeFailure(error)
        }
        guard !changed, !state.snapshotDirty, let expected = state.snapshotFingerprint else {
            try publish(source.name)
            return !changed && state.snapshotDirty && !state.cacheFileWriteScheduled ? .heldBackWritten : .rewritten
        }
        let confirmation: CacheFileKeeper.Confirmation
        do {
            confirmation = try snapshots.confirm(source: source.name, expected: expected, now: clock()) {
                try store.cacheFileDigest(source: source.name, fd: $0)
            }
        } catch {
            throw RefreshFailure(.transient, "Failed to confirm cache file \(snapshots.path(of: source.name)): \(failureReason(error))")
        }
        switch confirmation {
        case .touched(let fingerprint):
            return .touched(fingerprint)
        case .missing:
            forget(source.name, because: "cache file \(snapshots.path(of: source.name)) is missing")
        case .movedAside(let target, let reason):
            forget(source.name, because: "cache file was damaged (\(reason)); moved it to \(target)")
        }
        // Lost during this refresh: the daemon fetches it again right after, not after the backoff.
        shared.reportLostCacheFile(of: source.name, from: store)
        throw RefreshFailure(.transient, "the cache file was lost; the store holds no other copy of the records, so the next refresh fetches the whole listing again")
    }

    /// Rewrites the cache file of `name` for the current local changes and clears its dirty mark. Failure
    /// messages say what the file apps read now holds (docs/architecture.md, "The cache file": the cache truth rule).
    func publish(_ name: String) throws {
        do {
            // The writer creates files, not folders: the folder may have been removed since the start.
            try snapshots.prepareDirectory()
            try store.rebuildCacheFile(source: name)
        } catch {
            if case StoreError.cacheFileNotFlushed = error { throw cacheFileFailure(error) ?? RefreshFailure(.transient, "\(error)") }
            // The current file, read to rebuild it, is not the one syncd wrote: set aside, fetched again.
            recoverCacheFile(name, after: error)
            // The outbox is ahead of the file: the dirty mark makes the next refresh or start write it again.
            try? store.setSnapshotDirty(source: name, true)
            throw cacheFileFailure(error) ?? RefreshFailure(.transient, "\(error)")
        }
    }

    /// The refresh failure for a failed cache file write, worded by what the file apps read now holds; nil
    /// for another error.
    func cacheFileFailure(_ error: any Error) -> RefreshFailure? {
        guard let error = error as? StoreError else { return nil }
        switch error {
        case .cacheFileWrite(let path, let reason, let code):
            let name = String(path.split(separator: "/").last ?? "").replacingEvery(".json", with: "")
            let kept = (try? store.state(of: name, countingLocalView: true)).map { " (\($0.cacheFileSummary))" } ?? ""
            // A local failure, not the server's: retried until it clears, never given up (syncd(8) "A full disk").
            var failure = RefreshFailure(.local, "Failed to write cache file \(path), keeping the previous copy\(kept): \(reason)"
                                         + outOfSpaceAdvice(code, source: name))
            failure.describesCacheFile = true
            return failure
        case .cacheFileNotFlushed(let path, let records, let reason):
            var failure = RefreshFailure(.local, "Replaced cache file \(path) with \(counted(records, "record")), "
                + "but failed to \(reason): the new copy is in place and apps read it, yet the replacement may not survive a power cut")
            failure.listingReplaced = true
            failure.describesCacheFile = true
            return failure
        case .cacheFileMismatch:
            return RefreshFailure(.transient, "\(error)")
        default:
            return nil
        }
    }

    /// What to do when the errno `code` says the file system of the cache folder is full (or the quota used
    /// up); empty for another reason.
    private func outOfSpaceAdvice(_ code: Int32?, source name: String) -> String {
        guard code == ENOSPC || code == EDQUOT else { return "" }
        if runsOnce { return "; free space on the file system of \(snapshots.directory), then run syncd --once again" }
        return "; free space on the file system of \(snapshots.directory), then run `syncctl refresh \(name)` "
            + "(the daemon also retries by itself, every MaxDelaySec= at most, until the write succeeds)"
    }

    /// Forgets the listing of `name` whose cache file is gone (the outbox stays), so the next refresh fetches
    /// it whole, and says so.
    func forget(_ name: String, because problem: String) {
        forgotListing = true
        do {
            try store.forgetListing(source: name)
            logger.forSource(name).warning("\(problem); the store holds no other copy of the records, so the next refresh fetches the whole listing again")
        } catch {
            logger.forSource(name).error("\(problem); Failed to forget its listing: \(failureReason(error))")
        }
    }

    /// Before a refresh: a cache file that is no longer the one syncd wrote is set aside and its listing
    /// forgotten. Costs a `stat` and two small reads while the file is untouched.
    func checkCacheFile(_ name: String) {
        // A listing still in the earlier storage format describes the file the earlier syncd wrote, not by the
        // new index: the file is the apps' copy until the conversion succeeds (`convertLegacyListing`).
        if hasUnconvertedListing(name) { return }
        // The folder may have been removed since the start (the writer creates files, not folders).
        do {
            try snapshots.prepareDirectory()
        } catch {
            logger.forSource(name).error("Failed to create the cache folder \(snapshots.directory): \(failureReason(error))")
        }
        // A rename that failed after its commit names the file the fingerprint describes: finish it first.
        if case .lost? = try? store.settlePendingRename(source: name) {
            forget(name, because: "the cache file being replaced is gone")
        }
        guard let state = try? store.state(of: name), let expected = state.snapshotFingerprint else { return }
        do {
            switch try snapshots.inspect(source: name, expected: expected, now: clock(), digest: { try store.cacheFileDigest(source: name, fd: $0) }) {
            case .valid(let refreshed):
                if let refreshed { try store.recordSnapshot(source: name, refreshed, dirty: state.snapshotDirty) }
            case .missing:
                forget(name, because: "cache file \(snapshots.path(of: name)) is missing")
            case .movedAside(let target, let reason):
                forget(name, because: "cache file was damaged (\(reason)); moved it to \(target)")
            }
        } catch {
            logger.forSource(name).error("Failed to check the cache file: \(failureReason(error))")
        }
    }

    /// While the daemon runs, a read of the cache file of `name` found bytes the index does not describe (an
    /// app or an administrator wrote into it): the same recovery as at start (`checkCacheFile`: the file is
    /// moved aside, the listing and its validators forgotten, the outbox and conflicts kept, logged once), and
    /// the daemon is told, so that it fetches the listing again at once (docs/syncd.8.md, "FILES"). Returns
    /// whether the listing was forgotten; false when the file is the one syncd wrote after all (the read
    /// raced a commit) or another engine recovered it first.
    @discardableResult
    public func recoverCacheFile(_ name: String) -> Bool {
        let lost = shared.withSourceLock(name) { () -> Bool in
            guard (try? store.state(of: name))?.snapshotFingerprint != nil else { return false }
            checkCacheFile(name)
            return (try? store.state(of: name))?.snapshotFingerprint == nil
        }
        if lost { shared.reportLostCacheFile(of: name, from: store) }
        return lost
    }

    /// Recovers the cache file of `name` when `error` says it does not match the index (`recoverCacheFile`);
    /// any other error is left alone.
    func recoverCacheFile(_ name: String, after error: any Error) {
        if case StoreError.cacheFileMismatch = error { recoverCacheFile(name) }
    }

    /// At startup: converts a schema-1 store, finishes renames a crash interrupted, removes stale temporary
    /// files, and checks every source's cache file (a damaged one is moved aside and its listing fetched
    /// again; one whose local changes an earlier failure held back is written).
    public func restoreSnapshots(_ sources: [SourceConfiguration]) {
        migrateLegacyListings()
        for source in sources {
            do {
                switch try store.settlePendingRename(source: source.name) {
                case .none, .cleared: break
                case .finished: logger.forSource(source.name).notice("finished replacing the cache file, which an interrupted run had left half done")
                case .lost: forget(source.name, because: "the cache file an interrupted run was replacing is gone")
                }
            } catch {
                logger.forSource(source.name).error("Failed to finish replacing the cache file: \(failureReason(error))")
            }
        }
        let pending = Set((try? store.pendingRenames()) ?? [])
        for name in snapshots.removeStaleTemporaries(keeping: pending) {
            logger.notice("Removed \(name), left behind by an interrupted run", source: CacheFileKeeper.source(ofTemporary: name))
        }
        for source in sources {
            if snapshots.adoptGroup(of: source.name) {
                logger.forSource(source.name).notice("gave the cache file \(snapshots.path(of: source.name)) the group its folder has, so that its readers can read it")
            }
            checkCacheFile(source.name)
            do {
                let state = try store.state(of: source.name)
                if state.snapshotDirty { try publish(source.name) }
            } catch {
                logger.forSource(source.name).error("Failed to restore the cache file: \(failureReason(error))")
            }
        }
        recoverDamagedStore()
    }

    /// Publishes each listing a schema-1 store held (with its bodies) through the new writer, then drops
    /// the old table (docs/architecture.md, "Upgrading from schema 1"). Nothing is fetched.
    func migrateLegacyListings() {
        guard let names = try? store.legacySources(), !names.isEmpty else { return }
        for name in names {
            if let failure = convertLegacyListing(name) { logger.forSource(name).error(failure.message) }
        }
        do {
            try store.finishLegacyMigration()
        } catch {
            logger.warning("Failed to drop the converted listings' old table, continuing: \(failureReason(error))")
        }
    }
}
