/// The aggregate verdict on the machine's network links, over the interfaces
/// `[Network] Interfaces=` allows (all non-loopback ones when empty).
///
/// The raw values appear in status JSON and must not change.
public enum LinkState: String, Hashable, Sendable, CaseIterable {
    /// No allowed interface is up with carrier.
    case none
    /// Some allowed interface is up with carrier, but none has a routable address.
    case carrier
    /// Some allowed interface is up with carrier and has a routable address
    /// (IPv4 outside 169.254/16, IPv6 global scope outside fe80::/10).
    case routable

    /// True when sources can be expected to be reachable: the daemon is online.
    public var isOnline: Bool { self == .routable }
}

/// A significant change in link state, as reported by ``LinkStateTracker/apply(_:)``.
///
/// syncd(8) GUARANTEES 5: these are hints. The daemon schedules a debounced refresh when
/// ``schedulesRefresh`` is true and goes offline when the new state is not
/// ``LinkState/routable``; only a real request decides whether data is good.
public enum LinkChange: Hashable, Sendable {
    /// The aggregate state changed.
    case stateChanged(from: LinkState, to: LinkState)
    /// While routable, the set of routable addresses on counted interfaces changed.
    case addressChanged
    /// While routable (and with the addresses unchanged), the set of default
    /// routes in the main table changed.
    case defaultRouteChanged

    /// True when the change should schedule a (debounced) refresh: the state
    /// became routable, or an address or default route changed while routable.
    public var schedulesRefresh: Bool {
        switch self {
        case .stateChanged(_, let to): to == .routable
        case .addressChanged, .defaultRouteChanged: true
        }
    }
}
