import Synchronization
@testable import SyncEngine

/// A clock the test moves by hand: the wall clock and the boot clock advance together, and nothing else moves them.
final class ManualClock: Sendable {
    private let start: Timestamp
    private let elapsed = Mutex<Duration>(.zero)
    /// The boot clock when the test began (not zero: a real machine has been up a while).
    static let bootStart: Duration = .seconds(1_000)

    init(_ start: Timestamp = Timestamp(secondsSinceEpoch: 1_796_000_000)) { self.start = start }

    /// Moves both clocks forward.
    func advance(by duration: Duration) { elapsed.withLock { $0 += duration } }
    /// Moves both clocks forward by whole seconds.
    func advance(seconds: Int64) { advance(by: .seconds(seconds)) }

    /// The wall clock now.
    var wall: Timestamp { Timestamp(secondsSinceEpoch: start.secondsSinceEpoch + elapsed.withLock { $0 }.components.seconds) }
    /// The boot clock now.
    var sinceBoot: Duration { Self.bootStart + elapsed.withLock { $0 } }

    /// The engine's view of this clock.
    var engineClock: EngineClock {
        EngineClock(wall: { [self] in wall }, sinceBoot: { [self] in sinceBoot }, bootID: "test-boot")
    }
}
