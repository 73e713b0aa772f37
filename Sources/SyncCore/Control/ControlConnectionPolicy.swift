// Who may hold how many control connections, and for how long (docs/syncd.8.md, "Control
// connections"). The control socket is 0666 by design, so any local user can connect; these
// rules keep one user from using up the daemon's connections and locking root out. Pure: the
// control server counts and measures, this file decides.

/// Limits and timeouts for connections to the control socket.
public struct ControlConnectionPolicy: Sendable, Equatable {
    /// Simultaneous connections in all.
    public var maxConnections: Int
    /// Connections only privileged peers (root, the daemon's user, `ControlGroup` members) may use:
    /// unprivileged peers together hold at most `maxConnections - privilegedReserve`.
    public var privilegedReserve: Int
    /// Connections one unprivileged user may hold.
    public var maxPerUnprivilegedUser: Int
    /// How long a connection may go without a complete call: after connecting, after its last
    /// call was answered while part of the next one is buffered.
    public var callTimeout: Duration
    /// How long a connection may stay idle between calls, or leave its replies unread.
    public var idleTimeout: Duration

    /// Creates a policy: 256 connections, 64 of them for privileged peers, 16 per unprivileged
    /// user, 10 s to send a call, 60 s idle.
    public init(maxConnections: Int = 256, privilegedReserve: Int = 64, maxPerUnprivilegedUser: Int = 16,
                callTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60)) {
        self.maxConnections = maxConnections
        self.privilegedReserve = privilegedReserve
        self.maxPerUnprivilegedUser = maxPerUnprivilegedUser
        self.callTimeout = callTimeout
        self.idleTimeout = idleTimeout
    }

    /// Why a connection was refused.
    public enum Refusal: Sendable, Equatable {
        /// Every connection is in use.
        case full(limit: Int)
        /// Unprivileged peers together hold their whole share (the rest is reserved).
        case unprivilegedShareUsed(limit: Int)
        /// This unprivileged user holds as many connections as one may.
        case perUserLimit(limit: Int)

        /// One line for the log and for the client.
        public var reason: String {
            switch self {
            case .full(let limit):
                return "all \(limit) control connections are in use"
            case .unprivilegedShareUsed(let limit):
                return "unprivileged users hold all \(limit) control connections open to them (the rest are reserved for root, "
                    + "the daemon's user and the control group)"
            case .perUserLimit(let limit):
                return "this user already holds \(limit) control connections, the most one unprivileged user may"
            }
        }
    }

    /// Why a connection was closed by a timeout.
    public enum Timeout: Sendable, Equatable {
        /// No complete call within `callTimeout`.
        case noCall(Duration)
        /// Idle between calls for `idleTimeout`.
        case idle(Duration)
        /// Replies queued but not read for `idleTimeout`.
        case unreadReplies(Duration)

        /// One line for the log.
        public var reason: String {
            switch self {
            case .noCall(let limit): return "sent no complete call within \(ControlConnectionPolicy.seconds(limit))"
            case .idle(let limit): return "idle for \(ControlConnectionPolicy.seconds(limit))"
            case .unreadReplies(let limit): return "did not read its replies for \(ControlConnectionPolicy.seconds(limit))"
            }
        }
    }

    /// What a connection is doing, as the deadline depends on it.
    public struct Activity: Sendable, Equatable {
        /// When the connection last made progress: it connected, a call arrived, a call was
        /// answered, or queued output was written.
        public var lastProgress: MonotonicInstant
        /// At least one call arrived on it.
        public var hasCalled: Bool
        /// A call is being handled (e.g. `Watch`, `Refresh` with `--wait`).
        public var callInFlight: Bool
        /// Output is queued that the client has not read.
        public var outputPending: Bool
        /// Part of a call is buffered.
        public var inputPending: Bool

        /// Creates an activity record.
        public init(lastProgress: MonotonicInstant, hasCalled: Bool, callInFlight: Bool, outputPending: Bool, inputPending: Bool) {
            self.lastProgress = lastProgress
            self.hasCalled = hasCalled
            self.callInFlight = callInFlight
            self.outputPending = outputPending
            self.inputPending = inputPending
        }
    }

    /// When a connection doing `activity` is closed, and why; nil while a call is in flight and
    /// its replies are read (a `Watch` stream may wait for events for ever).
    public func deadline(of activity: Activity) -> (at: MonotonicInstant, timeout: Timeout)? {
        if activity.outputPending {
            return (activity.lastProgress.advanced(by: idleTimeout), .unreadReplies(idleTimeout))
        }
        if activity.callInFlight { return nil }
        if !activity.hasCalled || activity.inputPending {
            return (activity.lastProgress.advanced(by: callTimeout), .noCall(callTimeout))
        }
        return (activity.lastProgress.advanced(by: idleTimeout), .idle(idleTimeout))
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }
}

