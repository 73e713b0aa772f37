import Foundation
import Synchronization
import Testing
import SyncCore
@testable import SyncDaemon

/// Real rtnetlink in real network namespaces (ARCHITECTURE "Testing with real
/// components → Netlink"): a daemon-side and a server-side namespace joined by a
/// veth pair. Nothing is ever added to the root namespace. Needs root (CI is).
@Suite("LinkMonitor", .serialized, .system)  // needs root (network namespaces)
struct LinkMonitorTests {
    @Test func followsCarrierAndAddressesInANamespace() async throws {
        let pair = try NamespacePair()
        defer { pair.remove() }
        let recorder = Recorder()
        let monitor = LinkMonitor(networkNamespacePath: pair.daemonPath, logger: Self.logger, onChange: recorder.record)
        try await monitor.start()
        defer { Task { await monitor.stop() } }

        // The initial report came before start() returned.
        #expect(recorder.events.first?.state == .routable)
        #expect(recorder.events.first?.change == .stateChanged(from: .none, to: .routable))
        #expect(monitor.state == .routable)

        // Cut the link on the server's side: the daemon's end loses carrier.
        try pair.ip("-n", pair.server, "link", "set", NamespacePair.serverInterface, "down")
        try await waitUntil { monitor.state != .routable }
        #expect(monitor.state == .none)  // the daemon namespace's lo never counts
        #expect(recorder.changes.contains(.stateChanged(from: .routable, to: .none)))

        try pair.ip("-n", pair.server, "link", "set", NamespacePair.serverInterface, "up")
        try await waitUntil { monitor.state == .routable }
        #expect(recorder.changes.last == .stateChanged(from: .none, to: .routable)
            || recorder.changes.last == .stateChanged(from: .carrier, to: .routable))

        // Changes while routable: a new address, a new default route.
        try pair.ip("-n", pair.daemon, "addr", "add", "198.18.0.3/24", "dev", NamespacePair.daemonInterface)
        try await waitUntil { recorder.changes.last == .addressChanged }
        try pair.ip("-n", pair.daemon, "route", "add", "default", "via", "198.18.0.1")
        try await waitUntil { recorder.changes.last == .defaultRouteChanged }

        await monitor.stop()
        let count = recorder.events.count
        try pair.ip("-n", pair.server, "link", "set", NamespacePair.serverInterface, "down")
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.events.count == count, "no reports after stop()")
    }

    /// A tiny receive queue and a burst of 250 addresses make the kernel drop
    /// notifications (ENOBUFS); the monitor dumps again and keeps following.
    @Test func recoversFromLostNotifications() async throws {
        let pair = try NamespacePair()
        defer { pair.remove() }
        let recorder = Recorder()
        let monitor = LinkMonitor(allowedInterfaces: [], networkNamespacePath: pair.daemonPath, receiveQueueSize: 1,
                                  logger: Self.logger, onChange: recorder.record)
        try await monitor.start()
        defer { Task { await monitor.stop() } }
        #expect(monitor.state == .routable)

        let batch = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-lm-batch-\(getpid())")
        defer { try? FileManager.default.removeItem(at: batch) }
        let commands = (1...250).map { "address add 198.18.1.\($0)/32 dev \(NamespacePair.daemonInterface)" }
        try commands.joined(separator: "\n").appending("\n").write(to: batch, atomically: true, encoding: .utf8)
        try pair.ip("-n", pair.daemon, "-batch", batch.path)

        try await waitUntil { monitor.lostEventCount > 0 }
        try await waitUntil { recorder.changes.last == .addressChanged }
        #expect(monitor.state == .routable)

        try pair.ip("-n", pair.server, "link", "set", NamespacePair.serverInterface, "down")
        try await waitUntil { monitor.state == .none }
        await monitor.stop()
    }

    @Test func allowListWithoutMatchesStaysNone() async throws {
        let pair = try NamespacePair()
        defer { pair.remove() }
        let recorder = Recorder()
        let monitor = LinkMonitor(allowedInterfaces: ["wan0"], networkNamespacePath: pair.daemonPath,
                                  logger: Self.logger, onChange: recorder.record)
        try await monitor.start()
        #expect(recorder.events.count == 1)
        #expect(recorder.events.first?.state == LinkState.none)
        #expect(recorder.events.first?.change == nil)
        await monitor.stop()
        await monitor.stop()  // twice is fine
    }

    @Test func missingNamespaceFailsToStart() async {
        let monitor = LinkMonitor(networkNamespacePath: "/var/run/netns/syncd-does-not-exist-\(getpid())",
                                  logger: Self.logger) { _, _ in }
        await #expect(throws: SystemError.self) { try await monitor.start() }
        await monitor.stop()
    }

    @Test func stopWithoutStartReturns() async {
        let monitor = LinkMonitor(logger: Self.logger) { _, _ in }
        await monitor.stop()
        #expect(monitor.state == .none)
    }

    static let logger = Logger(journal: false, threshold: .info)

    /// Polls `condition` every 20 ms for up to `seconds`.
    func waitUntil(seconds: Double = 5, sourceLocation: Testing.SourceLocation = #_sourceLocation, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within \(seconds) s", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Everything the monitor reported, in order.
final class Recorder: Sendable {
    private let storage = Mutex<[(state: LinkState, change: LinkChange?)]>([])

    var events: [(state: LinkState, change: LinkChange?)] { storage.withLock { $0 } }
    var changes: [LinkChange] { events.compactMap(\.change) }

    @Sendable func record(_ state: LinkState, _ change: LinkChange?) {
        storage.withLock { $0.append((state, change)) }
    }
}

/// Two fresh network namespaces joined by a veth pair, 198.18.0.2/24 (daemon)
/// ↔ 198.18.0.1/24 (server), both ends up. The veth is created inside the
/// daemon namespace and its peer moved straight into the server namespace,
/// so no interface ever exists in the root namespace.
struct NamespacePair {
    static let daemonInterface = "lmd0"
    static let serverInterface = "lms0"
    /// Unique per test process and per instance.
    private static let counter = Mutex(0)

    let daemon: String
    let server: String
    var daemonPath: String { "/var/run/netns/\(daemon)" }

    init() throws {
        let n = Self.counter.withLock { value in value += 1; return value }
        daemon = "syncd-lm\(getpid())-\(n)d"
        server = "syncd-lm\(getpid())-\(n)s"
        do {
            try ip("netns", "add", daemon)
            try ip("netns", "add", server)
            try ip("-n", daemon, "link", "add", Self.daemonInterface, "type", "veth",
                   "peer", "name", Self.serverInterface, "netns", server)
            try ip("-n", daemon, "addr", "add", "198.18.0.2/24", "dev", Self.daemonInterface)
            try ip("-n", server, "addr", "add", "198.18.0.1/24", "dev", Self.serverInterface)
            try ip("-n", server, "link", "set", Self.serverInterface, "up")
            try ip("-n", daemon, "link", "set", Self.daemonInterface, "up")
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes both namespaces (and with them the veth pair); ignores failures.
    func remove() {
        _ = try? ip("netns", "del", daemon)
        _ = try? ip("netns", "del", server)
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var stderr: String
        var description: String { "ip \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
    }

    /// Runs `ip` with `arguments`; throws if it fails.
    @discardableResult
    func ip(_ arguments: String...) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandFailed(arguments: arguments, status: process.terminationStatus, stderr: stderr)
        }
        return process.terminationStatus
    }
}
