import SyncCore

/// What became of one local change that did not simply go out: the server refused it (parked), a
/// `ConflictPolicy=` discarded it, or it waits in conflict for `syncctl resolve`. The engines report each one as
/// it happens (`EngineShared.reportOutcome`); the daemon sends it to every `Watch` (docs/control-api.md, Watch), so
/// an app learns that its change did not land without polling the outbox.
public struct OutboxOutcome: Sendable, Equatable {
    /// The three outcomes, named as the `Watch` events that carry them.
    public enum Kind: String, Sendable {
        /// The server refused the change, or its outcome could not be settled: it waits for a person.
        case parked
        /// `ConflictPolicy=` settled a conflict against it; it is kept for `syncctl outbox --restore`.
        case discarded
        /// `ConflictPolicy=manual`: both versions are kept until `syncctl resolve`.
        case conflict
    }

    public var kind: Kind
    /// The record the change is about.
    public var recordID: String
    /// The change's outbox sequence number (`syncctl outbox`, `--restore`).
    public var outboxSeq: Int64
    /// The HTTP status that refused it, when one did.
    public var httpStatus: Int?
    /// Why, as root and the control group see it (may quote the server's answer).
    public var message: String
    /// Why, for everyone else: no server text, no URL (docs/control-api.md, "Secrets").
    public var publicMessage: String

    /// The words for callers outside the control group: what happened and the status, nothing the server wrote.
    public static func publicWords(_ kind: Kind, operation: String, status: Int?) -> String {
        let code = status.map { " (HTTP \($0))" } ?? ""
        switch kind {
        case .parked: return "the server did not take the \(operation)\(code); it waits in the outbox"
        case .discarded: return "the \(operation) conflicted with the server's version\(code) and was discarded by ConflictPolicy=; it can be restored"
        case .conflict: return "the \(operation) conflicts with the server's version\(code); both are kept until resolved"
        }
    }
}
