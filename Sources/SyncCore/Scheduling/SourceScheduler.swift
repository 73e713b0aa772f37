// One source's refresh scheduling as a pure state machine (syncd(8) GUARANTEES
// 5, 6 and 7). It reads no clock and does no I/O: the daemon feeds it events
// stamped with the monotonic time, performs the actions it returns, and sleeps
// until `nextDeadline()`. All transitions are in `step(_:now:jitter:)`, one
// `switch (state, input)` in the style of swift-nio's state machines.

/// The refresh scheduler of one source.
///
/// How the daemon drives it:
/// 1. Create it (with the retry state restored from disk, if any), feed
///    `.linkState(online: false)` if the link monitor says so, then
///    `.trigger(.startup)`.
/// 2. Feed every trigger, every link change and the end of every refresh it
///    started (`.refreshFinished`), each with the current monotonic instant.
/// 3. Perform the returned actions, then sleep until `nextDeadline()` (or the
///    next event) and feed `.tick` when it is reached.
public struct SourceScheduler: Sendable {
    /// Where the source is in its refresh life cycle.
    public enum State: Hashable, Sendable {
        /// Healthy and quiet: the last refresh succeeded (or none ran yet); the
        /// next periodic refresh is due at `periodicAt` (nil before the first).
        case idle(periodicAt: MonotonicInstant?)
        /// A refresh was asked for and waits for its burst of triggers to
        /// settle (debounce), or for a server's `Retry-After` to pass.
        case pending(PendingRefresh)
        /// A refresh is running; triggers that arrive meanwhile are merged
        /// into at most one `followUp`, replayed when it ends.
        case syncing(followUp: TriggerBurst?)
        /// The last attempt failed transiently; attempt `attempt + 1` starts at `retryAt`.
        case backoff(retryAt: MonotonicInstant)
        /// The link is down: periodic refreshes and retries wait for it to come
        /// back (which counts as a network trigger). `resting` is the state
        /// shown once it is back, until the refresh starts.
        case offline(resting: SourceStateName)
        /// The cycle ended in a permanent failure or used up `maxAttempts`; no
        /// retry until the next trigger, of which the periodic timer at
        /// `periodicAt` is one (so a source never rests forever).
        case error(periodicAt: MonotonicInstant?)
    }

    /// A debounced refresh waiting to start.
    public struct PendingRefresh: Hashable, Sendable {
        /// When it starts, unless more triggers arrive.
        public var startAt: MonotonicInstant
        /// The latest it may be pushed back to by further triggers:
        /// `maxDebounceWait` after the burst's first trigger, or what was
        /// already scheduled, whichever is earlier. (A `Retry-After` may still
        /// push `startAt` beyond it.)
        public var latestStart: MonotonicInstant
        /// The state shown meanwhile (the state the burst interrupted).
        public var shownAs: SourceStateName
    }

    /// Triggers merged into one: the first and last instants, and the
    /// strongest kind (manual beats network beats … beats periodic).
    public struct TriggerBurst: Hashable, Sendable {
        /// The strongest kind among the merged triggers.
        public var kind: TriggerKind
        /// When the first of them arrived.
        public var first: MonotonicInstant
        /// When the last of them arrived.
        public var last: MonotonicInstant

        mutating func merge(_ other: TriggerBurst) {
            if other.kind.precedence > kind.precedence { kind = other.kind }
            first = min(first, other.first)
            last = max(last, other.last)
        }
    }

    /// The internal alphabet of the state machine: the public events (time
    /// stamps applied) plus the scheduler's own deadlines.
    enum Input {
        case trigger(TriggerBurst)
        case finished(RefreshOutcome)
        case link(online: Bool)
        case deadline
    }

