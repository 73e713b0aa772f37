import SyncCore
import SyncStore

// The local changes that did not simply go out — parked, discarded, set in conflict — reported to the daemon as
// they happen, so `Watch` tells apps (docs/control-api.md, Watch). The store records them; this tells.

extension SyncEngine {
    /// Parks `entry` with `message` (`StateStore.park`) and reports it (`Watch` sends `parked`). `status` is the
    /// HTTP status that refused it, 0 when none did (an outcome that could not be settled).
    func parkEntry(_ entry: OutboxRecord, of source: String, status: Int, message: String) throws(StoreError) {
        try store.park(entry.seq, status: status, error: message)
        reportOutcome(.parked, of: entry, source: source, status: status == 0 ? nil : status, message: message)
    }

    /// Reports what became of `entry` to the daemon (nothing for `syncd --once`).
    func reportOutcome(_ kind: OutboxOutcome.Kind, of entry: OutboxRecord, source: String, status: Int?, message: String) {
        shared.reportOutcome(OutboxOutcome(
            kind: kind, recordID: entry.recordID, outboxSeq: entry.seq, httpStatus: status, message: message,
            publicMessage: OutboxOutcome.publicWords(kind, operation: entry.operation.rawValue, status: status)), of: source)
    }
}
