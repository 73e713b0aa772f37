import SyncCore
import SyncStore

// A source with undelivered changes always has a push scheduled (docs/local-changes.md, "Retries"): a refresh
// that pulled well yet left a change queued that nothing holds for a person (a parked change or a conflict
// of the same record) reports a failure, so the scheduler retries it with backoff instead of resting until
// the periodic refresh. Without this rule a create whose answer was lost, followed by a 304, stayed queued
// with the source shown healthy and "1 pending" until some other trigger came.

extension OutboxRecord {
    /// The changes in `entries` (one source's outbox, oldest first) that wait to be pushed although no person
    /// has to act first: queued, and not behind a parked (not superseded) or conflicting change of their record.
    /// `through` leaves out the changes queued after that sequence number (made while the refresh ran: their
    /// own trigger pushes them).
    static func undelivered(_ entries: [OutboxRecord], through last: Int64) -> [OutboxRecord] {
        var held: Set<RecordID> = []
        var waiting: [OutboxRecord] = []
        for entry in entries {
            switch entry.state {
            case .parked where !entry.isSuperseded, .conflict:
                held.insert(RecordID(entry.recordID))
            case .queued where entry.seq <= last && !held.contains(RecordID(entry.recordID)):
                waiting.append(entry)
            case .queued, .parked, .sent:
                break
            }
        }
        return waiting
    }
}

extension SyncEngine {
    /// The newest outbox entry of `source` before its push; nil when the source is read-only or has none.
    func lastQueuedChange(of source: SourceConfiguration) -> Int64? {
        guard source.writable else { return nil }
        return (try? store.outbox(source: source.name))?.last?.seq
    }

    /// Whether `source` has pushed changes no listing has shown yet.
    func hasUnconfirmedPush(_ source: SourceConfiguration) -> Bool {
        ((try? store.outbox(source: source.name)) ?? []).contains { $0.state == .sent }
    }

    /// `pulled` unless changes that were queued when the refresh began (`through`) are still undelivered: then a
    /// transient failure naming them, so the scheduler retries the push with backoff (the listing stays in place).
    func requireDelivery(_ source: SourceConfiguration, _ pulled: RefreshResult, through last: Int64?) -> RefreshFailure? {
        guard let last else { return nil }
        if case .failed = pulled { return nil }
        let entries: [OutboxRecord]
        do {
            entries = try store.outbox(source: source.name)
        } catch {
            return RefreshFailure(.transient, "Failed to read the outbox after the push: \(failureReason(error)); retrying")
        }
        let waiting = OutboxRecord.undelivered(entries, through: last)
        guard let first = waiting.first else { return nil }
        var reason = first.shownError.map { ": \($0)" } ?? ""
        if first.answerWasLost && !shared.memory.withLock({ $0.checkedCreates.contains(first.seq) }) {
            reason = ": the outcome of its POST is unknown\(first.shownError.map { " (\($0))" } ?? ""); the server may still be working on it, so it is "
                + "sent again only if a listing read after \(lostCreateWaitEnds(first, source: source).rfc3339) lacks it"
        }
        let others = waiting.count > 1 ? " and \(counted(waiting.count - 1, "other change"))" : ""
        var failure = RefreshFailure(.transient, "the \(first.operation.rawValue) of \(first.recordID)\(others) could not be pushed yet"
                                     + "\(reason) (the listing was pulled; the change stays queued and is retried)")
        if case .updated = pulled { failure.listingReplaced = true }
        // Only creates whose answer was lost and that wait for LostCreateWaitSec= to pass: the next refresh
        // comes when the first of them may be sent (or sooner, at IntervalSec=: DaemonLoop.classify), not sooner
        // with backoff (each listing meanwhile would only count an attempt against MaxAttempts=).
        let checked = shared.memory.withLock { $0.checkedCreates }
        let waits = waiting.map { entry -> Int64? in
            guard entry.answerWasLost, !checked.contains(entry.seq) else { return nil }
            return LostCreateWait.remainingMilliseconds(lostCreateWait(entry, source: source), wait: source.lostCreateWait)
        }
        if let soonest = waits.compactMap({ $0 }).min(), !waits.contains(nil) {
            failure.lostCreateWait = .milliseconds(max(1, soonest))
        }
        return failure
    }
}