    /// The source's name, carried in `.startRefresh` actions.
    public let name: String
    /// Timing rules; may be replaced on reload (takes effect from the next decision).
    public var settings: SchedulerSettings
    /// The current state.
    public private(set) var state: State
    /// The number of the running or most recent attempt of this cycle; 0 when healthy.
    public private(set) var attempt: Int
    /// Until when a server's `Retry-After` forbids automatic requests.
    public internal(set) var retryAfterUntil: MonotonicInstant?
    /// The link monitor's last verdict.
    public private(set) var isOnline: Bool
    /// The `latestStart` of a debounced refresh that a link loss interrupted: the refresh asked for
    /// when the link returns starts no later than this (at once if it has passed), so a link that
    /// flaps faster than the debounce cannot postpone refreshes for ever (issue 3: cap the wait).
    /// Cleared when a refresh starts.
    public private(set) var interruptedLatestStart: MonotonicInstant?
    /// The latest instant seen; time fed to the scheduler never runs backwards.
    public private(set) var now: MonotonicInstant

    /// A scheduler for a source that has not been refreshed yet: idle, online,
    /// waiting for its `.startup` trigger.
    public init(name: String, settings: SchedulerSettings = SchedulerSettings(), at now: MonotonicInstant = .zero) {
        self.name = name
        self.settings = settings
        self.state = .idle(periodicAt: nil)
        self.attempt = 0
        self.retryAfterUntil = nil
        self.isOnline = true
        self.now = now
    }

    // MARK: Driving

    /// Feeds one event that happened at `now`; returns what the daemon must do.
    ///
    /// Deadlines due at `now` fire first, as if `.tick` had been fed just before.
    public mutating func handle<J: JitterSource>(
        _ event: SchedulerEvent, at now: MonotonicInstant, jitter: inout J
    ) -> [SchedulerAction] {
        self.now = max(self.now, now)
        var actions = fireDeadlines(jitter: &jitter)
        switch event {
        case .trigger(let kind):
            actions += step(.trigger(TriggerBurst(kind: kind, first: self.now, last: self.now)), jitter: &jitter)
        case .refreshFinished(let outcome):
            actions += step(.finished(outcome), jitter: &jitter)
        case .linkState(let online):
            actions += step(.link(online: online), jitter: &jitter)
        case .tick:
            break
        }
        return actions
    }

    /// When the scheduler next needs `.tick` (nil: only an event can change anything).
    public func nextDeadline() -> MonotonicInstant? {
        switch state {
        case .idle(let periodicAt), .error(let periodicAt): periodicAt
        case .pending(let pending): pending.startAt
        case .backoff(let retryAt): retryAt
        case .syncing, .offline: nil
        }
    }

    /// The status `GetStatus` shows for this source.
    public var status: SourceScheduleStatus {
        let retryAfter = retryAfterUntil.flatMap { $0 > now ? $0 : nil }
        switch state {
        case .idle(let periodicAt):
            return SourceScheduleStatus(state: .idle, attempt: attempt, nextAttempt: nil,
                                nextRefresh: periodicAt, retryAfterUntil: retryAfter)
        case .pending(let pending):
            return SourceScheduleStatus(state: pending.shownAs, attempt: attempt, nextAttempt: pending.startAt,
                                nextRefresh: pending.startAt, retryAfterUntil: retryAfter)
        case .syncing:
            return SourceScheduleStatus(state: .syncing, attempt: attempt, nextAttempt: nil,
                                nextRefresh: nil, retryAfterUntil: retryAfter)
        case .backoff(let retryAt):
            return SourceScheduleStatus(state: .backoff, attempt: attempt, nextAttempt: retryAt,
                                nextRefresh: retryAt, retryAfterUntil: retryAfter)
        case .offline:
            return SourceScheduleStatus(state: .offline, attempt: attempt, nextAttempt: nil,
                                nextRefresh: nil, retryAfterUntil: retryAfter)
        case .error(let periodicAt):
            return SourceScheduleStatus(state: .error, attempt: attempt, nextAttempt: nil,
                                nextRefresh: periodicAt, retryAfterUntil: retryAfter)
        }
    }

    // MARK: The transition function

