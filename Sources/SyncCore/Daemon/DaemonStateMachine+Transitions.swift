// The transitions `DaemonStateMachine.handle` delegates to, one per input that needs more than a line.

extension DaemonStateMachine {
    /// A manual refresh: immediate, restarts a backoff cycle, tried even while offline. After a logout
    /// the sources come back first, so `refresh NAME` finds its source.
    mutating func refresh<J: JitterSource>(_ id: RequestID, source: String?, wait: Bool, at now: MonotonicInstant,
                                           jitter: inout J) -> [DaemonAction] {
        // The sources this request refreshes are triggered below; the others come back as at startup.
        if phase == .loggedOut { readdSources(at: now, except: source.map { [$0] } ?? Set(sources), jitter: &jitter) }
        if let source, !configured.contains(source) { return [.reply(id, .failed(.noSuchSource(source: source)))] }
        let names = source.map { [$0] } ?? sources
        feed(.trigger(.manual), source: source, at: now, jitter: &jitter)
        guard wait, !names.isEmpty else { return [.reply(id, .refreshed([]))] }
        waiters.append(Waiter(id: id, firstTicket: nextTicket, remaining: Set(names)))
        return []
    }

    /// Logout (syncd(8) GUARANTEES 9): a new generation, every running refresh cancelled, every waiter
    /// answered, the sources resting; the loop erases the account and reports back.
    mutating func logout(_ id: RequestID, discardPending: Bool, pendingChanges: Int) -> [DaemonAction] {
        if pendingChanges > 0 && !discardPending { return [.reply(id, .failed(.pendingChanges(count: pendingChanges)))] }
        var actions: [DaemonAction] = []
        generation += 1
        clearQueue()
        actions += cancelAll()
        for name in scheduler.sourceNames { scheduler.removeSource(name) }
        actions += failWaiters(.cancelled(reason: "the refresh was cancelled by a logout"))
        permanentlyFailing.removeAll()
        unhealthy.removeAll()
        stale.removeAll()
        phase = .loggedOut
        pendingLogout = id
        actions.append(.eraseAccount(id))
        return actions
    }

    /// SIGTERM or SIGINT: one transition. Every running refresh is cancelled, every waiting request fails
    /// with a clear error, nothing new starts; the loop exits when the last refresh ends or at the deadline.
    mutating func stop(at now: MonotonicInstant) -> [DaemonAction] {
        var actions: [DaemonAction] = []
        stopDeadline = now + Self.stopBudget
        clearQueue()
        actions += failWaiters(.stopping)
        if let pendingLogout { actions.append(.reply(pendingLogout, .failed(.stopping))) }
        pendingLogout = nil
        nextProbe = nil
        guard !running.isEmpty else { return actions + exit() }
        phase = .stopping(deadline: now + Self.stopGrace)
        return actions + cancelAll()
    }

    /// Cancels every running refresh, oldest ticket first.
    func cancelAll() -> [DaemonAction] {
        running.values.sorted { $0.id < $1.id }.map { .cancelRefresh($0) }
    }

    mutating func exit() -> [DaemonAction] {
        phase = .exited
        running.removeAll()
        return [.exit]
    }

    /// A ticket ended: its lane is free, and its source, if triggered meanwhile, joins the queue again.
    mutating func release(_ ticket: RefreshTicket) {
        guard running[ticket.source] == ticket else { return }
        running[ticket.source] = nil
        if waitingForSelf.remove(ticket.source) != nil { queue.append(ticket.source) }
    }

    /// A refresh ended: the scheduler learns the outcome, waiters issued before the ticket get its report.
    mutating func finished<J: JitterSource>(_ ticket: RefreshTicket, _ finish: RefreshFinish, at now: MonotonicInstant,
                                            jitter: inout J) -> [DaemonAction] {
        release(ticket)
        let name = ticket.source
        guard ticket.generation == generation, scheduler.source(name) != nil else { return [.discarded(ticket)] }
        if !finish.cancelled {
            if case .failure(.permanent, _) = finish.outcome { permanentlyFailing.insert(name) } else { permanentlyFailing.remove(name) }
        }
        if finish.stale { stale.insert(name) } else { stale.remove(name) }
        if case .failure = finish.outcome { unhealthy.insert(name) } else if !finish.stale { unhealthy.remove(name) }
        // A real request reached its server: a probe that said "unreachable" is out of date (probes stop once no
        // source fails, so nothing else would correct it).
        if !finish.cancelled, reachable == false, finish.outcome.reachedServer { reachable = true }
        feed(.refreshFinished(finish.outcome), source: name, at: now, jitter: &jitter)
        return [.saveRetryState(source: name)] + report(finish.report, ticket: ticket.id)
    }

