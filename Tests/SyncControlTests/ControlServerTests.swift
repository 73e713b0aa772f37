import Foundation
import Glibc
import Testing
@testable import SyncControl

@Suite("ControlServer", .serialized)
struct ControlServerTests {
    @Test func answersServiceInterfaceItself() async throws {
        let fixture = try ControlServerFixture()
        try await onThread {
            let client = try fixture.client()
            let info = try client.call(VarlinkCall(method: "org.varlink.service.GetInfo"))
            #expect(info["interfaces"] == ["org.varlink.service", "io.syncd.Manager"])
            #expect(info["version"] == "1.0.0")
            let description = try client.call(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription",
                                                          parameters: ["interface": "io.syncd.Manager"]))
            #expect(description["description"]?.stringValue == ManagerInterface.description)
            // An unknown interface is a negative answer, not a protocol error: the connection stays.
            #expect(throws: VarlinkClientError.remote(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": "x.y"])) {
                try client.call(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": "x.y"]))
            }
            _ = try client.call(ManagerRequest.getStatus.call())
        }
        await fixture.stop()
    }

    @Test func servesManagerCallsThroughTheHandler() async throws {
        let fixture = try ControlServerFixture()
        try await onThread {
            let client = try fixture.client()
            let status = try ManagerStatus(json: client.call(ManagerRequest.getStatus.call()))
            #expect(status == FakeControlHandler.status)
            var records: [JSONValue] = []
            var offset = 0
            while true {
                let page = try client.call(ManagerRequest.list(source: "posts", offset: offset, limit: 1000).call())
                records += page["records"]?.arrayValue ?? []
                guard let next = page["next"]?.integerValue else { break }
                offset = Int(next)
            }
            #expect(records.count == FakeControlHandler.recordCount)
            let record = try client.call(ManagerRequest.get(source: "posts", id: "12345678900007").call())
            #expect(record["record"]?["id"] == .integer(12_345_678_900_007))
            #expect(throws: VarlinkClientError.remote(name: "io.syncd.Manager.NoSuchSource", parameters: ["source": "nope"])) {
                try client.call(ManagerRequest.list(source: "nope", offset: 0, limit: 10).call())
            }
            // The connection survives an application error.
            #expect(try client.call(ManagerRequest.put(source: "posts", record: ["id": "a"]).call())["id"] == "a")
        }
        await fixture.stop()
    }

    @Test func streamsProgressOnlyWithMore() async throws {
        let fixture = try ControlServerFixture()
        try await onThread {
            let client = try fixture.client()
            var replies: [(JSONObject, Bool)] = []
            try client.callStreaming(ManagerRequest.refresh(source: "posts", wait: true).call()) { (parameters, continues) throws(Never) in
                replies.append((parameters, continues))
            }
            #expect(replies.map(\.1) == [true, true, true, false])
            #expect(replies.last?.0["result"] == "updated")
            // Without more only the outcome arrives.
            let outcome = try client.call(ManagerRequest.refresh(source: "posts", wait: true).call())
            #expect(outcome["result"] == "updated")
            #expect(throws: VarlinkClientError.remote(name: "io.syncd.Manager.RefreshFailed", parameters: ["source": "broken", "reason": "HTTP 503"])) {
                try client.call(ManagerRequest.refresh(source: "broken", wait: true).call())
            }
        }
        await fixture.stop()
    }

    @Test func answersMethodNotImplementedWhenTheHandlerDoesNotReply() async throws {
        let fixture = try ControlServerFixture()
        try await onThread {
            let client = try fixture.client()
            #expect(throws: VarlinkClientError.remote(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": "io.syncd.Manager.Reload"])) {
                try client.call(ManagerRequest.reload.call())
            }
            _ = try client.call(ManagerRequest.getStatus.call())
        }
        await fixture.stop()
    }

    @Test func watchWithoutMoreIsRefused() async throws {
        let fixture = try ControlServerFixture()
        try await onThread {
            let client = try fixture.client()
            #expect(throws: VarlinkClientError.remote(name: "org.varlink.service.ExpectedMore", parameters: [:])) {
                try client.call(ManagerRequest.watch.call())
            }
        }
        await fixture.stop()
    }

    /// Offending messages by name (built on demand: the oversize one would flood the test log as an argument).
    static func offendingBytes(_ name: String) -> [UInt8] {
        switch name {
        case "garbage": return Array("hello there".utf8) + [0]
        case "invalid JSON": return Array(#"{"method":"io.syncd.Manager.GetStatus""#.utf8) + [0]
        case "not an object": return Array("[1,2]".utf8) + [0]
        case "unknown method": return Array(#"{"method":"io.syncd.Manager.Explode"}"#.utf8) + [0]
        case "unknown interface": return Array(#"{"method":"com.example.Foo.Bar"}"#.utf8) + [0]
        case "wrong type": return Array(#"{"method":"io.syncd.Manager.List","parameters":{"source":1}}"#.utf8) + [0]
        case "unknown parameter": return Array(#"{"method":"io.syncd.Manager.GetStatus","parameters":{"x":1}}"#.utf8) + [0]
        default: return [UInt8](repeating: 0x20, count: (1 << 20) + 1)  // oversize, no NUL
        }
    }

    @Test(arguments: [
        ("garbage", "io.syncd.Manager.InvalidParameter"),
        ("invalid JSON", "io.syncd.Manager.InvalidParameter"),
        ("not an object", "org.varlink.service.InvalidParameter"),
        ("unknown method", "org.varlink.service.MethodNotFound"),
        ("unknown interface", "org.varlink.service.InterfaceNotFound"),
        ("wrong type", "org.varlink.service.InvalidParameter"),
        ("unknown parameter", "org.varlink.service.InvalidParameter"),
        ("oversize", "io.syncd.Manager.InvalidParameter"),
    ])
    func protocolViolationGetsAnErrorAndIsDisconnected(name: String, error: String) async throws {
        let fixture = try ControlServerFixture()
        let bytes = Self.offendingBytes(name)
        try await onThread {
            let bystander = try fixture.client()
            _ = try bystander.call(ManagerRequest.getStatus.call())
            let offender = try fixture.client()
            try offender.sendRaw(bytes)
            #expect(try errorName(of: offender) == error, "\(name)")
            #expect(isDisconnected(offender), "\(name)")
            _ = try bystander.call(ManagerRequest.getStatus.call())
        }
        await fixture.stop()
    }

    @Test func manyConcurrentClients() async throws {
        let fixture = try ControlServerFixture()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try await onThread {
                        let client = try fixture.client()
                        var answered = 0
                        for round in 0..<20 {
                            _ = try ManagerStatus(json: client.call(ManagerRequest.getStatus.call()))
                            let page = try client.call(ManagerRequest.list(source: "posts", offset: round * 10, limit: 10).call())
                            if page["records"]?.arrayValue?.count == 10 { answered += 1 }
                        }
                        return answered
                    }
                }
            }
            var total = 0
            for try await answered in group { total += answered }
            #expect(total == 16 * 20)
        }
        await fixture.stop()
    }

    @Test func clientThatNeverReadsIsDroppedWithoutBlockingOthers() async throws {
        let fixture = try ControlServerFixture()
        let handler = fixture.handler
        try await onThread {
            let sluggard = try fixture.client()
            try sluggard.send(ManagerRequest.watch.call(more: true))
            // While its queue fills, everyone else is served (a server blocked on it would never answer).
            let other = try fixture.client()
            for _ in 0..<200 { _ = try other.call(ManagerRequest.getStatus.call()) }
            // The server drops it once 4 MiB are queued; the handler sees the sink refuse and stops.
            let deadline = ContinuousClock.now + .seconds(30)
            while handler.finishedWatches.load(ordering: .sequentiallyConsistent) == 0, ContinuousClock.now < deadline {
                usleep(20_000)
            }
            #expect(handler.finishedWatches.load(ordering: .sequentiallyConsistent) == 1)
            #expect(handler.activeWatches.load(ordering: .sequentiallyConsistent) == 0)
            var received = 0
            while let message = try? sluggard.readMessage() { received += message.count + 1 }
            // What it got is bounded by the queue limit plus the kernel's socket buffers.
            #expect(received < 4 << 20 + 4 << 20)
            #expect(isDisconnected(sluggard))
            _ = try other.call(ManagerRequest.getStatus.call())
        }
        await fixture.stop()
    }

    @Test func disconnectCancelsAStreamingHandler() async throws {
        let fixture = try ControlServerFixture()
        let handler = fixture.handler
        try await onThread {
            do {
                let watcher = try fixture.client()
                try watcher.send(ManagerRequest.watch.call(more: true))
                for _ in 0..<3 { #expect(try watcher.readReply().continues) }
            }  // closed here
            let deadline = ContinuousClock.now + .seconds(10)
            while handler.finishedWatches.load(ordering: .sequentiallyConsistent) == 0, ContinuousClock.now < deadline {
                usleep(10_000)
            }
            #expect(handler.activeWatches.load(ordering: .sequentiallyConsistent) == 0)
        }
        await fixture.stop()
    }

    @Test func stopEndsStreamingHandlersAndClosesClients() async throws {
        let fixture = try ControlServerFixture()
        let watcher = try await onThread {
            let watcher = try fixture.client()
            try watcher.send(ManagerRequest.watch.call(more: true))
            _ = try watcher.readReply()
            return UncheckedBox(watcher)
        }
        await fixture.stop()
        #expect(fixture.handler.activeWatches.load(ordering: .sequentiallyConsistent) == 0)
        #expect(isDisconnected(watcher.value))
    }

    @Test func replacesAStaleSocketFile() async throws {
        let first = try ControlServerFixture()
        let stalePath = first.path
        // Simulate a crash: a socket file nobody listens on.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        await first.stop()
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: stalePath.utf8) }
        mkdir(first.directory, 0o755)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let server = try ControlServer.listen(path: stalePath, handler: FakeControlHandler(), policy: AccessPolicy(controlGroup: nil),
                                              info: ControlServiceInfo(version: "1.0.0"))
        let task = Task(executorPreference: ServingExecutor.shared) { await server.run() }
        var mode = stat()
        #expect(stat(stalePath, &mode) == 0 && mode.st_mode & 0o777 == 0o666)
        try await onThread { _ = try VarlinkClient(path: stalePath).call(ManagerRequest.getStatus.call()) }
        task.cancel()
        await task.value
        rmdir(first.directory)
    }

    @Test func refusesASocketPathAnotherServerStillServes() async throws {
        let fixture = try ControlServerFixture()
        var before = stat()
        #expect(lstat(fixture.path, &before) == 0)
        do {
            _ = try ControlServer.listen(path: fixture.path, handler: FakeControlHandler(), policy: AccessPolicy(controlGroup: nil),
                                         info: ControlServiceInfo(version: "2.0.0"))
            Issue.record("listen took over a socket path that a live server answers on")
        } catch {
            #expect(error.code == EADDRINUSE)
            #expect(error.description == "Failed to bind control socket \(fixture.path) (another process is still serving it): "
                + String(cString: strerror(EADDRINUSE)))
        }
        // The first server keeps its socket file and still answers on it.
        var after = stat()
        #expect(lstat(fixture.path, &after) == 0 && after.st_ino == before.st_ino && after.st_dev == before.st_dev)
        let info = try await onThread { try fixture.client().call(VarlinkCall(method: "org.varlink.service.GetInfo")) }
        #expect(info["version"] == "1.0.0")
        await fixture.stop()
    }
}

/// Carries a non-Sendable value across a thread hop in a test.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
