/// Why a control request failed: the one error type of the control path, from the daemon's core and the
/// engine's local-change actions (put, delete, resolve, outbox retry/drop) to the
/// Varlink reply (SyncControl maps each case to its `io.syncd.Manager` error, docs/control-api.md).
public enum ManagerError: Error, Sendable, Equatable {
    /// The caller may not call this method; `needs` says who may, in words for a person (e.g. `root, the
    /// daemon's own user, or a member of group "syncd" (ControlGroup=)`), empty when not known (an older daemon).
    case permissionDenied(needs: String)
    /// No source of this name is configured.
    case noSuchSource(source: String)
    /// The source has no record with this ID.
    case noSuchRecord(source: String, id: String)
    /// The source is not `Writable=yes`.
    case notWritable(source: String)
    /// No outbox entry has this sequence number.
    case noSuchOutboxEntry(seq: Int64)
    /// No discarded change has this sequence number (never discarded, restored, or pruned after `DiscardedRetentionSec=`).
    case noSuchDiscardedChange(seq: Int64)
    /// A parameter is well-typed but its value is not acceptable.
    case invalidParameter(parameter: String, reason: String)
    /// A refresh (waited for) failed.
    case refreshFailed(source: String, reason: String)
    /// The new configuration was rejected; the old one stays.
    case reloadFailed(reason: String)
    /// Logging out would discard this many queued local changes.
    case pendingChanges(count: Int)
    /// The daemon could not read or write its state.
    case storageFailure(reason: String)
    /// The control server refused the connection before any call: the caller's share of control
    /// connections is in use (docs/syncd.8.md, "Control connections").
    case tooManyConnections(reason: String)
    /// The daemon is stopping (SIGTERM): a request, a waited-for refresh or a watch still open then ends with this.
    case stopping
    /// A waited-for refresh was cancelled before it ended (by a logout); `reason` says why, as one line.
    case cancelled(reason: String)
    /// `Changes` was asked from a change its log no longer reaches; `oldest` is the oldest `since` it answers.
    case changesExpired(source: String, oldest: Int64)
}
