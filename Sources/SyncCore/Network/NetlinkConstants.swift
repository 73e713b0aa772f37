// Kernel constants for rtnetlink, mirrored from <linux/netlink.h>,
// <linux/rtnetlink.h>, <linux/if_link.h>, <linux/if_addr.h> and <linux/if.h>
// so that this module stays pure Swift (no C imports). Values are part of the
// kernel's stable user-space ABI; see netlink(7) and rtnetlink(7).

/// Constants of the netlink and rtnetlink protocols (netlink(7), rtnetlink(7)).
public enum Netlink {
    // MARK: Framing (netlink(7))

    /// `NLMSG_ALIGNTO`: messages start on 4-byte boundaries.
    static let messageAlignment = 4
    /// `RTA_ALIGNTO`: attributes start on 4-byte boundaries.
    static let attributeAlignment = 4
    /// `sizeof(struct nlmsghdr)`: len u32, type u16, flags u16, seq u32, pid u32.
    static let headerSize = 16
    /// `sizeof(struct rtattr)`: len u16, type u16.
    static let attributeHeaderSize = 4
    /// `NLA_TYPE_MASK`: attribute type without `NLA_F_NESTED`/`NLA_F_NET_BYTEORDER`.
    static let attributeTypeMask: UInt16 = 0x3FFF

    // MARK: Control message types (netlink(7))

    /// `NLMSG_NOOP`: to be ignored.
    public static let noop: UInt16 = 1
    /// `NLMSG_ERROR`: an error or, with error 0, an acknowledgement.
    public static let error: UInt16 = 2
    /// `NLMSG_DONE`: ends a multipart (dump) reply.
    public static let done: UInt16 = 3
    /// `NLMSG_OVERRUN`: data lost (never sent by current kernels, kept for completeness).
    public static let overrun: UInt16 = 4

    // MARK: rtnetlink message types (rtnetlink(7))

    /// `RTM_NEWLINK`: an interface was created or changed.
    public static let newLink: UInt16 = 16
    /// `RTM_DELLINK`: an interface was removed.
    public static let deleteLink: UInt16 = 17
    /// `RTM_GETLINK`: request (with `NLM_F_DUMP`, a dump) of interfaces.
    public static let getLink: UInt16 = 18
    /// `RTM_NEWADDR`: an address was added or changed.
    public static let newAddress: UInt16 = 20
    /// `RTM_DELADDR`: an address was removed.
    public static let deleteAddress: UInt16 = 21
    /// `RTM_GETADDR`: request (dump) of addresses.
    public static let getAddress: UInt16 = 22
    /// `RTM_NEWROUTE`: a route was added or changed.
    public static let newRoute: UInt16 = 24
    /// `RTM_DELROUTE`: a route was removed.
    public static let deleteRoute: UInt16 = 25
    /// `RTM_GETROUTE`: request (dump) of routes.
    public static let getRoute: UInt16 = 26

    // MARK: Header flags (netlink(7))

    /// `NLM_F_MULTI`: part of a multipart reply ended by `NLMSG_DONE`.
    public static let flagMultipart: UInt16 = 0x2
    /// `NLM_F_DUMP_INTR`: the dump was interrupted by a change and may be inconsistent.
    public static let flagDumpInterrupted: UInt16 = 0x10

    // MARK: Sizes of the fixed rtnetlink payload structs (rtnetlink(7))

    /// `sizeof(struct ifinfomsg)`.
    static let interfaceInfoSize = 16
    /// `sizeof(struct ifaddrmsg)`.
    static let interfaceAddressSize = 8
    /// `sizeof(struct rtmsg)`.
    static let routeSize = 12
    /// `sizeof(struct nlmsgerr)`: error i32 followed by the offending `nlmsghdr`.
    static let errorSize = 20
}

/// `IFLA_*` link attributes (rtnetlink(7), <linux/if_link.h>).
enum LinkAttribute {
    /// `IFLA_IFNAME`: NUL-terminated interface name.
    static let name: UInt16 = 3
    /// `IFLA_OPERSTATE`: u8, RFC 2863 operational state.
    static let operationalState: UInt16 = 16
    /// `IFLA_CARRIER`: u8, 1 while the lower layer has carrier.
    static let carrier: UInt16 = 33
}

