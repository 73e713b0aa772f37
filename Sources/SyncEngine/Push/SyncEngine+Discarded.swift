import SyncCore
import SyncStore

/// What `syncctl outbox --restore SEQ` queued.
public struct RestoredChange: Sendable, Equatable {
    /// The source of the record.
    public let source: String
    /// The record's ID.
    public let id: String
    /// What was queued: the discarded change's operation, or a create when the server no longer has the record.
    public let operation: OutboxRecord.Operation
    /// The outbox entry that holds it; nil when it cancelled a create never pushed.
    public let seq: Int64?
}

// No policy drops a change silently: a change a ConflictPolicy= discarded is kept, with the server's side, for
// DiscardedRetentionSec= and can be queued again (docs/local-changes.md, "Discarded changes").
extension SyncEngine {
    /// A `ConflictPolicy=` settled a conflict against the local change `entry` (`outcome` says how): it leaves the
    /// outbox and is kept as a discarded change with the server's record and version, in one transaction, and
    /// the discard is logged at warning priority with how to queue it again.
    func discard(_ entry: OutboxRecord, source: SourceConfiguration, remoteBody: [UInt8]?, remoteVersion: String?,
                 reason: String, outcome: String, status: Int?) throws(RefreshFailure) {
        do {
            try store.discard(entry.seq, reason: "\(reason); \(outcome)", serverBody: remoteBody, serverVersion: remoteVersion,
                              at: clock().rfc3339)
        } catch {
            throw RefreshFailure(.transient, "\(error)")
        }
        reportOutcome(.discarded, of: entry, source: source.name, status: status, message: "\(reason); \(outcome)")
        logger.forSource(source.name).warning(
            "conflict on \(entry.recordID) (\(reason)); \(outcome); kept as discarded change \(entry.seq) for "
                + "\(TimeSpan.format(source.discardedRetention)) (DiscardedRetentionSec=): 'syncctl outbox --restore \(entry.seq)' queues it again")
    }

    /// Forgets the discarded changes of `source` kept longer than its `DiscardedRetentionSec=`. A failure is
    /// logged and left to the next refresh: it never fails this one.
    func pruneDiscarded(_ source: SourceConfiguration) {
        let cutoff = Timestamp(secondsSinceEpoch: clock().secondsSinceEpoch - source.discardedRetention.components.seconds)
        do {
            let removed = try store.pruneDiscarded(source: source.name, before: cutoff.rfc3339)
            if removed > 0 {
                logger.forSource(source.name).notice("forgot \(counted(removed, "discarded change")) kept longer than "
                                                     + "DiscardedRetentionSec=\(TimeSpan.format(source.discardedRetention))")
            }
        } catch {
            logger.forSource(source.name).error("Failed to forget old discarded changes, will retry at the next refresh: \(failureReason(error))")
        }
    }

    /// `syncctl outbox --restore SEQ`: queues the discarded change `seq` again, as a change made now against the
    /// server's version of its record in the latest listing (its `VersionField` member rebased onto it), so that
    /// the version it was discarded for does not discard it again. `sources` finds its source's configuration.
    /// Holds the source's lock, like `put`; republishes the cache file, which shows the change pending at once.
    public func restoreDiscarded(_ seq: Int64, sources: (String) -> SourceConfiguration?) throws(ManagerError) -> RestoredChange {
        guard let change = try reading("the discarded changes", { try store.discardedChange(seq) }) else {
            throw .noSuchDiscardedChange(seq: seq)
        }
        guard let source = sources(change.source) else {
            throw .invalidParameter(parameter: "seq", reason: "discarded change \(seq) belongs to source \"\(change.source)\", which is "
                                    + "not configured; add its .source file back (and reload) to restore it")
        }
        guard source.writable else { throw .notWritable(source: source.name) }
        let restored = try shared.withSourceLock(source.name) { () throws(ManagerError) -> RestoredChange in
            try restoreLocked(change, source: source)
        }
        logger.forSource(source.name).notice("restored the discarded \(change.operation.rawValue) of \(change.recordID) (discarded change \(seq)) "
                                             + "on request; queued \(restored.operation.rawValue)"
                                             + (restored.seq.map { " as outbox entry \($0)" } ?? ", which cancelled a create not yet pushed"))
        republish(source.name)
        return restored
    }

    private func restoreLocked(_ change: DiscardedChange, source: SourceConfiguration) throws(ManagerError) -> RestoredChange {
        let onServer = try serverRecord(source: source.name, id: change.recordID)
        let operation: OutboxRecord.Operation
        var body = change.body
        switch change.operation {
        case .delete:
            guard onServer != nil else {
                throw .invalidParameter(parameter: "seq", reason: "the latest listing of \(source.name) no longer has record \(change.recordID): "
                                        + "the removal discarded change \(change.seq) asked for is done; nothing to restore")
            }
            operation = .delete
        case .create, .update:
            // As `put` decides: an update of a record the server has (or was sent), else a create.
            let sent = try reading("the outbox") { try store.outbox(source: source.name) }.contains { $0.recordID.isSameID(as: change.recordID) && $0.state == .sent }
            operation = onServer != nil || sent ? .update : .create
            if let field = source.versionField, let local = change.body, let server = onServer?.body {
                body = VersionRebase.body(local, field: field, server: server) ?? local
            }
        }
        try supersedeParked(change.recordID, of: source)
        let restored: Bool
        do {
            restored = try store.restoreDiscarded(change.seq, operation: operation, body: body, baseVersion: onServer?.version,
                                                  at: clock().rfc3339, idempotencyKey: Identifiers.uuid())
        } catch {
            throw .storageFailure(reason: "Failed to queue discarded change \(change.seq) again, nothing was changed: \(failureReason(error))")
        }
        guard restored else { throw .noSuchDiscardedChange(seq: change.seq) }
        let queued = try reading("the outbox") { try store.outbox(source: source.name) }.last { $0.recordID.isSameID(as: change.recordID) && $0.state == .queued }
        return RestoredChange(source: source.name, id: change.recordID, operation: queued?.operation ?? operation, seq: queued?.seq)
    }
}