    /// The one transition function: every change of `state` happens here.
    mutating func step<J: JitterSource>(_ input: Input, jitter: inout J) -> [SchedulerAction] {
        switch (state, input) {
        // A running refresh absorbs triggers into one follow-up (rule 6).
        case (.syncing(let followUp), .trigger(let burst)):
            var merged = followUp ?? burst
            merged.merge(burst)
            state = .syncing(followUp: merged)
            return []

        case (.syncing(let followUp), .finished(let outcome)):
            settle(outcome, jitter: &jitter)
            guard let followUp else { return [] }
            return step(.trigger(followUp), jitter: &jitter)

        case (.syncing, .link(let online)):
            // The running request decides for itself; the new state is applied when it ends.
            isOnline = online
            return []

        // Offline: only a user's request goes out; everything else waits for the link.
        case (.offline, .trigger(let burst)) where burst.kind == .manual:
            return startRefresh(newCycle: true)

        case (.offline(let resting), .link(online: true)):
            isOnline = true
            let now = self.now
            return request(TriggerBurst(kind: .network, first: now, last: now),
                           shownAs: resting, alreadyScheduled: interruptedLatestStart)

        case (.offline, .trigger), (.offline, .link(online: false)), (.offline, .deadline):
            return []

        // Going offline pauses whatever was waiting.
        case (.idle, .link(online: false)):
            isOnline = false
            state = .offline(resting: .idle)
            return []
        case (.pending(let pending), .link(online: false)):
            isOnline = false
            interruptedLatestStart = pending.latestStart
            state = .offline(resting: pending.shownAs)
            return []
        case (.backoff, .link(online: false)):
            isOnline = false
            state = .offline(resting: .backoff)
            return []
        case (.error, .link(online: false)):
            isOnline = false
            state = .offline(resting: .error)
            return []
        case (.idle, .link(online: true)), (.pending, .link(online: true)),
             (.backoff, .link(online: true)), (.error, .link(online: true)):
            isOnline = true
            return []

        // Healthy or resting: any trigger starts a new cycle.
        case (.idle(let periodicAt), .trigger(let burst)):
            return request(burst, shownAs: .idle, alreadyScheduled: periodicAt)
        case (.error(let periodicAt), .trigger(let burst)):
            return request(burst, shownAs: .error, alreadyScheduled: periodicAt)
        case (.idle, .deadline):
            return request(periodicBurst, shownAs: .idle, alreadyScheduled: nil)
        case (.error, .deadline):
            return request(periodicBurst, shownAs: .error, alreadyScheduled: nil)

        // Backoff: a network-like or manual trigger restarts the cycle early
        // (rule 7); periodic and start-up triggers keep the retry schedule.
        case (.backoff(let retryAt), .trigger(let burst)) where burst.kind.restartsBackoff:
            return request(burst, shownAs: .backoff, alreadyScheduled: retryAt)
        case (.backoff, .trigger):
            return []
        case (.backoff, .deadline):
            return startRefresh(newCycle: false)

        // Debouncing: later triggers push the start back, within `latestStart`.
        case (.pending(let pending), .trigger(let burst)):
            return extend(pending, with: burst)
        case (.pending, .deadline):
            return startRefresh(newCycle: true)

        // A refresh end without a running refresh (e.g. after a reset) is stale.
        case (_, .finished):
            return []
        case (.syncing, .deadline):
            return []
        }
    }

    // MARK: Helpers of the transition function

    /// A periodic trigger at the current instant.
    private var periodicBurst: TriggerBurst {
        TriggerBurst(kind: .periodic, first: now, last: now)
    }

    /// The earliest instant an automatic (non-manual) request may start.
    private var automaticFloor: MonotonicInstant {
        max(now, retryAfterUntil ?? now)
    }

    /// A new cycle was asked for by `burst` while waiting (idle, error,
    /// backoff or offline coming back): start now, or debounce.
    private mutating func request(
        _ burst: TriggerBurst, shownAs: SourceStateName, alreadyScheduled: MonotonicInstant?
    ) -> [SchedulerAction] {
        if burst.kind == .manual { return startRefresh(newCycle: true) }
        let latest: MonotonicInstant
        let wanted: MonotonicInstant
        if burst.kind.isImmediate {
            latest = now
            wanted = now
        } else {
            // Never later than what was already scheduled: a trigger only ever
            // brings a refresh forward.
            latest = min(burst.first + settings.maxDebounceWait, alreadyScheduled ?? .init(nanoseconds: .max))
            wanted = min(burst.last + settings.debounce, latest)
        }
        return schedule(PendingRefresh(startAt: max(wanted, automaticFloor), latestStart: latest, shownAs: shownAs))
    }

