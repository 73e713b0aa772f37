import SyncControl
import SyncCore
import SyncStore

/// Everything that wakes the daemon's loop. Producers (signals, the timer, the refresh worker, the link
/// monitor, the prober, control clients) only yield events; the loop alone changes state.
enum DaemonEvent: Sendable {
    /// The earliest deadline passed.
    case timer
    /// SIGTERM, SIGINT or SIGHUP arrived.
    case signal(Int32)
    /// A refresh ended; `generation` tells which account it belongs to (syncd(8) GUARANTEES 9).
    /// `start` numbers the source's refreshes, so a waiter is answered only by one that began after it asked.
    case refreshed(source: String, result: RefreshResult, state: SourceState?, generation: Int, start: Int)
    /// The link monitor's aggregate state changed, or a significant change happened while routable.
    case links(state: String, online: Bool, significant: Bool)
    /// A reachability probe ended.
    case probed(reachable: Bool)
    /// A control client asks something.
    case request(ControlRequest)
    /// A refresh in progress moved on.
    case refreshProgress(source: String, RefreshProgressCount)
    /// A local change was stored (on the worker); `state` is the source's state afterwards.
    case localChanged(source: String, state: SourceState?)
    /// A cache file changed outside a refresh (logout): tell watchers.
    case cacheChanged(WatchEvent)
    /// The state database was found damaged and replaced by an empty one (on the worker): every
    /// source's state is gone and must be rebuilt from its server.
    case storeReplaced
}

/// A control request and the continuation that answers it.
enum ControlRequest: Sendable {
    case status(CheckedContinuation<DaemonStatusSnapshot, Never>)
    case refresh(source: String?, wait: Bool, progress: AsyncStream<RefreshProgress>.Continuation?,
                 CheckedContinuation<Result<[SourceRefreshReport], ControlFailure>, Never>)
    case reload(CheckedContinuation<Result<Void, ControlFailure>, Never>)
    case logout(discardPending: Bool, CheckedContinuation<Result<Void, ControlFailure>, Never>)
    /// A local change or its settling (Put, Delete, outbox retry/drop, Resolve); answers with the record's ID.
    case change(LocalChangeRequest, CheckedContinuation<Result<String, ManagerError>, Never>)
    /// Subscribes to cache changes; answers with a token for `unwatch`.
    case watch(AsyncStream<WatchEvent>.Continuation, CheckedContinuation<Int, Never>)
    case unwatch(Int)
}

/// Why a control request failed; mapped to a Varlink error by the control server.
public enum ControlFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchSource(String)
    case reloadFailed(String)
    case storageFailure(String)
    case pendingChanges(Int)
    case shuttingDown

    public var description: String {
        switch self {
        case .noSuchSource(let name): return "no source named \"\(name)\""
        case .reloadFailed(let reason): return "reload rejected, keeping the previous configuration: \(reason)"
        case .storageFailure(let reason): return reason
        case .pendingChanges(let count): return "\(count) local changes are not pushed yet"
        case .shuttingDown: return "syncd is shutting down"
        }
    }
}

/// The outcome of one source's refresh, as a control client sees it.
public struct SourceRefreshReport: Sendable, Equatable {
    /// Source name.
    public var source: String
    /// True when the refresh succeeded (updated or confirmed).
    public var succeeded: Bool
    /// `updated`, `unchanged`, `failed` or `cancelled`.
    public var result: String
    /// Records after the refresh.
    public var records: Int
    /// The reason, when it failed.
    public var error: String?
}

/// What a control client wants changed locally.
enum LocalChangeRequest: Sendable {
    case put(source: String, record: JSONObject)
    case delete(source: String, id: String)
    case retry(seq: Int64)
    case drop(seq: Int64)
    case resolve(source: String, id: String, keepLocal: Bool)
}
