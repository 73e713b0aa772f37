// A strict, bounds-checked decoder of rtnetlink datagrams (netlink(7),
// rtnetlink(7)). Every read is checked against the buffer first; reads are
// unaligned-safe because a corrupt length can put a message anywhere.
// Integers are in host byte order, as netlink defines them.

/// Decodes rtnetlink datagrams as received from a `NETLINK_ROUTE` socket.
public enum NetlinkParser {
    /// Decodes every message in one datagram.
    ///
    /// A message whose payload is malformed is skipped and reported; a header
    /// whose length cannot be trusted ends the datagram, since the following
    /// message boundaries are then unknown. Never traps, whatever the input.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> NetlinkParseResult {
        var result = NetlinkParseResult()
        let view = ByteView(bytes: bytes)
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= Netlink.headerSize,
                  let length = view.u32(at: offset), let type = view.u16(at: offset + 4),
                  let flags = view.u16(at: offset + 6), let sequence = view.u32(at: offset + 8),
                  let portID = view.u32(at: offset + 12)
            else {
                result.problems.append(.init(offset: offset, reason: .truncatedHeader(available: available)))
                break
            }
            guard length >= UInt32(Netlink.headerSize) else {
                result.problems.append(.init(offset: offset, reason: .invalidLength(length)))
                break
            }
            guard UInt64(length) <= UInt64(available) else {
                result.problems.append(.init(offset: offset, reason: .lengthBeyondBuffer(length: length, available: available)))
                break
            }
            let header = NetlinkMessageHeader(length: length, type: type, flags: flags, sequence: sequence, portID: portID)
            let payload = view.slice(offset + Netlink.headerSize, count: Int(length) - Netlink.headerSize)
            switch decodeBody(type: type, payload: payload) {
            case .success(let body):
                result.messages.append(NetlinkMessage(header: header, body: body))
            case .failure(let reason):
                result.problems.append(.init(offset: offset, reason: reason))
            }
            // NLMSG_NEXT: the next message starts at the aligned end of this one.
            // The last message's padding may be missing; that simply ends the loop.
            offset += aligned(Int(length), to: Netlink.messageAlignment)
        }
        return result
    }

    /// Decodes every message in one datagram held in an array.
    public static func parse(_ bytes: [UInt8]) -> NetlinkParseResult {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// Rounds `value` up to a multiple of `alignment` (`NLMSG_ALIGN`, `RTA_ALIGN`).
    static func aligned(_ value: Int, to alignment: Int) -> Int {
        (value + alignment - 1) & ~(alignment - 1)
    }

    private static func decodeBody(type: UInt16, payload: ByteView) -> Result<NetlinkMessage.Body, NetlinkParseProblem.Reason> {
        switch type {
        case Netlink.noop:
            return .success(.noop)
        case Netlink.done:
            // NLMSG_DONE carries an int (the dump's final status); tolerate its absence.
            return .success(.done)
        case Netlink.overrun:
            return .success(.overrun)
        case Netlink.error:
            guard payload.count >= Netlink.errorSize, let code = payload.i32(at: 0) else {
                return .failure(.truncatedPayload(type: type, needed: Netlink.errorSize, available: payload.count))
            }
            return .success(.error(code: code))
        case Netlink.newLink, Netlink.deleteLink:
            return decodeLink(type: type, payload: payload).map {
                type == Netlink.newLink ? .newLink($0) : .deleteLink($0)
            }
        case Netlink.newAddress, Netlink.deleteAddress:
            return decodeAddress(type: type, payload: payload).map {
                type == Netlink.newAddress ? .newAddress($0) : .deleteAddress($0)
            }
        case Netlink.newRoute, Netlink.deleteRoute:
            return decodeRoute(type: type, payload: payload).map {
                type == Netlink.newRoute ? .newRoute($0) : .deleteRoute($0)
            }
        default:
            return .success(.unsupported(type: type))
        }
    }

    /// `struct ifinfomsg` { u8 family; u8 pad; u16 type; i32 index; u32 flags; u32 change } + IFLA_*.
    private static func decodeLink(type: UInt16, payload: ByteView) -> Result<LinkInfo, NetlinkParseProblem.Reason> {
        guard payload.count >= Netlink.interfaceInfoSize,
              let family = payload.u8(at: 0), let hardwareType = payload.u16(at: 2),
              let index = payload.i32(at: 4), let flags = payload.u32(at: 8)
        else {
            return .failure(.truncatedPayload(type: type, needed: Netlink.interfaceInfoSize, available: payload.count))
        }
        var link = LinkInfo(family: family, hardwareType: hardwareType, index: index,
                            flags: InterfaceFlags(rawValue: flags), name: nil)
        let attributes = payload.slice(Netlink.interfaceInfoSize, count: payload.count - Netlink.interfaceInfoSize)
        let ok = forEachAttribute(in: attributes) { attribute, value in
            switch attribute {
            case LinkAttribute.name:
                link.name = value.cString()
            case LinkAttribute.operationalState:
                guard let raw = value.u8(at: 0) else { return false }
                link.operationalState = OperationalState(rawValue: raw)
            case LinkAttribute.carrier:
                guard let raw = value.u8(at: 0) else { return false }
                link.carrier = raw != 0
            default:
                break
            }
            return true
        }
        return ok.map { _ in link }.mapError { .malformedAttribute(messageType: type, attributeType: $0.type) }
    }

    /// `struct ifaddrmsg` { u8 family; u8 prefixlen; u8 flags; u8 scope; u32 index } + IFA_*.
    private static func decodeAddress(type: UInt16, payload: ByteView) -> Result<AddressInfo, NetlinkParseProblem.Reason> {
        guard payload.count >= Netlink.interfaceAddressSize,
              let family = payload.u8(at: 0), let prefixLength = payload.u8(at: 1),
              let flags = payload.u8(at: 2), let scope = payload.u8(at: 3), let index = payload.u32(at: 4)
        else {
            return .failure(.truncatedPayload(type: type, needed: Netlink.interfaceAddressSize, available: payload.count))
        }
        var address = AddressInfo(family: family, prefixLength: prefixLength, flags: UInt32(flags),
                                  scope: scope, interfaceIndex: index, address: nil)
        let attributes = payload.slice(Netlink.interfaceAddressSize, count: payload.count - Netlink.interfaceAddressSize)
        let ok = forEachAttribute(in: attributes) { attribute, value in
            switch attribute {
            case AddressAttribute.address:
                address.address = value.array()
            case AddressAttribute.local:
                address.local = value.array()
            case AddressAttribute.flags:
                guard let raw = value.u32(at: 0) else { return false }
                address.flags = raw
            default:
                break
            }
            return true
        }
        return ok.map { _ in address }.mapError { .malformedAttribute(messageType: type, attributeType: $0.type) }
    }

    /// `struct rtmsg` { u8 family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags } + RTA_*.
    private static func decodeRoute(type: UInt16, payload: ByteView) -> Result<RouteInfo, NetlinkParseProblem.Reason> {
        guard payload.count >= Netlink.routeSize,
              let family = payload.u8(at: 0), let destinationLength = payload.u8(at: 1),
              let table = payload.u8(at: 4), let routeType = payload.u8(at: 7)
        else {
            return .failure(.truncatedPayload(type: type, needed: Netlink.routeSize, available: payload.count))
        }
        var route = RouteInfo(family: family, destinationLength: destinationLength, table: UInt32(table),
                              type: routeType, outputInterface: nil)
        let attributes = payload.slice(Netlink.routeSize, count: payload.count - Netlink.routeSize)
        let ok = forEachAttribute(in: attributes) { attribute, value in
            switch attribute {
            case RouteAttribute.table:
                guard let raw = value.u32(at: 0) else { return false }
                route.table = raw
            case RouteAttribute.outputInterface:
                guard let raw = value.u32(at: 0) else { return false }
                route.outputInterface = raw
            case RouteAttribute.gateway:
                route.gateway = value.array()
            case RouteAttribute.priority:
                guard let raw = value.u32(at: 0) else { return false }
                route.priority = raw
            default:
                break
            }
            return true
        }
        return ok.map { _ in route }.mapError { .malformedAttribute(messageType: type, attributeType: $0.type) }
    }

    /// Walks `struct rtattr` { u16 len; u16 type } + value, each at an RTA_ALIGN'd
    /// offset (the RTA_OK/RTA_NEXT macros of rtnetlink(3)). `body` returns false
    /// when a value is too short for its type. Fails with the attribute type.
    private static func forEachAttribute(in attributes: ByteView, _ body: (UInt16, ByteView) -> Bool) -> Result<Void, AttributeError> {
        var offset = 0
        // Like RTA_OK, fewer than 4 trailing bytes cannot hold an attribute and end the walk.
        while attributes.count - offset >= Netlink.attributeHeaderSize {
            guard let length = attributes.u16(at: offset), let rawType = attributes.u16(at: offset + 2) else {
                return .failure(AttributeError(type: 0))
            }
            let type = rawType & Netlink.attributeTypeMask
            let length16 = Int(length)
            guard length16 >= Netlink.attributeHeaderSize, length16 <= attributes.count - offset else {
                return .failure(AttributeError(type: type))
            }
            let value = attributes.slice(offset + Netlink.attributeHeaderSize, count: length16 - Netlink.attributeHeaderSize)
            guard body(type, value) else { return .failure(AttributeError(type: type)) }
            offset += aligned(length16, to: Netlink.attributeAlignment)
        }
        return .success(())
    }
}

