import SyncCore
import SyncStore
import Testing
@testable import SyncDaemon

/// A core and a status board driven like the loop drives them, with a manual clock in whole seconds (the wall
/// clock follows it, so a `nextAttempt` rendered earlier reads the same as one rendered now).
struct BoardRig {
    static let epoch: Int64 = 1_795_000_000
    static let settings = SchedulerSettings(debounce: .seconds(2), interval: .seconds(900), randomizedDelay: .seconds(30),
                                            initialDelay: .seconds(1), maxDelay: .seconds(60), maxAttempts: 3)
    static let daemon = DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable", reachable: nil,
                                     uptimeSec: 5)
    var core: DaemonStateMachine
    var board = StatusBoard()
    var sources: [SourceConfiguration]
    var now = MonotonicInstant.zero
    var jitter = ConstantJitter(0.37)

    init(_ names: [String], lanes: Int = 2) {
        sources = names.map { BoardRig.source($0) }
        core = DaemonStateMachine(BoardRig.plan(names, lanes: lanes), at: now)
        board.states.replaceAll(with: Dictionary(uniqueKeysWithValues: names.map { ($0, SourceState(name: $0)) }))
        board.setSources(sources)
    }

    static func source(_ name: String, version: Int = 0) -> SourceConfiguration {
        SourceConfiguration(name: name, url: "http://127.0.0.1:9/\(name)?v=\(version)", location: SourceLocation(file: "\(name).source", line: 1))
    }

    static func plan(_ names: [String], changed: Set<String> = [], lanes: Int) -> SourcePlan {
        SourcePlan(sources: names, changed: changed, settings: settings, probeInterval: .seconds(30), lanes: lanes)
    }

    var wall: Timestamp { Timestamp(secondsSinceEpoch: Self.epoch + (now - .zero).components.seconds) }

    /// Feeds the core like `DaemonLoop.feed` followed by `afterEvent` (which collects the changes).
    @discardableResult
    mutating func send(_ input: DaemonInput, collect: Bool = true) -> [DaemonAction] {
        let actions = core.handle(input, at: now, jitter: &jitter)
        if collect { board.collectChanges(from: &core) }
        return actions
    }

    /// The reply as the daemon sends it.
    mutating func reply() -> String {
        String(decoding: board.reply(core: &core, sources: sources, daemon: Self.daemon, failed: [], now: now, wall: wall), as: UTF8.self)
    }

    /// The reply serialised from scratch, every source's status made now.
    func fresh() -> String {
        let statuses = sources.map { board.status(of: $0, core: core, now: now, wall: wall) }
        return JSONValue.object(ManagerStatus(daemon: Self.daemon, sources: statuses).json).serialized()
    }

    static func finish(_ ticket: RefreshTicket, _ outcome: RefreshOutcome) -> DaemonInput {
        let failed: Bool
        if case .failure = outcome { failed = true } else { failed = false }
        return .refreshFinished(ticket, RefreshFinish(outcome: outcome, stale: failed,
                                                      report: SourceRefreshReport(source: ticket.source, result: failed ? .failed : .updated,
                                                                                  records: 2, error: failed ? "HTTP 503" : nil)))
    }
}

/// `GetStatus` from the status board (docs/architecture.md, "Status at scale"): each input of a source's status
/// marks the source where it changes, a reply re-serialises only the marked sources, and the reply always
/// equals a serialisation from scratch.
@Suite("Status board")
struct StatusBoardTests {
    static func object(_ reply: String, _ index: Int) throws -> JSONObject {
        let sources = try #require(try JSONValue(parsing: Array(reply.utf8)).objectValue?["sources"]?.arrayValue)
        return try #require(sources[index].objectValue)
    }

    @Test func aReplyWithNothingChangedSerialisesNothing() {
        var rig = BoardRig(["a", "b", "c"])
        let first = rig.reply()
        #expect(first == rig.fresh())
        #expect(rig.board.serializedCount == 3)
        rig.now = rig.now + .seconds(1)
        #expect(rig.reply() == first)
        #expect(rig.board.serializedCount == 3)
    }