/// The connections the control server holds, counted per peer, and which refusals were logged.
public struct ControlConnectionTally: Sendable, Equatable {
    /// The rules.
    public let policy: ControlConnectionPolicy
    /// Connections held, in all.
    public private(set) var total = 0
    /// Connections held by unprivileged peers.
    public private(set) var unprivileged = 0
    /// Connections held by each unprivileged user.
    public private(set) var perUser: [UInt32: Int] = [:]
    /// Users whose refusal was logged and who have not been admitted since.
    private var loggedRefusals: Set<UInt32> = []
    /// Most users remembered in `loggedRefusals` (each is one log line; past this, refusals go unlogged).
    static let maxLoggedUsers = 4096
    /// Users one of whose connections was dropped (logged) and none has ended normally since.
    private var loggedDrops: Set<UInt32> = []

    /// Creates an empty tally.
    public init(policy: ControlConnectionPolicy) {
        self.policy = policy
    }

    /// What `admit` decided.
    public enum Decision: Sendable, Equatable {
        /// The connection is counted; keep it.
        case admitted
        /// Close it; `log` is true for the first refusal of this user since it was last admitted.
        case refused(ControlConnectionPolicy.Refusal, log: Bool)
    }

    /// Counts a new connection of user `uid`, or refuses it.
    public mutating func admit(uid: UInt32, privileged: Bool) -> Decision {
        if let refusal = refusal(uid: uid, privileged: privileged) {
            var log = false
            if !loggedRefusals.contains(uid), loggedRefusals.count < ControlConnectionTally.maxLoggedUsers {
                loggedRefusals.insert(uid)
                log = true
            }
            return .refused(refusal, log: log)
        }
        loggedRefusals.remove(uid)
        total += 1
        if !privileged {
            unprivileged += 1
            perUser[uid, default: 0] += 1
        }
        return .admitted
    }

    /// A connection of user `uid` that `admit` counted ends: `dropped` when syncd dropped it (a client that does
    /// not read its replies, or sent a message too large). True when that is worth a log line: the first drop of
    /// this user since one of its connections last ended normally, so that a user opening connections only to
    /// have them dropped cannot fill the journal (as for refusals; at most `maxLoggedUsers` remembered).
    public mutating func ended(uid: UInt32, dropped: Bool) -> Bool {
        guard dropped else {
            loggedDrops.remove(uid)
            return false
        }
        guard !loggedDrops.contains(uid), loggedDrops.count < ControlConnectionTally.maxLoggedUsers else { return false }
        loggedDrops.insert(uid)
        return true
    }

    /// Forgets a connection `admit` counted.
    public mutating func release(uid: UInt32, privileged: Bool) {
        total = max(0, total - 1)
        guard !privileged else { return }
        unprivileged = max(0, unprivileged - 1)
        let remaining = (perUser[uid] ?? 0) - 1
        perUser[uid] = remaining > 0 ? remaining : nil
    }

    private func refusal(uid: UInt32, privileged: Bool) -> ControlConnectionPolicy.Refusal? {
        if total >= policy.maxConnections { return .full(limit: policy.maxConnections) }
        if privileged { return nil }
        let share = max(0, policy.maxConnections - policy.privilegedReserve)
        if unprivileged >= share { return .unprivilegedShareUsed(limit: share) }
        if perUser[uid, default: 0] >= policy.maxPerUnprivilegedUser { return .perUserLimit(limit: policy.maxPerUnprivilegedUser) }
        return nil
    }
}
