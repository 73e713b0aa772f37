// libFuzzer target for the rtnetlink parser and the link state tracker.
// Built outside SwiftPM by Tests/Fuzz/run-netlink-fuzz.sh with
// `swiftc -sanitize=fuzzer,address -parse-as-library`, together with
// Sources/SyncCore/Network/*.swift (so no `import SyncCore`).

/// One input: a datagram for the parser; its messages are also fed to a
/// tracker with an allow-list taken from the first byte, and the tracker's
/// invariants checked.
@_cdecl("LLVMFuzzerTestOneInput")
public func netlinkParserFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let result = NetlinkParser.parse(bytes)

    var tracker = LinkStateTracker(allowedInterfaces: size > 0 && bytes[0] & 1 == 1 ? ["veth0", "eth0"] : [])
    for message in result.messages {
        let before = tracker.snapshot
        let change = tracker.apply(message)
        // Invariants: a reported change matches the snapshots; `.stateChanged`
        // iff the state changed; address/route changes only while routable.
        let after = tracker.snapshot
        switch change {
        case .stateChanged(let from, let to)?:
            precondition(from == before.state && to == after.state && from != to)
        case .addressChanged?, .defaultRouteChanged?:
            precondition(before.state == .routable && after.state == .routable)
        case nil:
            precondition(before.state == after.state)
        }
        precondition(after.state != .routable || !after.routableAddresses.isEmpty)
    }
    // Both started empty, so a re-dump of the same messages after reset() ends
    // in the same table and reports nothing.
    let before = tracker.snapshot
    tracker.reset()
    for message in result.messages { tracker.update(with: message) }
    precondition(tracker.snapshot == before && tracker.change(since: before) == nil)
    for problem in result.problems { _ = problem.description }
    return 0
}