/// `IFA_*` address attributes (rtnetlink(7), <linux/if_addr.h>).
enum AddressAttribute {
    /// `IFA_ADDRESS`: the prefix address (the peer on point-to-point links).
    static let address: UInt16 = 1
    /// `IFA_LOCAL`: the local address (IPv4; differs from `IFA_ADDRESS` on point-to-point links).
    static let local: UInt16 = 2
    /// `IFA_FLAGS`: u32 flags, superseding the 8-bit `ifa_flags`.
    static let flags: UInt16 = 8
}

/// `RTA_*` route attributes (rtnetlink(7), <linux/rtnetlink.h>).
enum RouteAttribute {
    /// `RTA_OIF`: u32 output interface index.
    static let outputInterface: UInt16 = 4
    /// `RTA_GATEWAY`: gateway address.
    static let gateway: UInt16 = 5
    /// `RTA_PRIORITY`: u32 route metric.
    static let priority: UInt16 = 6
    /// `RTA_TABLE`: u32 routing table id, superseding the 8-bit `rtm_table`.
    static let table: UInt16 = 15
}

/// Interface flags (`IFF_*`, netdevice(7), <linux/if.h>).
public struct InterfaceFlags: OptionSet, Hashable, Sendable {
    /// The raw `ifi_flags` value.
    public let rawValue: UInt32
    /// Creates flags from a raw `ifi_flags` value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `IFF_UP`: administratively up.
    public static let up = InterfaceFlags(rawValue: 0x1)
    /// `IFF_LOOPBACK`: a loopback interface.
    public static let loopback = InterfaceFlags(rawValue: 0x8)
    /// `IFF_RUNNING`: operationally up (RFC 2863 "up").
    public static let running = InterfaceFlags(rawValue: 0x40)
    /// `IFF_LOWER_UP`: the driver signals carrier.
    public static let lowerUp = InterfaceFlags(rawValue: 0x1_0000)
}

/// RFC 2863 operational state, `IFLA_OPERSTATE` (`IF_OPER_*`, <linux/if.h>;
/// kernel Documentation/networking/operstates.rst).
public enum OperationalState: UInt8, Hashable, Sendable {
    /// `IF_OPER_UNKNOWN`: the driver does not track it (e.g. loopback, some tunnels).
    case unknown = 0
    /// `IF_OPER_NOTPRESENT`.
    case notPresent = 1
    /// `IF_OPER_DOWN`.
    case down = 2
    /// `IF_OPER_LOWERLAYERDOWN`.
    case lowerLayerDown = 3
    /// `IF_OPER_TESTING`.
    case testing = 4
    /// `IF_OPER_DORMANT`: e.g. Wi-Fi waiting for authentication.
    case dormant = 5
    /// `IF_OPER_UP`.
    case up = 6
}

/// Address families used in rtnetlink payloads (<sys/socket.h>).
public enum AddressFamily {
    /// `AF_INET`.
    public static let ipv4: UInt8 = 2
    /// `AF_INET6`.
    public static let ipv6: UInt8 = 10
    /// `AF_BRIDGE`: link messages about bridge ports, not about interfaces themselves.
    public static let bridge: UInt8 = 7
}

/// Address scopes (`RT_SCOPE_*`, rtnetlink(7)).
enum AddressScope {
    /// `RT_SCOPE_UNIVERSE`: global.
    static let universe: UInt8 = 0
    /// `RT_SCOPE_LINK`: valid on this link only.
    static let link: UInt8 = 253
    /// `RT_SCOPE_HOST`: valid on this host only.
    static let host: UInt8 = 254
}

/// `IFA_F_*` address flags (<linux/if_addr.h>).
enum AddressFlag {
    /// `IFA_F_DADFAILED`: duplicate address detection failed; unusable.
    static let dadFailed: UInt32 = 0x08
    /// `IFA_F_TENTATIVE`: duplicate address detection still running; not yet usable.
    static let tentative: UInt32 = 0x40
}

/// Routing tables and route types (rtnetlink(7)).
enum RouteConstant {
    /// `RT_TABLE_MAIN`.
    static let mainTable: UInt32 = 254
    /// `RTN_UNICAST`: a gateway or direct route.
    static let unicast: UInt8 = 1
}
