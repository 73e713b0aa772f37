// One pass over a source's outbox at a refresh: which queued changes go out, in order, and when the pass stops.
// Decided from values only; the engine sends each change (`PushPlan`) and reports how it ended.

/// The order and the stopping rules of one push.
public struct PushRound: Sendable, Equatable {
    /// How a change's push ended, as far as the round cares.
    public enum Outcome: Sendable, Equatable {
        /// Sent, settled, parked, in conflict or discarded: the round goes on.
        case finished
        /// Sent to a record the item URL did not find, while the listing has it: its record's later changes wait.
        case awaitingListing
        /// This record's request failed in a way that may clear (`HTTPAnswer.recordTrouble` without `Retry-After`).
        case recordTrouble
        /// The credential was refused: nothing more is sent in this round.
        case credentialsRefused
        /// A create whose outcome is unknown: nothing more is sent; the listing is pulled to look for it.
        case createOutcomeUnknown
        /// Any other failure (no answer, the server or its gateway down, `Retry-After`, storage): the round stops
        /// and the refresh fails with it.
        case failed
    }

    /// What the round does after a change's push ended.
    public enum Next: Sendable, Equatable {
        /// Push the next change.
        case goOn
        /// Stop; the listing is still pulled. `failing`: the round's failure is this change's (else its first
        /// one, if any).
        case stopAndPull(failing: Bool)
        /// Stop and fail the refresh with this change's failure (the source backs off).
        case fail
    }

    /// Consecutive per-record failures after which the round stops as if the server were down.
    public static let recordFailuresBeforeStopping = 3

    /// Records whose later changes wait: one parked or in conflict, or whose earlier change in this round failed.
    public private(set) var blocked: Set<RecordID> = []
    private var recordFailuresInARow = 0
    /// A change of the round failed for its record only: the refresh reports the first one.
    public private(set) var hadRecordFailure = false

    public init() {}

    /// Whether a change of `recordID` in `state` goes out now. `answerLost`: a create whose earlier answer was
    /// lost and that the listing has not been searched for since: held back, with its record's later changes.
    public mutating func sends(recordID: RecordID, state: OutboxState, superseded: Bool, answerLost: Bool) -> Bool {
        switch state {
        case .parked where !superseded, .conflict:
            blocked.insert(recordID)
            return false
        case .parked, .sent:
            return false
        case .queued:
            guard !blocked.contains(recordID) else { return false }
            if answerLost {
                blocked.insert(recordID)
                return false
            }
            return true
        }
    }

    /// What follows the push of a change of `recordID` that ended with `outcome`.
    public mutating func after(_ outcome: Outcome, recordID: RecordID) -> Next {
        switch outcome {
        case .finished:
            recordFailuresInARow = 0
            return .goOn
        case .awaitingListing:
            blocked.insert(recordID)
            recordFailuresInARow = 0
            return .goOn
        case .recordTrouble:
            blocked.insert(recordID)
            hadRecordFailure = true
            recordFailuresInARow += 1
            return recordFailuresInARow < Self.recordFailuresBeforeStopping ? .goOn : .fail
        case .credentialsRefused:
            return .stopAndPull(failing: true)
        case .createOutcomeUnknown:
            blocked.insert(recordID)
            return .stopAndPull(failing: !hadRecordFailure)
        case .failed:
            return .fail
        }
    }
}

/// Where a local change stands in the outbox.
public enum OutboxState: String, Sendable, Equatable {
    /// Waiting to be pushed.
    case queued
    /// Pushed; kept as an overlay until a listing shows it, so a stale listing cannot undo it.
    case sent
    /// Refused by the server; waits for `syncctl outbox --retry/--drop`.
    case parked
    /// Made against a version the server no longer has; waits for `syncctl resolve` (ConflictPolicy=manual).
    case conflict
}
