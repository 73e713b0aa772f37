// What pushing one local change does next, decided from values only: the change, the server's copy as the
// check before the push found it, the answer to the push. The engine performs each step (requests, store
// writes, messages); nothing here does I/O or reads a clock. docs/local-changes.md tells the rules to users.

/// The kind of a local change.
public enum ChangeOperation: String, Sendable, Equatable {
    case create, update, delete
}

/// The server's copy of a record, as the `GET` of its item URL before an update or removal found it.
public enum PushCheck: Sendable, Equatable {
    /// The record is there. `version`: its `VersionField=` value, nil when it has none; `etag`: its `ETag`;
    /// `holdsTheChange`: it already has every member the update sends (an earlier push landed though its answer
    /// was lost); `ownWrite`: its version is the one the engine's own latest push of it produced.
    case found(status: Int, version: String?, etag: String?, holdsTheChange: Bool, ownWrite: Bool)
    /// No such record (404, 410).
    case missing
    /// The item URL refuses the check for good (405, another 4xx): the change is parked with the answer.
    case refused(status: Int)
    /// With `VersionField=` set, an answer whose record cannot be read; `reason` says why.
    case unreadable(status: Int, reason: String)
}

/// One step of a push.
public enum PushStep: Sendable, Equatable {
    /// `GET` the record's item URL first (`PushCheck`).
    case check
    /// Send the change. `ifMatch`: the ETag that guards it; `rebase`: first make the change one against the
    /// server's version (its `VersionField` member given the server's value).
    case send(ifMatch: String?, rebase: Bool)
    /// The record is not where the item URL points, yet the latest listing has it: the listing pulled next decides
    /// (removed on the server, or a wrong `ItemURL=`). The change stays queued meanwhile.
    case awaitListing
    /// Nothing to send: the server already has what the change asks for. `reason` completes "update of ID …".
    case settle(reason: String)
    /// The change and the server's record differ: `ConflictPolicy=` decides (`ConflictVerdict`). `status`: the
    /// answer that showed it, when a write was refused (409, 412).
    case conflict(reason: String, status: Int?)
    /// The server's copy has no version to compare: whether the change conflicts cannot be known, so it is parked
    /// whatever the policy. `reason` is nil when the record lacks `VersionField=` (the engine says where it looked).
    case parkUnreadable(status: Int, reason: String?)
    /// The server refused this change for good (the check or the write): parked with its answer.
    case park(status: Int)
    /// A 303 to a write: the server did not take it; parked.
    case parkSeeOther
    /// The write was taken (2xx).
    case done
    /// The credential was refused (401, 403): the push stops; the change stays queued.
    case stopForCredentials(status: Int)
    /// This request failed in a way that may clear (5xx, 408, 429, no answer): the change stays queued. A create
    /// answered so may be on the server all the same (`HTTPAnswer.leavesCreateUnknown`): the outbox keeps the
    /// status, and it is not sent again before a listing is searched for it.
    case retryLater(status: Int?)
    /// A create went out and got no answer (a timeout, a closed connection): it may be on the server, or the server
    /// may still be working on it. Nothing more is sent in this push; the listing is searched for it.
    case createOutcomeUnknown
}

/// The decisions of one change's push.
public struct PushPlan: Sendable, Equatable {
    public var operation: ChangeOperation
    /// The version the change was made against; nil for a create, or a record the engine created whose answer
    /// was still out.
    public var baseVersion: String?
    /// `VersionField=` is set: updates and removals are checked against the server's version first.
    public var comparesVersions: Bool
    public var policy: ConflictPolicy
    /// The policy chose the local version after the server refused it with 409 or 412: sent once more,
    /// unchecked and unguarded; a second refusal parks it.
    public var forced: Bool

    public init(operation: ChangeOperation, baseVersion: String?, comparesVersions: Bool, policy: ConflictPolicy, forced: Bool = false) {
        self.operation = operation
        self.baseVersion = baseVersion
        self.comparesVersions = comparesVersions
        self.policy = policy
        self.forced = forced
    }

    /// The first step: a check before an update or removal when versions are compared (client-wins never looks:
    /// it would push anyway), else the write itself.
    public var first: PushStep {
        if !forced, operation != .create, comparesVersions, policy != .clientWins { return .check }
        return .send(ifMatch: nil, rebase: false)
    }

