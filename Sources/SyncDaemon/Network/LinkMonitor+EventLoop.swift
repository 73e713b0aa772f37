// The monitor thread's loop: dump, then follow notifications, and dump again
// whenever notifications were lost (netlink(7) "ENOBUFS"; rtnetlink(7)).
internal import Glibc
import SyncCore
import SyncEngine

/// Runs on the monitor thread and owns the tracker: builds the table from
/// dumps, applies notifications, and reports through `report`.
struct LinkEventLoop {
    /// Why the loop ended.
    enum Outcome {
        /// The stop pipe was written.
        case stopped
        /// A system call failed in a way retrying cannot fix.
        case failed(SystemError)
    }

    private enum DumpOutcome {
        case complete(consistent: Bool)
        case stopped
        case failed(SystemError)
    }

    private let socket: NetlinkSocket
    private let logger: Logger
    private let report: (LinkState, LinkChange?) -> Void
    private let lostEvents: () -> Void
    private var tracker: LinkStateTracker
    private var sequence: UInt32 = 0

    init(socket: NetlinkSocket, allowedInterfaces: Set<String>, logger: Logger,
         lostEvents: @escaping () -> Void, report: @escaping (LinkState, LinkChange?) -> Void) {
        self.socket = socket
        self.logger = logger
        self.lostEvents = lostEvents
        self.report = report
        tracker = LinkStateTracker(allowedInterfaces: allowedInterfaces)
    }

    /// Dumps, reports the initial state, follows events; after lost events
    /// dumps again and reports only the net change. A dump that stayed
    /// inconsistent (a burst of changes kept interrupting it) is reported too,
    /// so the state is never older than necessary, and redone a moment later.
    /// Returns when stopped or failed.
    mutating func run() -> Outcome {
        var before = LinkStateTracker.Snapshot.empty
        var reported = false
        while true {
            let consistent: Bool
            switch dumpEverything() {
            case .stopped: return .stopped
            case .failed(let error): return .failed(error)
            case .complete(let ok): consistent = ok
            }
            let change = tracker.change(since: before)
            if !reported || change != nil {
                report(tracker.state, change)
                reported = true
            }
            switch followNotifications(redumpAfterMilliseconds: consistent ? nil : LinkMonitor.inconsistentRedumpMilliseconds) {
            case .stopped: return .stopped
            case .failed(let error): return .failed(error)
            case .complete(consistent: false):
                logger.warning("Netlink notifications were lost (receive queue overflow), re-reading links, addresses and routes")
                lostEvents()
            case .complete(consistent: true):
                logger.debug("Re-reading links, addresses and routes after an inconsistent dump")
            }
            before = tracker.snapshot
        }
    }

    /// Applies notifications until events are lost (`.complete(consistent: false)`), the
    /// redump delay passes (`.complete(consistent: true)`), stop or failure.
    private mutating func followNotifications(redumpAfterMilliseconds: Int32?) -> DumpOutcome {
        let deadline = redumpAfterMilliseconds.map { ContinuousClock.now + .milliseconds($0) }
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return .complete(consistent: true) }
                timeout = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1
            }
            switch socket.receive(timeoutMilliseconds: timeout) {
            case .stopped: return .stopped
            case .failed(let error): return .failed(error)
            case .timedOut: continue
            case .lostEvents: return .complete(consistent: false)
            case .datagram(let bytes):
                for message in parse(bytes) {
                    if let change = tracker.apply(message) { report(tracker.state, change) }
                }
            }
        }
    }

    /// Forgets everything and dumps links, then addresses, then routes, one
    /// dump at a time; repeats while a dump was inconsistent (events lost,
    /// `NLM_F_DUMP_INTR`, an error reply), up to a limit. Every attempt runs all
    /// three dumps, so even the last, inconsistent one is a whole picture.
    private mutating func dumpEverything() -> DumpOutcome {
        let requests: [(type: UInt16, name: String)] = [
            (Netlink.getLink, "links"), (Netlink.getAddress, "addresses"), (Netlink.getRoute, "routes"),
        ]
        var attempt = 0
        while true {
            attempt += 1
            tracker.reset()
            var consistent = true
            for request in requests {
                switch dump(type: request.type, name: request.name) {
                case .stopped: return .stopped
                case .failed(let error): return .failed(error)
                case .complete(let ok): consistent = consistent && ok
                }
            }
            if consistent { return .complete(consistent: true) }
            if attempt >= LinkMonitor.maximumDumpAttempts {
                logger.warning("Netlink dumps stayed inconsistent after \(attempt) attempts, using the last one and dumping again in a moment")
                return .complete(consistent: false)
            }
            logger.debug("Netlink dump was inconsistent, dumping again")
        }
    }

    /// One dump: request, then apply everything received (dump parts and
    /// interleaved notifications, in arrival order) until `NLMSG_DONE` or
    /// `NLMSG_ERROR` for this request's sequence number.
    private mutating func dump(type: UInt16, name: String) -> DumpOutcome {
        sequence = sequence == UInt32.max ? 1 : sequence + 1
        var busy = 0
        while true {
            let error = socket.requestDump(type: type, sequence: sequence)
            if error == 0 { break }
            // EBUSY: the socket still runs an earlier, abandoned dump; drain it.
            guard error == EBUSY, busy < 100 else {
                return .failed(SystemError("request a netlink dump of \(name)", code: error))
            }
            busy += 1
            switch socket.receive(timeoutMilliseconds: 100) {
            case .stopped: return .stopped
            case .failed(let error): return .failed(error)
            case .timedOut, .lostEvents: continue
            case .datagram(let bytes): for message in parse(bytes) { tracker.update(with: message) }
            }
        }
        var consistent = true
        while true {
            switch socket.receive(timeoutMilliseconds: LinkMonitor.dumpTimeoutMilliseconds) {
            case .stopped: return .stopped
            case .failed(let error): return .failed(error)
            case .timedOut:
                logger.warning("Timed out waiting for the netlink dump of \(name), starting over")
                return .complete(consistent: false)
            case .lostEvents:
                consistent = false  // keep reading: the dump itself goes on
            case .datagram(let bytes):
                var finished = false
                for message in parse(bytes) {
                    tracker.update(with: message)
                    guard message.header.sequence == sequence else { continue }
                    if message.header.isDumpInterrupted { consistent = false }
                    switch message.body {
                    case .done:
                        finished = true
                    case .error(let code) where code == -ENOBUFS:
                        // The dump's first part did not fit the queue; the kernel
                        // keeps the dump running (under this sequence number) and
                        // continues it on our next recv (af_netlink.c
                        // __netlink_dump_start). Read on, but redo it afterwards.
                        consistent = false
                    case .error(let code):
                        finished = true
                        consistent = false
                        logger.warning("\(SystemError("dump \(name) over netlink", code: -code).description), retrying")
                    default:
                        break
                    }
                }
                if finished { return .complete(consistent: consistent) }
            }
        }
    }

    /// Parses a datagram, logging whatever was skipped.
    private func parse(_ bytes: UnsafeRawBufferPointer) -> [NetlinkMessage] {
        let result = NetlinkParser.parse(bytes)
        for problem in result.problems { logger.warning("Failed to parse \(problem)") }
        return result.messages
    }
}
