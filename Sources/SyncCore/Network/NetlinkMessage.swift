// Decoded rtnetlink messages: only the fields the link monitor needs
// (rtnetlink(7)); everything else in a message is skipped.

/// `struct nlmsghdr` (netlink(7)).
public struct NetlinkMessageHeader: Hashable, Sendable {
    /// `nlmsg_len`: length of the message including this header.
    public var length: UInt32
    /// `nlmsg_type`.
    public var type: UInt16
    /// `nlmsg_flags` (`NLM_F_*`).
    public var flags: UInt16
    /// `nlmsg_seq`: the request's sequence number in replies; the triggering
    /// request's (or 0) in notifications.
    public var sequence: UInt32
    /// `nlmsg_pid`: the sending port id.
    public var portID: UInt32

    /// Creates a header.
    public init(length: UInt32, type: UInt16, flags: UInt16, sequence: UInt32, portID: UInt32) {
        self.length = length
        self.type = type
        self.flags = flags
        self.sequence = sequence
        self.portID = portID
    }

    /// `NLM_F_DUMP_INTR`: the dump this message belongs to was interrupted by a
    /// change and may be inconsistent; dump again.
    public var isDumpInterrupted: Bool { flags & Netlink.flagDumpInterrupted != 0 }
}

/// An `RTM_NEWLINK`/`RTM_DELLINK` payload: `struct ifinfomsg` plus attributes.
public struct LinkInfo: Hashable, Sendable {
    /// `ifi_family` (`AF_UNSPEC` for interfaces, `AF_BRIDGE` for bridge-port messages).
    public var family: UInt8
    /// `ifi_type` (`ARPHRD_*`).
    public var hardwareType: UInt16
    /// `ifi_index`.
    public var index: Int32
    /// `ifi_flags`.
    public var flags: InterfaceFlags
    /// `IFLA_IFNAME`, if present.
    public var name: String?
    /// `IFLA_OPERSTATE`, if present and a known value.
    public var operationalState: OperationalState?
    /// `IFLA_CARRIER`, if present.
    public var carrier: Bool?

    /// Creates a link payload.
    public init(family: UInt8 = 0, hardwareType: UInt16 = 1, index: Int32, flags: InterfaceFlags,
                name: String?, operationalState: OperationalState? = nil, carrier: Bool? = nil) {
        self.family = family
        self.hardwareType = hardwareType
        self.index = index
        self.flags = flags
        self.name = name
        self.operationalState = operationalState
        self.carrier = carrier
    }
}

/// An `RTM_NEWADDR`/`RTM_DELADDR` payload: `struct ifaddrmsg` plus attributes.
public struct AddressInfo: Hashable, Sendable {
    /// `ifa_family`.
    public var family: UInt8
    /// `ifa_prefixlen`.
    public var prefixLength: UInt8
    /// Address flags: `IFA_FLAGS` if present, else the 8-bit `ifa_flags`.
    public var flags: UInt32
    /// `ifa_scope` (`RT_SCOPE_*`).
    public var scope: UInt8
    /// `ifa_index`: the interface.
    public var interfaceIndex: UInt32
    /// `IFA_ADDRESS`, if present.
    public var address: [UInt8]?
    /// `IFA_LOCAL`, if present.
    public var local: [UInt8]?

    /// Creates an address payload.
    public init(family: UInt8, prefixLength: UInt8, flags: UInt32 = 0, scope: UInt8,
                interfaceIndex: UInt32, address: [UInt8]?, local: [UInt8]? = nil) {
        self.family = family
        self.prefixLength = prefixLength
        self.flags = flags
        self.scope = scope
        self.interfaceIndex = interfaceIndex
        self.address = address
        self.local = local
    }

    /// The interface's own address: `IFA_LOCAL` when present (it differs from
    /// `IFA_ADDRESS` only on point-to-point links, where `IFA_ADDRESS` is the
    /// peer; rtnetlink(7)), else `IFA_ADDRESS`.
    public var localAddress: [UInt8]? { local ?? address }
}

/// An `RTM_NEWROUTE`/`RTM_DELROUTE` payload: `struct rtmsg` plus attributes.
public struct RouteInfo: Hashable, Sendable {
    /// `rtm_family`.
    public var family: UInt8
    /// `rtm_dst_len`: destination prefix length; 0 for a default route.
    public var destinationLength: UInt8
    /// `RTA_TABLE` if present, else `rtm_table`.
    public var table: UInt32
    /// `rtm_type` (`RTN_*`).
    public var type: UInt8
    /// `RTA_OIF`, if present.
    public var outputInterface: UInt32?
    /// `RTA_GATEWAY`, if present.
    public var gateway: [UInt8]?
    /// `RTA_PRIORITY` (metric), if present.
    public var priority: UInt32?

    /// Creates a route payload.
    public init(family: UInt8, destinationLength: UInt8, table: UInt32, type: UInt8,
                outputInterface: UInt32?, gateway: [UInt8]? = nil, priority: UInt32? = nil) {
        self.family = family
        self.destinationLength = destinationLength
        self.table = table
        self.type = type
        self.outputInterface = outputInterface
        self.gateway = gateway
        self.priority = priority
    }

    /// A unicast default route (`dst_len` 0) in the main table.
    public var isDefaultRoute: Bool {
        destinationLength == 0 && table == RouteConstant.mainTable && type == RouteConstant.unicast
    }
}

/// One decoded netlink message.
public struct NetlinkMessage: Hashable, Sendable {
    /// The message's header.
    public var header: NetlinkMessageHeader
    /// The decoded payload.
    public var body: Body

    /// Creates a message.
    public init(header: NetlinkMessageHeader, body: Body) {
        self.header = header
        self.body = body
    }

    /// What a message says.
    public enum Body: Hashable, Sendable {
        /// `RTM_NEWLINK`.
        case newLink(LinkInfo)
        /// `RTM_DELLINK`.
        case deleteLink(LinkInfo)
        /// `RTM_NEWADDR`.
        case newAddress(AddressInfo)
        /// `RTM_DELADDR`.
        case deleteAddress(AddressInfo)
        /// `RTM_NEWROUTE`.
        case newRoute(RouteInfo)
        /// `RTM_DELROUTE`.
        case deleteRoute(RouteInfo)
        /// `NLMSG_DONE`: the end of a dump.
        case done
        /// `NLMSG_ERROR`: `code` is a negative errno, or 0 for an acknowledgement.
        case error(code: Int32)
        /// `NLMSG_NOOP`.
        case noop
        /// `NLMSG_OVERRUN`: data was lost.
        case overrun
        /// A well-formed message of a type this parser does not decode.
        case unsupported(type: UInt16)
    }
}
