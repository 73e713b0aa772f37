import Foundation
import Synchronization
import Testing
@testable import SyncDaemon

@Suite("ControlConnection")
struct ControlConnectionTests {
    /// Regression for a deadlock seen in CI: the I/O thread closing a connection while the
    /// server cancels the task waiting for that close. Closing resumed the waiter under the
    /// connection's lock, while cancelling holds the task's status lock and runs the waiter's
    /// cancellation handler, which takes the connection's lock. Each round starts both at the
    /// same instant from two threads; a deadlock leaves the round unfinished.
    @Test func closingWhileTheWaiterIsCancelledNeverDeadlocks() async throws {
        let rounds = 3000
        let completed = Atomic<Int>(0)
        let finished = try await onThread { () -> Bool in
            for _ in 0..<rounds {
                let connection = ControlConnection(fd: -1, peer: PeerCredentials(uid: 0, gid: 0, pid: 1), privileged: true,
                                                   limits: ControlServerLimits())
                let waiter = Task { await connection.waitUntilClosed() }
                // Both racers spin until `go`, so the close and the cancel overlap.
                let go = Atomic<Bool>(false)
                let done = Atomic<Int>(0)
                let closer = Thread {
                    while !go.load(ordering: .acquiring) {}
                    connection.withState { ControlConnection.markClosed(&$0) }
                    done.add(1, ordering: .releasing)
                }
                let canceller = Thread {
                    while !go.load(ordering: .acquiring) {}
                    waiter.cancel()
                    done.add(1, ordering: .releasing)
                }
                closer.start()
                canceller.start()
                go.store(true, ordering: .releasing)
                let deadline = ContinuousClock.now + .seconds(10)
                while done.load(ordering: .acquiring) < 2 {
                    if ContinuousClock.now > deadline { return false }
                    sched_yield()
                }
                completed.add(1, ordering: .relaxed)
            }
            return true
        }
        #expect(finished, "close and cancel deadlocked after \(completed.load(ordering: .relaxed)) rounds")
    }
}