    /// Another trigger during a debounce.
    private mutating func extend(_ pending: PendingRefresh, with burst: TriggerBurst) -> [SchedulerAction] {
        if burst.kind == .manual { return startRefresh(newCycle: true) }
        var pending = pending
        let wanted = burst.kind.isImmediate ? now : min(burst.last + settings.debounce, pending.latestStart)
        pending.startAt = max(wanted, automaticFloor)
        return schedule(pending)
    }

    /// Starts a pending refresh that is already due, else waits for it.
    private mutating func schedule(_ pending: PendingRefresh) -> [SchedulerAction] {
        if pending.startAt <= now { return startRefresh(newCycle: true) }
        state = .pending(pending)
        return []
    }

    /// Enters `syncing` and tells the daemon to start the request.
    private mutating func startRefresh(newCycle: Bool) -> [SchedulerAction] {
        interruptedLatestStart = nil
        attempt = newCycle ? 1 : attempt + 1
        state = .syncing(followUp: nil)
        return [.startRefresh(source: name)]
    }

    /// Applies the outcome of the refresh that just ended.
    private mutating func settle<J: JitterSource>(_ outcome: RefreshOutcome, jitter: inout J) {
        switch outcome {
        case .success, .unchanged:
            attempt = 0
            retryAfterUntil = nil
            let periodicAt = now + BackoffPolicy.periodicDelay(settings: settings, fraction: jitter.fraction())
            state = isOnline ? .idle(periodicAt: periodicAt) : .offline(resting: .idle)
        case .failure(let kind, let retryAfter):
            if let retryAfter {
                let until = now + min(SchedulingTime.nonNegative(retryAfter), settings.retryAfterCap)
                retryAfterUntil = max(until, retryAfterUntil ?? until)
            }
            let exhausted: Bool
            switch kind {
            case .permanent: exhausted = true
            case .transient: exhausted = attempt >= settings.maxAttempts
            case .local: exhausted = false
            }
            let fraction = jitter.fraction()
            if !isOnline {
                state = .offline(resting: exhausted ? .error : .backoff)
            } else if exhausted {
                state = .error(periodicAt: now + BackoffPolicy.periodicDelay(settings: settings, fraction: fraction))
            } else {
                // A local failure past `maxAttempts` keeps retrying at the longest delay.
                if attempt >= settings.maxAttempts { attempt = settings.maxAttempts }
                let delay = attempt >= settings.maxAttempts
                    ? settings.maxDelay
                    : BackoffPolicy.delay(afterFailedAttempt: attempt, settings: settings, fraction: fraction)
                state = .backoff(retryAt: max(now + delay, automaticFloor))
            }
        }
    }

    /// Sets the restored backoff state (only `PersistedRetryState` restoring uses this).
    mutating func restoreBackoff(attempt: Int, retryAt: MonotonicInstant) {
        self.attempt = attempt
        state = .backoff(retryAt: retryAt)
    }

    /// Sets the restored error state: resting, waiting for the start-up trigger.
    mutating func restoreError(attempt: Int) {
        self.attempt = attempt
        state = .error(periodicAt: nil)
    }

    /// Fires every deadline that is due at `now`.
    private mutating func fireDeadlines<J: JitterSource>(jitter: inout J) -> [SchedulerAction] {
        var actions: [SchedulerAction] = []
        // Each firing either starts a refresh (no deadline while syncing) or
        // moves the deadline to a Retry-After in the future, so this ends
        // after at most two rounds; the bound is a guard against a bug looping.
        var rounds = 0
        while let deadline = nextDeadline(), deadline <= now, rounds < 4 {
            actions += step(.deadline, jitter: &jitter)
            rounds += 1
        }
        return actions
    }
}
