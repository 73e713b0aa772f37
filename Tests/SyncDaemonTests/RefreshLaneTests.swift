import Foundation
import Glibc
import Synchronization
import Testing
@testable import SyncDaemon

/// A refresh lane runs its work in order on a thread of its own, named, `RefreshLane.niceIncrement` nice
/// levels below the process's main thread, and leaves every other thread's priority alone
/// (docs/architecture.md, "Status at scale").
@Suite("RefreshLane")
struct RefreshLaneTests {
    /// What a piece of work saw of the thread it ran on.
    struct Seen: Sendable, Equatable {
        let order: Int
        let thread: String  // /proc/thread-self/stat's first field: the thread's id
        let name: String
        let nice: Int32
    }

    static func currentThread() -> (id: String, name: String) {
        let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return (String(stat.prefix { $0 != " " }), name.trimmingCharacters(in: .newlines))
    }

    /// The calling thread's nice value (`who` 0), or the main thread's (`who` the process ID).
    static func nice(of who: id_t = 0) -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), who)
    }

    /// Hands `count` pieces of work to `lane` and returns what each saw, in the order they ran.
    static func run(_ count: Int, on lane: RefreshLane) async -> [Seen] {
        let seen = Mutex<[Seen]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for order in 0..<count {
                lane.async {
                    let (thread, name) = currentThread()
                    let all = seen.withLock { seen in
                        seen.append(Seen(order: order, thread: thread, name: name, nice: nice()))
                        return seen.count
                    }
                    if all == count { done.resume() }
                }
            }
        }
        return seen.withLock { $0 }
    }

    @Test("work runs in order on one named thread of its own, niceIncrement below the main thread")
    func runsLowered() async throws {
        let lane = RefreshLane(name: "refresh-lane-test-with-a-long-name")
        let callerNice = Self.nice()
        let mainNice = Self.nice(of: id_t(getpid()))
        let caller = Self.currentThread()
        let seen = await Self.run(5, on: lane)
        #expect(seen.map(\.order) == [0, 1, 2, 3, 4])
        let threads = Set(seen.map(\.thread))
        #expect(threads.count == 1, "one thread: \(threads)")
        #expect(!threads.contains(caller.id), "not the caller's thread")
        #expect(seen.allSatisfy { $0.name == "refresh-lane-te" }, "named (15 bytes kept): \(seen.map(\.name))")
        #expect(seen.allSatisfy { $0.nice == min(19, mainNice + RefreshLane.niceIncrement) },
                "nice \(seen.map(\.nice)), main thread at nice \(mainNice)")
        #expect(RefreshLane.niceIncrement > 0)
        // Later work runs on the same lowered thread, and the threads that handed it over are not lowered.
        let later = await Self.run(2, on: lane)
        #expect(Set(later.map(\.thread)) == threads)
        #expect(Self.nice() == callerNice, "the caller's thread keeps its priority")
        #expect(Self.nice(of: id_t(getpid())) == mainNice, "so does the main thread")
    }

    @Test("two lanes run on two threads; work handed over before a lane goes away still runs")
    func lanesApartAndOutlived() async throws {
        var first: RefreshLane? = RefreshLane(name: "lane-a")
        let second = RefreshLane(name: "lane-b")
        let a = await Self.run(1, on: first!)
        let b = await Self.run(1, on: second)
        #expect(a[0].thread != b[0].thread)
        #expect(a[0].name == "lane-a" && b[0].name == "lane-b")
        // lane-a is busy (held at `gate`) with more work queued when it goes away.
        let gate = DispatchSemaphore(value: 0)
        let ran = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            first!.async { gate.wait() }
            first!.async { done.resume(returning: Self.currentThread().id) }
            first = nil
            gate.signal()
        }
        #expect(ran == a[0].thread, "the queued work ran on lane-a's thread after the lane went away")
    }
}
