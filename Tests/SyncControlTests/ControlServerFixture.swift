import Dispatch
import Foundation
import Glibc
import Testing
@testable import SyncControl

/// A ControlServer on a socket in a fresh temporary directory, served by a task.
final class ControlServerFixture: Sendable {
    let directory: String
    let path: String
    let server: ControlServer
    let handler: FakeControlHandler
    let task: Task<Void, Never>

    init(policy: AccessPolicy = AccessPolicy(controlGroup: nil), limits: ControlServerLimits = ControlServerLimits()) throws {
        var template = Array("/tmp/syncctl-test-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw SystemError("mkdtemp", code: errno) }
        directory = String(cString: created)
        chmod(directory, 0o755)
        path = directory + "/io.syncd.Manager"
        handler = FakeControlHandler()
        server = try ControlServer.listen(path: path, handler: handler, policy: policy,
                                          info: ControlServiceInfo(version: "1.0.0"), limits: limits)
        let server = self.server
        task = Task(executorPreference: ServingExecutor.shared) { await server.run() }
    }

    /// Stops the server and checks that the socket is gone.
    func stop() async {
        task.cancel()
        await task.value
        #expect(access(path, F_OK) != 0, "socket file left behind")
        rmdir(directory)
    }

    func client() throws -> VarlinkClient { try VarlinkClient(path: path) }
}

/// Where the test servers' tasks run: threads of their own, not Swift's cooperative pool. The pool has one
/// thread per core, and the suites that run meanwhile keep it busy with seconds of CPU each (scanners,
/// stores): a server waiting for a pool thread left `syncctl`, a separate process, to time out after 25 s.
/// A concurrent dispatch queue gets a thread whenever its work can run; the tasks' children (the server's
/// task groups) inherit the preference (SE-0417).
final class ServingExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ServingExecutor()
    private let queue = DispatchQueue(label: "syncd-tests.serving", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs blocking code on its own thread, so blocking sockets never occupy Swift's cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}

/// Reads one reply and returns its error name (nil on success).
func errorName(of client: VarlinkClient) throws -> String? {
    try client.readReply().error
}

/// Whether the server closed the connection (reads until EOF, ignoring replies).
func isDisconnected(_ client: VarlinkClient) -> Bool {
    while true {
        do { _ = try client.readMessage() } catch .disconnected { return true } catch { return false }
    }
}
