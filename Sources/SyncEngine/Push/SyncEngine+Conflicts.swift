import SyncCore
import SyncRemote
import SyncStore

extension SyncEngine {
    /// `syncctl resolve SOURCE ID --keep local|remote`.
    /// Holds the source's lock, like `put`.
    public func resolve(source: SourceConfiguration, id: String, keepLocal: Bool) throws(ManagerError) {
        try shared.withSourceLock(source.name) { () throws(ManagerError) in try resolveLocked(source: source, id: id, keepLocal: keepLocal) }
    }

    private func resolveLocked(source: SourceConfiguration, id: String, keepLocal: Bool) throws(ManagerError) {
        let entries = try reading("the outbox") { try store.outbox(source: source.name) }
        guard let entry = entries.first(where: { $0.recordID.isSameID(as: id) && $0.state == .conflict }) else {
            throw .invalidParameter(parameter: "id", reason: "record \"\(id)\" of \"\(source.name)\" is not in conflict")
        }
        let remote = try reading("the conflicts") { try store.conflicts(source: source.name) }.first { $0.recordID.isSameID(as: id) }
        do {
            if keepLocal, entry.operation == .update, remote?.remoteBody == nil, try serverRecord(source: source.name, id: id) == nil {
                // The server removed the record: keeping the local version creates it again (as `outbox --restore`
                // does); pushed as an update it would meet the same removal, and the same conflict, again.
                try store.requeue(entry.seq, baseVersion: .some(nil), as: .create)
            } else if keepLocal {
                // Made again against the server's current version: it goes out as is at the next push.
                try store.requeue(entry.seq, baseVersion: .some(remote?.remoteVersion),
                                  body: rebasedBody(entry, source: source, remoteBody: remote?.remoteBody))
            } else {
                try store.removeOutboxEntry(entry.seq)
            }
            try store.removeConflict(source: source.name, recordID: id)
        } catch {
            throw .storageFailure(reason: "\(error)")
        }
        logger.forSource(source.name).notice("conflict on \(id) resolved, keeping the \(keepLocal ? "local" : "server's") version")
        republish(source.name)
    }

    /// Applies `ConflictPolicy`; returns true when the change was settled (discarded, kept for `syncctl outbox
    /// --discarded`, or set aside), false when it should be pushed anyway.
    func conflict(_ entry: OutboxRecord, source: SourceConfiguration, remoteBody: [UInt8]?, remoteVersion: String?,
                  reason: String, status: Int? = nil) throws(RefreshFailure) -> Bool {
        let now = clock()
        switch source.conflictPolicy.verdict(changedAt: entry.createdAt, remoteVersion: remoteVersion, versionField: source.versionField) {
        case .pushLocal:
            let how = source.conflictPolicy == .clientWins ? "pushing the local version" : "the local change is newer, pushing it"
            logger.forSource(source.name).notice("conflict on \(entry.recordID) (\(reason)); \(how) (ConflictPolicy=\(source.conflictPolicy.rawValue))")
            return false
        case .discard(let why):
            let outcome = source.conflictPolicy == .serverWins ? "dropped the local \(entry.operation.rawValue) (\(why))"
                : "\(why), dropped the local change (ConflictPolicy=\(source.conflictPolicy.rawValue))"
            try discard(entry, source: source, remoteBody: remoteBody, remoteVersion: remoteVersion, reason: reason, outcome: outcome, status: status)
            return true
        case .keepBoth:
            do {
                try store.recordConflict(entry.seq, remoteBody: remoteBody, remoteVersion: remoteVersion, at: now.rfc3339,
                                         status: status, reason: reason)
            } catch {
                throw RefreshFailure(.transient, "\(error)")
            }
            reportOutcome(.conflict, of: entry, source: source.name, status: status, message: reason)
            logger.forSource(source.name).warning("conflict on \(entry.recordID) (\(reason)); keeping both until 'syncctl resolve \(source.name) \(entry.recordID) --keep local|remote'")
            return true
        }
    }

    /// The local version of `entry` wins over the server's record `remoteBody` (version `remoteVersion`): from
    /// now on it is a change against that version, its `VersionField` member given the server's value
    /// (`VersionRebase`), so a server that checks the version in the body takes it. Returns the entry as stored.
    func rebase(_ entry: OutboxRecord, source: SourceConfiguration, remoteBody: [UInt8]?, remoteVersion: String?) throws(RefreshFailure) -> OutboxRecord {
        var rebased = entry
        rebased.baseVersion = remoteVersion
        if let body = rebasedBody(entry, source: source, remoteBody: remoteBody) { rebased.body = body }
        do { try store.rebase(entry.seq, baseVersion: remoteVersion, body: rebased.body) } catch { throw RefreshFailure(.transient, "\(error)") }
        return rebased
    }

    /// `entry`'s text with its `VersionField` member rebased onto the server's record; nil when there is nothing to change.
    func rebasedBody(_ entry: OutboxRecord, source: SourceConfiguration, remoteBody: [UInt8]?) -> [UInt8]? {
        guard let field = source.versionField, let local = entry.body, let remoteBody else { return nil }
        return VersionRebase.body(local, field: field, server: remoteBody)
    }
}