    /// The step after the check found `check`; `listed`: the latest listing has the record.
    public func afterCheck(_ check: PushCheck, listed: Bool) -> PushStep {
        switch check {
        case .refused(let status):
            return .park(status: status)
        case .missing where listed:
            return .awaitListing
        case .missing where operation == .delete:
            return .settle(reason: "already removed on the server")
        case .missing:
            return .conflict(reason: "the server removed it", status: nil)
        case .unreadable(let status, let reason):
            return .parkUnreadable(status: status, reason: reason)
        case .found(let status, nil, _, _, _) where baseVersion != nil:
            // Made against a version the listing showed; the server's copy has none to compare it with.
            return .parkUnreadable(status: status, reason: nil)
        case .found(_, _?, let etag, _, _) where baseVersion == nil:
            // Made against a record the engine created whose answer was still out (or lost): the version its
            // create got is the base, not a conflict.
            return .send(ifMatch: etag, rebase: operation == .update)
        case .found(_, _, _, true, _):
            return .settle(reason: "is on the server already (an earlier push landed); nothing sent")
        case .found(_, let version, let etag, _, true) where version != baseVersion:
            // The server moved on only by the engine's own push of this record: the change is made against that.
            return .send(ifMatch: etag, rebase: operation == .update)
        case .found(_, let version, _, _, _) where version != baseVersion:
            return .conflict(reason: "the server's version is \(version ?? "none"), the change was made against \(baseVersion ?? "none")",
                             status: nil)
        case .found(_, _, let etag, _, _):
            return .send(ifMatch: etag, rebase: false)
        }
    }

    /// The step after `ConflictPolicy=` chose the local version over `check`'s conflict: sent against the server's
    /// version, unguarded (the record the server removed is sent as it is).
    public func afterPushingLocal(over check: PushCheck) -> PushStep {
        if case .missing = check { return .send(ifMatch: nil, rebase: false) }
        return .send(ifMatch: nil, rebase: true)
    }

    /// The step after the write was answered with `status`; `listed`: the latest listing has the record.
    public func afterAnswer(status: Int, listed: Bool) -> PushStep {
        switch HTTPAnswer(status: status, answering: .push) {
        case .success:
            return .done
        case .seeOther:
            return .parkSeeOther
        case .notFound where listed && operation != .create:
            return .awaitListing
        case .notFound where operation == .delete:
            return .settle(reason: "already removed on the server (HTTP 404)")
        case .conflict where !forced:
            return .conflict(reason: "", status: status)
        case .credentials:
            return .stopForCredentials(status: status)
        case .recordTrouble, .serverTrouble:
            return .retryLater(status: status)
        case .notFound, .conflict, .refused, .notModified:
            return .park(status: status)
        }
    }

    /// The step after the write got no answer; `neverSent`: it cannot have reached the server.
    public func afterNoAnswer(neverSent: Bool) -> PushStep {
        operation == .create && !neverSent ? .createOutcomeUnknown : .retryLater(status: nil)
    }

    /// Whether the server's record `theirs` already holds what the update `mine` sends: every member but
    /// `versionField` has the same value there (numbers by value, strings by bytes); members the server adds
    /// (its own stamps) do not count.
    public static func holds(_ mine: JSONObject, in theirs: JSONObject, versionField: String?) -> Bool {
        mine.members.allSatisfy { member in member.key == versionField || theirs[member.key] == member.value }
    }
}

/// What `ConflictPolicy=` does with a local change that conflicts with the server's record.
public enum ConflictVerdict: Sendable, Equatable {
    /// Push the local version over the server's.
    case pushLocal
    /// Drop the local change (kept for `syncctl outbox --discarded`); `why` says which rule chose the server.
    case discard(why: String)
    /// Keep both until a person resolves it (`syncctl resolve`).
    case keepBoth
}

extension ConflictPolicy {
    /// The verdict for a change made at `changedAt` (RFC 3339) against a server record whose version is
    /// `remoteVersion`; `versionField` names it in the reason. last-write-wins compares the two as times: the
    /// local change wins only when both are times and it is the later.
    public func verdict(changedAt: String, remoteVersion: String?, versionField: String?) -> ConflictVerdict {
        switch self {
        case .serverWins:
            return .discard(why: "ConflictPolicy=server-wins")
        case .clientWins:
            return .pushLocal
        case .manual:
            return .keepBoth
        case .lastWriteWins:
            let local = Timestamp(rfc3339: changedAt)
            let remote = remoteVersion.flatMap { Timestamp(rfc3339: $0) }
            if let local, let remote, local > remote { return .pushLocal }
            return .discard(why: remote == nil ? "the server's \(versionField ?? "version") is not a time" : "the server's version is newer")
        }
    }
}