/// The type of a malformed attribute (an `Error` so it can travel in a `Result`).
struct AttributeError: Error {
    var type: UInt16
}

/// A bounds-checked window on raw bytes: every accessor returns nil rather than
/// reading outside the window.
struct ByteView {
    let bytes: UnsafeRawBufferPointer
    var start = 0
    var count: Int

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.count = bytes.count
    }

    private init(bytes: UnsafeRawBufferPointer, start: Int, count: Int) {
        self.bytes = bytes
        self.start = start
        self.count = count
    }

    /// A sub-window; clamped to this one.
    func slice(_ offset: Int, count length: Int) -> ByteView {
        let lower = min(max(offset, 0), count)
        let upper = min(max(length, 0), count - lower)
        return ByteView(bytes: bytes, start: start + lower, count: upper)
    }

    private func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T? {
        guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return nil }
        return bytes.loadUnaligned(fromByteOffset: start + offset, as: T.self)
    }

    func u8(at offset: Int) -> UInt8? { load(offset, as: UInt8.self) }
    func u16(at offset: Int) -> UInt16? { load(offset, as: UInt16.self) }
    func u32(at offset: Int) -> UInt32? { load(offset, as: UInt32.self) }
    func i32(at offset: Int) -> Int32? { load(offset, as: Int32.self) }

    /// The bytes as an array.
    func array() -> [UInt8] {
        guard count > 0 else { return [] }
        return Array(bytes[start..<(start + count)])
    }

    /// The bytes up to the first NUL (or all of them), decoded as UTF-8 with repair.
    func cString() -> String {
        let all = array()
        let end = all.firstIndex(of: 0) ?? all.endIndex
        return String(decoding: all[..<end], as: UTF8.self)
    }
}