    /// Every input of a source's status, changed one at a time after a reply: the next reply shows the change
    /// (it equals the serialisation from scratch and differs from the previous one), and only the sources the
    /// input concerns are serialised again.
    @Test(arguments: ["storedState", "notices", "schedulerState", "laneStarts", "laneEnds", "attemptAndNextAttempt",
                      "logout", "linksDown", "reloadURL"])
    func eachInputMarksItsSource(input: String) throws {
        var rig = BoardRig(["a", "b", "c"], lanes: 1)
        var ticket: RefreshTicket?
        if ["laneEnds", "attemptAndNextAttempt", "logout"].contains(input) {
            ticket = started(rig.send(.started)).first
            #expect(ticket?.source == "a")
        }
        let before = rig.reply()
        let serialized = rig.board.serializedCount
        var expectedSerialized = 1
        switch input {
        case "storedState":
            rig.board.states["b"]?.localRecordCount = 7
        case "notices":
            rig.board.notices["b"] = ["the server's ETag is longer than 8 KiB; it is not kept"]
        case "schedulerState":
            rig.send(.refresh(RequestID(1), source: "b", wait: false))
            rig.send(.refresh(RequestID(2), source: "c", wait: false))
            expectedSerialized = 2
        case "laneStarts":
            rig.send(.refresh(RequestID(1), source: "b", wait: false))
        case "laneEnds":
            rig.now = rig.now + .seconds(1)
            rig.send(BoardRig.finish(try #require(ticket), .success))
            expectedSerialized = 2  // a ends, b takes the lane
        case "attemptAndNextAttempt":
            rig.send(BoardRig.finish(try #require(ticket), .failure(.transient, retryAfter: nil)))
            expectedSerialized = 2  // a backs off, b takes the lane
        case "logout":
            rig.send(.logout(RequestID(1), discardPending: true, pendingChanges: 0))
            expectedSerialized = 3
        case "linksDown":
            rig.send(.links(online: false, significant: true))
            expectedSerialized = 3
        case "reloadURL":
            rig.sources[1] = BoardRig.source("b", version: 2)
            rig.board.setSources(rig.sources)
            rig.send(.reloaded(BoardRig.plan(["a", "b", "c"], changed: ["b"], lanes: 1)))
            expectedSerialized = 3
        default:
            Issue.record("unknown input \(input)")
        }
        let after = rig.reply()
        #expect(after == rig.fresh())
        #expect(after != before)
        #expect(rig.board.serializedCount - serialized == expectedSerialized)
    }

    /// A source is marked whether or not the loop collects after the event: a reply collects first.
    @Test func aReplyCollectsChangesNotYetCollected() throws {
        var rig = BoardRig(["a", "b"])
        _ = rig.reply()
        rig.send(.started, collect: false)
        let after = rig.reply()
        #expect(after == rig.fresh())
        #expect(try Self.object(after, 0)["state"] == "syncing")
    }

    /// Random sequences of everything that happens to a daemon: after each step the reply is byte for byte the
    /// serialisation from scratch (a source whose change was not marked would show its old object).
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomSequencesMatchTheSerialisationFromScratch(seed: UInt64) throws {
        // Seeded, so a failing sequence can be replayed.
        var random = SplitMix64Jitter(seed: seed)
        let names = ["a", "b", "c", "d", "e"]
        var rig = BoardRig(names, lanes: 2)
        var running: [RefreshTicket] = []
        var request = 0
        rig.send(.started)
        var compared = 0
        for _ in 0..<400 {
            let name = names[random.below(names.count)]
            switch random.below(12) {
            case 0, 1:
                rig.now = rig.now + .seconds(Int64(1 + random.below(40)))
                if let due = rig.core.nextDeadline, due <= rig.now { running += started(rig.send(.timer)) }
            case 2:
                request += 1
                running += started(rig.send(.refresh(RequestID(request), source: random.below(3) == 0 ? nil : name, wait: false)))
            case 3, 4:
                guard !running.isEmpty else { continue }
                let ticket = running.remove(at: random.below(running.count))
                let outcomes: [RefreshOutcome] = [.success, .unchanged, .failure(.transient, retryAfter: nil),
                                                  .failure(.permanent, retryAfter: nil), .failure(.transient, retryAfter: .seconds(20))]
                running += started(rig.send(BoardRig.finish(ticket, outcomes[random.below(outcomes.count)])))
            case 5:
                running += started(rig.send(.localChanged(source: name)))
            case 6:
                running += started(rig.send(.links(online: random.below(2) == 0, significant: true)))
            case 7:
                rig.board.states[name]?.localRecordCount = random.below(100)
                rig.board.states[name]?.lastError = random.below(2) == 0 ? nil : "Failed to fetch \(name): HTTP 503"
                rig.board.states[name]?.lastSuccess = Timestamp(secondsSinceEpoch: BoardRig.epoch + Int64(random.below(1000))).rfc3339
            case 8:
                rig.board.notices[name] = random.below(2) == 0 ? nil : [SourceNotice(ownWords: "warning \(random.below(5))")]
            case 9:
                request += 1
                running += started(rig.send(.probeFinished(reachable: random.below(2) == 0)))
                if random.below(4) == 0 {
                    running += started(rig.send(.logout(RequestID(request), discardPending: true, pendingChanges: 0)))
                    rig.board.states.replaceAll(with: Dictionary(uniqueKeysWithValues: names.map { ($0, SourceState(name: $0)) }))
                    running += started(rig.send(.accountErased(RequestID(request), .success(()))))
                }
            case 10:
                let index = random.below(rig.sources.count)
                rig.sources[index] = BoardRig.source(rig.sources[index].name, version: random.below(3))
                rig.board.setSources(rig.sources)
                running += started(rig.send(.reloaded(BoardRig.plan(names, changed: [rig.sources[index].name], lanes: 2))))
            default:
                break
            }
            if random.below(2) == 0 {
                let reply = rig.reply()
                #expect(reply == rig.fresh(), "seed \(seed), at \(rig.now)")
                compared += 1
            }
        }
        #expect(compared > 100)
        #expect(rig.board.serializedCount < compared * names.count, "unchanged sources are copied, not serialised")
    }
}

extension SplitMix64Jitter {
    /// A number in `0..<bound` (the modulo's bias does not matter to these tests).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

func started(_ actions: [DaemonAction]) -> [RefreshTicket] {
    actions.compactMap { if case .startRefresh(let ticket) = $0 { ticket } else { nil } }
}
