import Foundation
import Synchronization
import Testing
@testable import SyncControl

@Suite("ControlConnection")
struct ControlConnectionTests {
    /// Regression for a deadlock seen in CI: the I/O thread closing a connection while the
    /// server cancels the task waiting for that close. Closing resumed the waiter under the
    /// connection's lock, while cancelling holds the task's status lock and runs the waiter's
    /// cancellation handler, which takes the connection's lock. Each round waits until the waiter
    /// is registered, starts the close and the cancel at the same instant from two threads, and
    /// then needs the waiter to return: a deadlock or a lost wake-up leaves the round unfinished.
    @Test func closingWhileTheWaiterIsCancelledNeverDeadlocksNorLosesTheWakeUp() async throws {
        let rounds = 3000
        let completed = Atomic<Int>(0)
        let finished = try await onThread { () -> Bool in
            for _ in 0..<rounds {
                let connection = ControlConnection(fd: -1, peer: PeerCredentials(uid: 0, gid: 0, pid: 1), level: .owner,
                                                   limits: ControlServerLimits(), now: .zero)
                let returned = Atomic<Bool>(false)
                let waiter = Task(executorPreference: ServingExecutor.shared) {
                    await connection.waitUntilClosed()
                    returned.store(true, ordering: .releasing)
                }
                // Generous: the waiter resumes on the cooperative pool, which other suites running in
                // parallel may keep busy for seconds on a loaded 2-core machine; a deadlock never returns.
                let deadline = ContinuousClock.now + .seconds(60)
                // The waiter is registered (or the task already saw the close/cancel) before the race starts.
                while connection.withState({ $0.closeWaiters.isEmpty }) {
                    if ContinuousClock.now > deadline { return false }
                    sched_yield()
                }
                let go = Atomic<Bool>(false)
                let closer = Thread {
                    while !go.load(ordering: .acquiring) {}
                    connection.withState { ControlConnection.markClosed(&$0) }
                }
                let canceller = Thread {
                    while !go.load(ordering: .acquiring) {}
                    waiter.cancel()
                }
                closer.start()
                canceller.start()
                go.store(true, ordering: .releasing)
                while !returned.load(ordering: .acquiring) {
                    if ContinuousClock.now > deadline { return false }
                    sched_yield()
                }
                completed.add(1, ordering: .relaxed)
            }
            return true
        }
        #expect(finished, "close and cancel deadlocked or lost the wake-up after \(completed.load(ordering: .relaxed)) rounds")
    }

    /// Regression for a Watch closed in CI: an event queued on a stream whose call arrived more than
    /// the idle timeout ago was judged "replies not read for 60 s" if the I/O thread checked deadlines
    /// before writing it, because the unread-replies clock started at the call, not at the event.
    @Test func anEventQueuedOnALongQuietStreamIsGivenTheWholeIdleTimeoutToBeRead() {
        let limits = ControlServerLimits()
        let connection = ControlConnection(fd: -1, peer: PeerCredentials(uid: 0, gid: 0, pid: 1), level: .owner,
                                           limits: limits, now: .zero)
        connection.withState { state in
            state.hasCalled = true
            state.callInFlight = 0
        }
        // Quiet for an hour: no deadline while the stream waits for events.
        #expect(connection.withState { limits.connections.deadline(of: $0.activity) } == nil)

        let queuedAt = MonotonicInstant.zero.advanced(by: .seconds(3600))
        #expect(connection.enqueue(Array("{}\u{0}".utf8), at: queuedAt))
        let deadline = connection.withState { limits.connections.deadline(of: $0.activity) }
        #expect(deadline?.at == queuedAt.advanced(by: limits.connections.idleTimeout))
        #expect(deadline?.timeout == .unreadReplies(limits.connections.idleTimeout))

        // More output behind unread output does not restart the clock.
        #expect(connection.enqueue(Array("{}\u{0}".utf8), at: queuedAt.advanced(by: .seconds(30))))
        #expect(connection.withState { limits.connections.deadline(of: $0.activity)?.at } == queuedAt.advanced(by: limits.connections.idleTimeout))
    }
}
