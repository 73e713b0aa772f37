import Testing
@testable import SyncCore

@Suite("LinkStateTracker")
struct LinkStateTrackerTests {
    /// The captured event files in the order they happened, with the state
    /// after each and every significant change it reported.
    static let timeline: [(file: String, state: LinkState, changes: [LinkChange])] = [
        ("event-lo-up.hex", .none, []),                                      // loopback never counts
        ("event-veth-created.hex", .none, []),                               // both ends down
        ("event-veth0-up-no-peer.hex", .none, []),                           // IFF_UP without carrier
        ("event-veth1-up-carrier.hex", .carrier, [.stateChanged(from: .none, to: .carrier)]),
        ("event-ipv6-linklocal.hex", .carrier, []),                          // fe80::/64 is not routable
        ("event-addr-ipv4-linklocal.hex", .carrier, []),                     // nor is 169.254/16
        ("event-addr-add.hex", .routable, [.stateChanged(from: .carrier, to: .routable)]),
        ("event-addr-add-second.hex", .routable, [.addressChanged]),
        ("event-addr6-add.hex", .routable, [.addressChanged]),
        ("event-route-default-add.hex", .routable, [.defaultRouteChanged]),
        ("event-route6-default-add.hex", .routable, [.defaultRouteChanged]),
        ("event-route-default-del.hex", .routable, [.defaultRouteChanged]),
        ("event-addr-del.hex", .routable, [.addressChanged]),
        ("event-peer-down.hex", .none, [.stateChanged(from: .routable, to: .none)]),
        ("event-peer-up.hex", .routable, [
            .stateChanged(from: .none, to: .carrier), .stateChanged(from: .carrier, to: .routable),
        ]),
        ("event-veth-deleted.hex", .none, [
            .stateChanged(from: .routable, to: .carrier), .stateChanged(from: .carrier, to: .none),
        ]),
    ]

    /// Applies the timeline's files up to (not including) `file`.
    static func tracker(allowing allowed: Set<String> = [], upTo file: String? = nil) throws -> LinkStateTracker {
        var tracker = LinkStateTracker(allowedInterfaces: allowed)
        for step in timeline {
            if step.file == file { break }
            for message in try NetlinkFixtures.messages(step.file) { _ = tracker.apply(message) }
        }
        return tracker
    }

    @Test func capturedTimeline() throws {
        var tracker = LinkStateTracker()
        for step in Self.timeline {
            let changes = try NetlinkFixtures.messages(step.file).compactMap { tracker.apply($0) }
            #expect(tracker.state == step.state, "after \(step.file)")
            #expect(changes == step.changes, "in \(step.file)")
        }
        #expect(tracker.interfaces.values.map(\.name) == ["lo"])
        #expect(tracker.addresses.keys.allSatisfy { $0.interfaceIndex == 1 })
    }

    static let allowListCases: [(Set<String>, LinkState)] = [
        ([], .routable),
        (["veth0"], .routable),
        (["veth1"], .carrier),   // the peer has only link-local addresses
        (["lo"], .none),         // loopback never counts, even when named
        (["eth9"], .none),
        (["veth1", "veth0"], .routable),
    ]

    @Test(arguments: allowListCases)
    func allowList(allowed: Set<String>, expected: LinkState) throws {
        let tracker = try Self.tracker(allowing: allowed, upTo: "event-peer-down.hex")
        #expect(tracker.state == expected)
    }

    @Test func linkLocalOnlyStaysCarrier() throws {
        let tracker = try Self.tracker(upTo: "event-addr-add.hex")
        #expect(tracker.state == .carrier)
        #expect(tracker.addresses.count >= 5)  // 127.0.0.1, ::1, two fe80::, 169.254.7.7
        #expect(tracker.snapshot.routableAddresses.isEmpty)
    }

    @Test func dumpsGiveOneChange() throws {
        var tracker = LinkStateTracker()
        let dump = try ["dump-link.hex", "dump-addr.hex", "dump-route.hex"].flatMap(NetlinkFixtures.messages)
        #expect(tracker.apply(dump) == .stateChanged(from: .none, to: .routable))
        #expect(tracker.snapshot.routableAddresses.count == 3)  // 198.18.0.1, 198.18.0.5, 2001:db8::1
        #expect(tracker.snapshot.defaultRoutes.count == 2)

        // ENOBUFS recovery: reset and dump again; nothing changed, nothing reported.
        let before = tracker.snapshot
        tracker.reset()
        #expect(tracker.state == .none)
        for message in dump { tracker.update(with: message) }
        #expect(tracker.change(since: before) == nil)
        #expect(tracker.apply(dump) == nil)
    }

