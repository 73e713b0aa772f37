// Applies rtnetlink messages to a table of interfaces, addresses and default
// routes and derives the aggregate LinkState (syncd.conf(5) [Network]).

/// Keeps the kernel's view of links, addresses and default routes, as told by
/// rtnetlink dumps and notifications, and derives the aggregate ``LinkState``.
///
/// Pure and synchronous: the platform monitor feeds it parsed messages and
/// forwards the changes it reports.
public struct LinkStateTracker: Sendable {
    /// What the tracker knows about one interface.
    public struct Interface: Hashable, Sendable {
        /// `ifi_index`.
        public var index: Int32
        /// `IFLA_IFNAME` (empty if never told).
        public var name: String
        /// `ifi_flags`.
        public var flags: InterfaceFlags
        /// `IFLA_OPERSTATE`, if told.
        public var operationalState: OperationalState?

        /// A loopback interface: never counts.
        public var isLoopback: Bool { flags.contains(.loopback) }

        /// Up with carrier: `IFF_UP` and either `IFF_LOWER_UP`, or `IFF_RUNNING`
        /// with operstate UP or UNKNOWN (drivers that do not report carrier;
        /// kernel Documentation/networking/operstates.rst).
        public var hasCarrier: Bool {
            guard flags.contains(.up) else { return false }
            if flags.contains(.lowerUp) { return true }
            let operational = operationalState == .up || operationalState == .unknown || operationalState == nil
            return operational && flags.contains(.running)
        }
    }

    /// An address on an interface.
    public struct Address: Hashable, Sendable {
        /// The interface's index.
        public var interfaceIndex: UInt32
        /// `AF_INET` or `AF_INET6` (others are kept but never routable).
        public var family: UInt8
        /// The local address bytes.
        public var bytes: [UInt8]
        /// The prefix length.
        public var prefixLength: UInt8
    }

    /// A default route in the main table.
    public struct DefaultRoute: Hashable, Sendable {
        /// `AF_INET` or `AF_INET6`.
        public var family: UInt8
        /// `RTA_OIF`, if any.
        public var outputInterface: UInt32?
        /// `RTA_GATEWAY`, if any.
        public var gateway: [UInt8]?
        /// `RTA_PRIORITY`, if any.
        public var priority: UInt32?
    }

    /// What decides whether a change is significant: the state, and while
    /// routable the addresses and default routes that make it so.
    public struct Snapshot: Hashable, Sendable {
        /// The aggregate state.
        public var state: LinkState
        /// Routable addresses on counted interfaces with carrier.
        public var routableAddresses: Set<Address>
        /// Default routes through counted interfaces with carrier (or no interface).
        public var defaultRoutes: Set<DefaultRoute>

        /// The snapshot of an empty table.
        public static let empty = Snapshot(state: .none, routableAddresses: [], defaultRoutes: [])
    }

    /// `[Network] Interfaces=`: names that count; empty means every non-loopback interface.
    public let allowedInterfaces: Set<String>
    /// Known interfaces by index.
    public private(set) var interfaces: [Int32: Interface] = [:]
    /// Known addresses with their `IFA_FLAGS` and scope.
    public private(set) var addresses: [Address: AddressDetails] = [:]
    /// Known default routes in the main table.
    public private(set) var defaultRoutes: Set<DefaultRoute> = []

    /// Flags and scope of a known address.
    public struct AddressDetails: Hashable, Sendable {
        /// `IFA_FLAGS` (or `ifa_flags`).
        public var flags: UInt32
        /// `ifa_scope`.
        public var scope: UInt8
    }

    /// Creates an empty tracker counting the interfaces named in
    /// `allowedInterfaces` (all non-loopback ones when empty).
    public init(allowedInterfaces: Set<String> = []) {
        self.allowedInterfaces = allowedInterfaces
    }

    /// Forgets everything, as before a fresh dump (after `ENOBUFS` lost events).
    public mutating func reset() {
        interfaces = [:]
        addresses = [:]
        defaultRoutes = []
    }

    /// The aggregate state.
    public var state: LinkState { snapshot.state }

    /// The current snapshot.
    public var snapshot: Snapshot {
        let counted = Set(interfaces.values.filter { counts($0) && $0.hasCarrier }.map(\.index))
        let routable = Set(addresses.compactMap { address, details -> Address? in
            guard let index = Int32(exactly: address.interfaceIndex), counted.contains(index),
                  Self.isRoutable(address, details) else { return nil }
            return address
        })
        let routes = defaultRoutes.filter { route in
            guard let oif = route.outputInterface else { return true }
            guard let index = Int32(exactly: oif), let interface = interfaces[index] else {
                // A route through an interface we have not heard of yet: keep it
                // rather than guess (dump order puts links first, so this is rare).
                return true
            }
            return counts(interface) && interface.hasCarrier
        }
        let state: LinkState = !routable.isEmpty ? .routable : (counted.isEmpty ? .none : .carrier)
        return Snapshot(state: state, routableAddresses: routable, defaultRoutes: routes)
    }