    /// A reload: settings swapped, new sources (and, after a logout, every source) refreshed at once, changed
    /// ones after the debounce, removed ones dropped; a waiter for a removed source is told so instead of
    /// waiting for ever.
    mutating func reload<J: JitterSource>(_ plan: SourcePlan, at now: MonotonicInstant, jitter: inout J) -> [DaemonAction] {
        var actions: [DaemonAction] = []
        if phase == .loggedOut { readdSources(at: now, jitter: &jitter) }
        let old = configured
        sources = plan.sources
        configured = Set(plan.sources)
        probeInterval = plan.probeInterval
        probeURL = plan.probeURL
        lanes = plan.lanes
        scheduler.updateSettings(plan.settings)
        scheduler.setLocalSources(plan.local)
        for name in plan.sources {
            if !old.contains(name) {
                // A new source has nothing to serve yet: refreshed at once, as at startup.
                scheduler.addSource(name, at: now)
                feed(.trigger(.startup), source: name, at: now, jitter: &jitter)
                continue
            }
            guard plan.changed.contains(name) else { continue }
            if let running = running[name] { actions.append(.cancelRefresh(running)) }
            feed(.trigger(.reload), source: name, at: now, jitter: &jitter)
        }
        for name in old.subtracting(configured).sorted() {
            scheduler.removeSource(name)
            queued.remove(name)
            waitingForSelf.remove(name)
            permanentlyFailing.remove(name)
            unhealthy.remove(name)
            stale.remove(name)
            if let running = running[name] { actions.append(.cancelRefresh(running)) }
            let removed = SourceRefreshReport(source: name, result: .cancelled, records: 0,
                                              error: "removed from the configuration by a reload")
            actions += report(removed, ticket: nil)
        }
        return actions
    }

    /// Gives `report` to every waiter for its source (a ticket counts only for waiters that asked before it
    /// was issued; nil counts for all); answers those that are complete.
    mutating func report(_ report: SourceRefreshReport, ticket: Int?) -> [DaemonAction] {
        var actions: [DaemonAction] = []
        // In place: a copy of a waiter would copy its set of remaining sources and its reports, which for a
        // `refresh --wait` of 10,000 sources made each refresh cost O(sources) (docs/benchmarks.md).
        var index = 0
        while index < waiters.count {
            if ticket.map({ $0 >= waiters[index].firstTicket }) ?? true, waiters[index].remaining.remove(report.source) != nil {
                waiters[index].reports.append(report)
            }
            if waiters[index].remaining.isEmpty {
                let waiter = waiters.remove(at: index)
                actions.append(.reply(waiter.id, .refreshed(waiter.reports.sorted { $0.source < $1.source })))
            } else {
                index += 1
            }
        }
        return actions
    }

    mutating func failWaiters(_ error: ManagerError) -> [DaemonAction] {
        defer { waiters.removeAll() }
        return waiters.map { .reply($0.id, .failed(error)) }
    }

    /// Starts queued sources while a lane is free. A source whose own refresh still runs waits for it
    /// (`waitingForSelf`) and is queued again when it ends; the sources behind it go ahead.
    mutating func startNext() -> [DaemonAction] {
        guard phase == .running || phase == .loggedOut else { return [] }
        var actions: [DaemonAction] = []
        while running.count < lanes, queueHead < queue.count {
            let name = queue[queueHead]
            queueHead += 1
            // Queued twice after a removal and re-adding: only the entry the set still holds counts once.
            guard queued.contains(name), configured.contains(name) else { continue }
            if running[name] != nil {
                waitingForSelf.insert(name)
                continue
            }
            queued.remove(name)
            let ticket = RefreshTicket(id: nextTicket, source: name, generation: generation)
            nextTicket += 1
            running[name] = ticket
            actions.append(.startRefresh(ticket))
        }
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return actions
    }

    mutating func clearQueue() {
        queue.removeAll(keepingCapacity: true)
        queueHead = 0
        queued.removeAll(keepingCapacity: true)
        waitingForSelf.removeAll(keepingCapacity: true)
    }

    /// Feeds the scheduler; the sources it wants refreshed join the queue (once: a source already queued
    /// stays where it is; one that is running is queued again, so a trigger during a refresh gets its
    /// follow-up and a request is never dropped because an old refresh is still in flight).
    mutating func feed<J: JitterSource>(_ event: SchedulerEvent, source: String?, at now: MonotonicInstant, jitter: inout J) {
        for case .startRefresh(let name) in scheduler.handle(event, source: source, at: now, jitter: &jitter)
        where queued.insert(name).inserted {
            queue.append(name)
        }
    }

    /// Brings the sources back after a logout. The logout erased their data, so each is refreshed at once, as
    /// at startup (not at the next periodic refresh: there is nothing to serve meanwhile), except those in
    /// `manual`, which the caller triggers itself.
    mutating func readdSources<J: JitterSource>(at now: MonotonicInstant, except manual: Set<String> = [], jitter: inout J) {
        phase = .running
        for name in sources where scheduler.source(name) == nil {
            scheduler.addSource(name, at: now)
            if !manual.contains(name) { feed(.trigger(.startup), source: name, at: now, jitter: &jitter) }
        }
    }

    /// Probes run only while some source is failing or the daemon is offline; never while all is healthy.
    mutating func scheduleProbe<J: JitterSource>(at now: MonotonicInstant, jitter: inout J) {
        let needed = probeInterval > .zero && (!online || hasFailingSource)
        if !needed {
            nextProbe = nil
        } else if nextProbe == nil && !probing {
            // Jittered to 0.5-1.5x so a fleet that failed together does not probe in step.
            nextProbe = now + probeInterval * (0.5 + jitter.fraction())
        }
    }

    mutating func startProbe() -> [DaemonAction] {
        nextProbe = nil
        let failing = failingSources
        guard probeURL || !failing.isEmpty else { return [] }
        probing = true
        return [.probe(sources: failing)]
    }
}