    @Test func addressChangeReportedOnlyWhileRoutable() {
        var tracker = LinkStateTracker()
        #expect(tracker.apply(Self.link(2, "eth0", carrier: true)) == .stateChanged(from: .none, to: .carrier))
        #expect(tracker.apply(Self.address(2, [10, 0, 0, 7])) == .stateChanged(from: .carrier, to: .routable))
        #expect(tracker.apply(Self.address(2, [10, 0, 0, 8])) == .addressChanged)
        #expect(tracker.apply(Self.address(2, [10, 0, 0, 8])) == nil)  // same again
        #expect(tracker.apply(Self.address(2, [10, 0, 0, 8], deleted: true)) == .addressChanged)
        #expect(tracker.apply(Self.address(2, [10, 0, 0, 7], deleted: true)) == .stateChanged(from: .routable, to: .carrier))
        // Not routable: address churn of unusable addresses is not significant.
        #expect(tracker.apply(Self.address(2, [169, 254, 1, 1])) == nil)
    }

    @Test func defaultRouteChangeReportedOnlyWhileRoutable() {
        var tracker = LinkStateTracker()
        _ = tracker.apply(Self.link(2, "eth0", carrier: true))
        #expect(tracker.apply(Self.defaultRoute(via: 2)) == nil)  // carrier only
        _ = tracker.apply(Self.address(2, [10, 0, 0, 7]))
        #expect(tracker.apply(Self.defaultRoute(via: 2, deleted: true)) == .defaultRouteChanged)
        #expect(tracker.apply(Self.defaultRoute(via: 2)) == .defaultRouteChanged)
        // Not in the main table, or not a /0: not a default route.
        var other = RouteInfo(family: AddressFamily.ipv4, destinationLength: 0, table: 100, type: 1, outputInterface: 2)
        #expect(tracker.apply(NetlinkMessage(header: Self.header, body: .newRoute(other))) == nil)
        other.table = 254
        other.destinationLength = 24
        #expect(tracker.apply(NetlinkMessage(header: Self.header, body: .newRoute(other))) == nil)
    }

    @Test(arguments: [
        (UInt32(0x40), false),  // IFA_F_TENTATIVE
        (UInt32(0x08), false),  // IFA_F_DADFAILED
        (UInt32(0x80), true),   // IFA_F_PERMANENT
    ])
    func ipv6AddressFlags(flags: UInt32, routable: Bool) {
        var tracker = LinkStateTracker()
        _ = tracker.apply(Self.link(2, "eth0", carrier: true))
        let v6: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
        _ = tracker.apply(Self.address(2, v6, family: AddressFamily.ipv6, flags: flags))
        #expect(tracker.state == (routable ? .routable : .carrier))
    }

    @Test(arguments: [
        ([UInt8]([169, 254, 0, 1]), UInt8(0), false),
        ([127, 0, 0, 2], 0, false),
        ([198, 18, 0, 1], 0, true),
        ([198, 18, 0, 1], 253, false),   // scope link
        ([0xfe, 0x80] + Array(repeating: 0, count: 13) + [1], 0, false),
        ([0xfe, 0xbf] + Array(repeating: 0, count: 13) + [1], 0, false),   // still fe80::/10
        ([0xfe, 0xc0] + Array(repeating: 0, count: 13) + [1], 0, true),    // outside it
        (Array(repeating: 0, count: 15) + [1], 0, false),                  // ::1
        ([0xfd, 0x00] + Array(repeating: 0, count: 13) + [1], 0, true),    // ULA counts
        ([1, 2, 3], 0, false),                                             // wrong length
    ])
    func routableClassification(bytes: [UInt8], scope: UInt8, routable: Bool) {
        let family = bytes.count == 16 ? AddressFamily.ipv6 : AddressFamily.ipv4
        let address = LinkStateTracker.Address(interfaceIndex: 2, family: family, bytes: bytes, prefixLength: 24)
        #expect(LinkStateTracker.isRoutable(address, .init(flags: 0, scope: scope)) == routable)
    }

