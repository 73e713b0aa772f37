import Foundation
import Glibc
import Synchronization
import Testing
import SyncSystem

/// The one way syncd starts a thread of its own.
@Suite("System threads")
struct SystemThreadTests {
    /// The calling thread's name as the kernel keeps it (`/proc/thread-self/comm`).
    static func currentName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    @Test func aJoinableThreadRunsItsBodyNamedAndJoinWaitsForIt() throws {
        let seen = Mutex<(ran: Bool, name: String, thread: pthread_t?)>((false, "", nil))
        let thread = try SystemThread.joinable(name: "test-joinable-long-name") {
            seen.withLock { $0 = (true, SystemThreadTests.currentName(), pthread_self()) }
        }
        thread.join()
        let result = seen.withLock { $0 }
        #expect(result.ran)
        #expect(result.name == "test-joinable-l", "the kernel keeps the first 15 bytes")
        #expect(result.thread.map { pthread_equal($0, pthread_self()) == 0 } == true, "the body ran on another thread")
        thread.join()  // a second join returns at once
    }

    @Test func anUnnamedThreadKeepsTheNameItInherits() throws {
        let before = Self.currentName()
        let seen = Mutex("")
        let thread = try SystemThread.joinable { seen.withLock { $0 = SystemThreadTests.currentName() } }
        thread.join()
        #expect(seen.withLock { $0 } == before)
    }

    @Test func aDetachedThreadRunsItsBody() throws {
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex("")
        try SystemThread.detached(name: "test-detached") {
            seen.withLock { $0 = SystemThreadTests.currentName() }
            done.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 } == "test-detached")
    }
}

/// The one EINTR helper: a call interrupted by a signal is made again; any other result is the caller's.
@Suite("EINTR retry")
struct RetryingEINTRTests {
    @Test func aCallFailingWithEINTRIsMadeAgainUntilItReturnsSomethingElse() {
        var calls = 0
        let result = retryingEINTR { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        #expect((result, calls) == (7, 3))
    }

    @Test func anotherFailureIsReturnedWithItsErrno() {
        var calls = 0
        let result = retryingEINTR { () -> Int in
            calls += 1
            errno = EAGAIN
            return -1
        }
        #expect((result, calls, errno) == (-1, 1, EAGAIN))
    }

    @Test func aCallReturningMinusErrnoIsMadeAgainOnMinusEINTR() {
        var calls = 0
        let result = retryingMinusEINTR { () -> Int in
            calls += 1
            return calls < 2 ? -Int(EINTR) : -Int(ENOSPC)
        }
        #expect((result, calls) == (-Int(ENOSPC), 2))
    }

    @Test func systemCallThrowsTheErrnoOfAFailureOtherThanEINTR() {
        var calls = 0
        #expect { try systemCall("open /nowhere") { () -> Int32 in
            calls += 1
            errno = calls == 1 ? EINTR : ENOENT
            return -1
        } } throws: { error in
            (error as? SystemError)?.code == ENOENT && "\(error)" == "Failed to open /nowhere: No such file or directory"
        }
        #expect(calls == 2)
    }
}