    /// Applies one message; returns the significant change it caused, if any.
    public mutating func apply(_ message: NetlinkMessage) -> LinkChange? {
        let before = snapshot
        update(with: message)
        return change(since: before)
    }

    /// Applies messages (a dump) and returns the one change between the state
    /// before the first and after the last, if significant.
    public mutating func apply(_ messages: some Sequence<NetlinkMessage>) -> LinkChange? {
        let before = snapshot
        for message in messages { update(with: message) }
        return change(since: before)
    }

    /// Applies one message without computing a change (cheaper; for dumps,
    /// followed by ``change(since:)``).
    public mutating func update(with message: NetlinkMessage) {
        switch message.body {
        case .newLink(let link):
            // AF_BRIDGE messages describe bridge ports, not the interfaces themselves.
            guard link.family != AddressFamily.bridge else { return }
            var interface = interfaces[link.index]
                ?? Interface(index: link.index, name: "", flags: [], operationalState: nil)
            interface.flags = link.flags
            if let name = link.name { interface.name = name }
            if let state = link.operationalState { interface.operationalState = state }
            interfaces[link.index] = interface
        case .deleteLink(let link):
            // An AF_BRIDGE RTM_DELLINK means "left the bridge", not "deleted".
            guard link.family != AddressFamily.bridge else { return }
            interfaces[link.index] = nil
            if let index = UInt32(exactly: link.index) {
                addresses = addresses.filter { $0.key.interfaceIndex != index }
                defaultRoutes = defaultRoutes.filter { $0.outputInterface != index }
            }
        case .newAddress(let info):
            guard let key = Self.key(info) else { return }
            addresses[key] = AddressDetails(flags: info.flags, scope: info.scope)
        case .deleteAddress(let info):
            guard let key = Self.key(info) else { return }
            addresses[key] = nil
        case .newRoute(let route):
            guard route.isDefaultRoute else { return }
            defaultRoutes.insert(Self.key(route))
        case .deleteRoute(let route):
            guard route.isDefaultRoute else { return }
            defaultRoutes.remove(Self.key(route))
        case .done, .error, .noop, .overrun, .unsupported:
            break
        }
    }

    /// The significant change from `before` to now, if any: a state change,
    /// else (while routable) an address change, else a default-route change.
    public func change(since before: Snapshot) -> LinkChange? {
        let after = snapshot
        if before.state != after.state { return .stateChanged(from: before.state, to: after.state) }
        guard after.state == .routable else { return nil }
        if before.routableAddresses != after.routableAddresses { return .addressChanged }
        if before.defaultRoutes != after.defaultRoutes { return .defaultRouteChanged }
        return nil
    }

    /// Whether an interface counts: not loopback, and allowed by name.
    public func counts(_ interface: Interface) -> Bool {
        !interface.isLoopback && (allowedInterfaces.isEmpty || allowedInterfaces.contains(interface.name))
    }

    private static func key(_ info: AddressInfo) -> Address? {
        guard let bytes = info.localAddress else { return nil }
        return Address(interfaceIndex: info.interfaceIndex, family: info.family, bytes: bytes, prefixLength: info.prefixLength)
    }

    private static func key(_ route: RouteInfo) -> DefaultRoute {
        DefaultRoute(family: route.family, outputInterface: route.outputInterface, gateway: route.gateway, priority: route.priority)
    }

    /// Routable: usable (not tentative, DAD not failed), scope wider than link,
    /// and not link-local or loopback by prefix (169.254/16 is scope universe
    /// in the kernel, RFC 3927; fe80::/10 RFC 4291 §2.5.6; 127/8; ::1).
    static func isRoutable(_ address: Address, _ details: AddressDetails) -> Bool {
        guard details.flags & (AddressFlag.tentative | AddressFlag.dadFailed) == 0,
              details.scope < AddressScope.link else { return false }
        let b = address.bytes
        switch address.family {
        case AddressFamily.ipv4:
            guard b.count == 4 else { return false }
            return !(b[0] == 169 && b[1] == 254) && b[0] != 127 && b != [0, 0, 0, 0]
        case AddressFamily.ipv6:
            guard b.count == 16 else { return false }
            let linkLocal = b[0] == 0xFE && b[1] & 0xC0 == 0x80
            let unspecifiedOrLoopback = b[0..<15].allSatisfy { $0 == 0 } && b[15] <= 1
            return !linkLocal && !unspecifiedOrLoopback
        default:
            return false
        }
    }
}
