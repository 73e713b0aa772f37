import SyncControl
import SyncCore
import SyncStore
import SyncEngine

/// Everything that wakes the daemon's loop. Producers (signals, the timer, the refresh lanes, the link
/// monitor, the prober, control clients) only yield events; the loop alone changes state.
enum DaemonEvent: Sendable {
    /// The earliest deadline passed.
    case timer
    /// SIGTERM, SIGINT or SIGHUP arrived.
    case signal(Int32)
    /// A refresh ended; the ticket tells which refresh (and account generation, syncd(8) GUARANTEES 9).
    case refreshed(RefreshTicket, RefreshResult, StampedState?)
    /// The link monitor's aggregate state changed, or a significant change happened while routable.
    case links(state: String, online: Bool, significant: Bool)
    /// A reachability probe ended.
    case probed(reachable: Bool)
    /// A control client asks something.
    case request(ControlRequest)
    /// The client of a waiting request went away.
    case cancelled(RequestID)
    /// Erasing the account's files for a logout ended; `states` are read from the new store afterwards (their
    /// stamps are newer than any read of the old store, so a late report of the old account cannot replace them).
    case accountErased(RequestID, Result<Void, ManagerError>, states: [String: StampedState])
    /// A refresh in progress moved on.
    case refreshProgress(source: String, RefreshProgressCount)
    /// A local change was stored (on the local lane); `state` is the source's state afterwards.
    case localChanged(source: String, state: StampedState?)
    /// A cache file rewrite scheduled for a burst of local changes ran (on the local lane); `state` is the
    /// source's state afterwards.
    case cacheFileWritten(source: String, state: StampedState?)
    /// A refresh's push changed the outbox of `source` (its listing may still be running).
    case outboxChanged(source: String, state: StampedState)
    /// A refresh of `source` published a listing and goes on with another request in the same refresh (the
    /// listing again after a resumed one, a catch-up delta); `state` is the source's state after the publish.
    case listingPublished(source: String, state: StampedState)
    /// A local change of `source` was parked, discarded or set in conflict (for `Watch`).
    case outboxOutcome(source: String, OutboxOutcome)
    /// The state database was found damaged and replaced by an empty one (on a lane): every
    /// source's state is gone and must be rebuilt from its server.
    case storeReplaced
    /// A control read found the cache file of `source` not matching the store's index: the local lane's
    /// engine checks it and, if it was changed outside syncd, sets it aside (`SyncEngine.recoverCacheFile`).
    case cacheFileDamaged(source: String)
    /// An engine set the cache file of `source` aside and forgot its listing while running; `state` is the
    /// source's state afterwards. The listing is fetched again at once.
    case cacheFileLost(source: String, state: StampedState?)
}

/// A control request and the continuation that answers it. Each continuation is resumed exactly once: by
/// the loop, by the core's `.reply`, or (once the loop has stopped reading) with `ManagerError.stopping`.
enum ControlRequest: Sendable {
    /// `GetStatus` for a caller of this audience: the reply's parameters, serialised; nil once the daemon is stopping.
    case status(Redaction.Audience, CheckedContinuation<[UInt8]?, Never>)
    /// Whether a source of this name is configured; nil once the daemon is stopping.
    case sourceExists(String, CheckedContinuation<Bool?, Never>)
    /// `Refresh`: answered by the core; `progress` receives updates while it waits. `full`: sources with `Delta=`
    /// fetch their whole listing.
    case refresh(RequestID, source: String?, wait: Bool, full: Bool, progress: AsyncStream<RefreshProgress>.Continuation?,
                 CheckedContinuation<DaemonReply, Never>)
    case reload(CheckedContinuation<Result<Void, ManagerError>, Never>)
    case logout(RequestID, discardPending: Bool, CheckedContinuation<DaemonReply, Never>)
    /// A local change or its settling (Put, Delete, outbox retry/drop, Resolve); answers with the record's ID.
    case change(LocalChangeRequest, CheckedContinuation<Result<ChangeAnswer, ManagerError>, Never>)
    /// Subscribes to cache changes; answers with a token for `unwatch`.
    case watch(AsyncStream<WatchEvent>.Continuation, CheckedContinuation<Int, Never>)
    case unwatch(Int)

    /// Answers the request with "syncd is stopping" (the loop no longer runs).
    func refuse() {
        switch self {
        case .status(_, let continuation): continuation.resume(returning: nil)
        case .sourceExists(_, let continuation): continuation.resume(returning: nil)
        case .refresh(_, _, _, _, let progress, let continuation):
            progress?.finish()
            continuation.resume(returning: .failed(.stopping))
        case .logout(_, _, let continuation): continuation.resume(returning: .failed(.stopping))
        case .reload(let continuation): continuation.resume(returning: .failure(.stopping))
        case .change(_, let continuation): continuation.resume(returning: .failure(.stopping))
        case .watch(let sink, let continuation):
            sink.finish()
            continuation.resume(returning: 0)
        case .unwatch: break
        }
    }
}

/// What a control client wants changed locally.
enum LocalChangeRequest: Sendable {
    case put(source: String, record: JSONObject)
    case delete(source: String, id: String)
    case retry(seq: Int64)
    case drop(seq: Int64)
    case resolve(source: String, id: String, keepLocal: Bool)
    /// `syncctl outbox --restore SEQ`: a discarded change queued again.
    case restore(seq: Int64)
}

/// What a stored local change answers: the record's ID (or the outbox entry's number), and how many records
/// of the source's local view the cache file does not hold yet when writing it failed (a full disk): the change
/// is stored durably either way; nil when the file is current (docs/syncctl.1.md, *put*).
struct ChangeAnswer: Sendable {
    let text: String
    let unwritten: Int?
    /// Further members of the reply (`RestoreDiscarded`: what was queued).
    var reply: JSONObject = [:]

    /// The reply's `unwritten` member, when the file could not be written (Put, Delete, Resolve).
    var unwrittenParameters: JSONObject { unwritten.map { ["unwritten": .int($0)] } ?? [:] }
}