    @Test(arguments: [
        (UInt32(0x1 | 0x10000), OperationalState?.none, true),            // UP|LOWER_UP
        (0x1 | 0x40, .up, true),                                           // UP|RUNNING, operstate up
        (0x1 | 0x40, .unknown, true),                                      // no carrier reporting
        (0x1 | 0x40, .dormant, false),
        (0x1, .up, false),                                                 // not running, no LOWER_UP
        (0x40 | 0x10000, .up, false),                                      // administratively down
    ])
    func carrierRule(flags: UInt32, operationalState: OperationalState?, carrier: Bool) {
        let interface = LinkStateTracker.Interface(index: 2, name: "eth0", flags: InterfaceFlags(rawValue: flags), operationalState: operationalState)
        #expect(interface.hasCarrier == carrier)
    }

    @Test func bridgePortMessagesAreIgnored() {
        var tracker = LinkStateTracker()
        _ = tracker.apply(Self.link(2, "eth0", carrier: true))
        var port = LinkInfo(family: AddressFamily.bridge, index: 2, flags: [], name: "eth0")
        #expect(tracker.apply(NetlinkMessage(header: Self.header, body: .deleteLink(port))) == nil)
        port.flags = []
        #expect(tracker.apply(NetlinkMessage(header: Self.header, body: .newLink(port))) == nil)
        #expect(tracker.state == .carrier)
    }

    @Test func renameIntoTheAllowList() {
        var tracker = LinkStateTracker(allowedInterfaces: ["wan"])
        #expect(tracker.apply(Self.link(2, "eth0", carrier: true)) == nil)
        #expect(tracker.apply(Self.link(2, "wan", carrier: true)) == .stateChanged(from: .none, to: .carrier))
        // A message without IFLA_IFNAME keeps the known name.
        #expect(tracker.apply(NetlinkMessage(header: Self.header, body: .newLink(LinkInfo(index: 2, flags: .up, name: nil)))) == .stateChanged(from: .carrier, to: .none))
        #expect(tracker.interfaces[2]?.name == "wan")
    }

    @Test func statusStringsAreStable() {
        #expect(LinkState.allCases.map(\.rawValue) == ["none", "carrier", "routable"])
    }

    @Test(arguments: [
        (LinkChange.stateChanged(from: .carrier, to: .routable), true),
        (.stateChanged(from: .none, to: .routable), true),
        (.stateChanged(from: .routable, to: .carrier), false),
        (.stateChanged(from: .none, to: .carrier), false),
        (.addressChanged, true),
        (.defaultRouteChanged, true),
    ])
    func refreshScheduling(change: LinkChange, schedules: Bool) {
        #expect(change.schedulesRefresh == schedules)
    }

    // MARK: Synthetic messages

    static let header = NetlinkMessageHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0)

    static func link(_ index: Int32, _ name: String, carrier: Bool) -> NetlinkMessage {
        let flags: InterfaceFlags = carrier ? [.up, .running, .lowerUp] : [.up]
        return NetlinkMessage(header: header, body: .newLink(LinkInfo(index: index, flags: flags, name: name,
                                                                      operationalState: carrier ? .up : .down)))
    }

    static func address(_ index: UInt32, _ bytes: [UInt8], family: UInt8 = AddressFamily.ipv4,
                        flags: UInt32 = 0x80, deleted: Bool = false) -> NetlinkMessage {
        let info = AddressInfo(family: family, prefixLength: 24, flags: flags, scope: 0, interfaceIndex: index, address: bytes)
        return NetlinkMessage(header: header, body: deleted ? .deleteAddress(info) : .newAddress(info))
    }

    static func defaultRoute(via index: UInt32, deleted: Bool = false) -> NetlinkMessage {
        let info = RouteInfo(family: AddressFamily.ipv4, destinationLength: 0, table: 254, type: 1,
                             outputInterface: index, gateway: [10, 0, 0, 1])
        return NetlinkMessage(header: header, body: deleted ? .deleteRoute(info) : .newRoute(info))
    }
}
