import Testing
@testable import SyncCore

@Suite("NetlinkParser")
struct NetlinkParserTests {
    @Test(arguments: NetlinkFixtures.allNames)
    func everyFixtureParsesCleanly(name: String) throws {
        for datagram in try NetlinkFixtures.datagrams(name) {
            let result = NetlinkParser.parse(datagram)
            #expect(result.problems.isEmpty, "\(name): \(result.problems)")
            #expect(!result.messages.isEmpty)
            #expect(!result.messages.contains { if case .unsupported = $0.body { true } else { false } })
        }
    }

    @Test func linkDump() throws {
        let messages = try NetlinkFixtures.messages("dump-link.hex")
        #expect(messages.count == 4)
        let links = messages.compactMap { if case .newLink(let l) = $0.body { l } else { nil } }
        #expect(links.map(\.name) == ["lo", "veth1", "veth0"])
        #expect(links.map(\.index) == [1, 2, 3])

        let lo = links[0]
        #expect(lo.flags.contains([.up, .loopback, .running, .lowerUp]))
        #expect(lo.operationalState == .unknown)
        #expect(lo.carrier == true)
        #expect(lo.hardwareType == 772)  // ARPHRD_LOOPBACK

        let veth0 = links[2]
        #expect(veth0.flags.rawValue == 0x11043)
        #expect(!veth0.flags.contains(.loopback))
        #expect(veth0.operationalState == .up)
        #expect(veth0.carrier == true)
        #expect(veth0.family == 0)

        for message in messages.dropLast() {
            #expect(message.header.sequence == 42)
            #expect(message.header.flags & Netlink.flagMultipart != 0)
            #expect(message.header.type == Netlink.newLink)
            #expect(Int(message.header.length) >= 16)
        }
        #expect(messages.last?.body == .done)
        #expect(messages.last?.header.length == 20)
    }

    @Test func addressDump() throws {
        let messages = try NetlinkFixtures.messages("dump-addr.hex")
        let addresses = messages.compactMap { if case .newAddress(let a) = $0.body { a } else { nil } }
        #expect(addresses.count == 8)
        #expect(messages.last?.body == .done)

        let loopback = try #require(addresses.first)
        #expect(loopback.family == AddressFamily.ipv4)
        #expect(loopback.localAddress == [127, 0, 0, 1])
        #expect(loopback.prefixLength == 8)
        #expect(loopback.scope == 254)
        #expect(loopback.interfaceIndex == 1)

        let test = try #require(addresses.first { $0.local == [198, 18, 0, 1] })
        #expect(test.address == [198, 18, 0, 1])
        #expect(test.prefixLength == 24)
        #expect(test.scope == 0)
        #expect(test.interfaceIndex == 3)

        let global6 = try #require(addresses.first { $0.family == AddressFamily.ipv6 && $0.scope == 0 })
        #expect(global6.address == [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1])
        #expect(global6.local == nil)  // IPv6 sends IFA_ADDRESS only
        #expect(global6.prefixLength == 64)

        let linkLocal6 = addresses.filter { $0.family == AddressFamily.ipv6 && $0.scope == 253 }
        #expect(linkLocal6.count == 2)
        #expect(linkLocal6.allSatisfy { $0.address?.prefix(2) == [0xfe, 0x80] })
    }

    @Test func routeDump() throws {
        let messages = try NetlinkFixtures.messages("dump-route.hex")
        let routes = messages.compactMap { if case .newRoute(let r) = $0.body { r } else { nil } }
        #expect(routes.count == 21)
        let defaults = routes.filter(\.isDefaultRoute)
        #expect(defaults.count == 2)
        let v4 = try #require(defaults.first { $0.family == AddressFamily.ipv4 })
        #expect(v4.gateway == [198, 18, 0, 2])
        #expect(v4.outputInterface == 3)
        #expect(v4.table == 254)
        let v6 = try #require(defaults.first { $0.family == AddressFamily.ipv6 })
        #expect(v6.gateway == [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [2])
        #expect(v6.priority == 1024)
        // Local-table host routes are not default routes, even the /0-looking ones never appear.
        #expect(routes.filter { $0.table == 255 }.allSatisfy { !$0.isDefaultRoute })
    }

    @Test func errorReply() throws {
        let messages = try NetlinkFixtures.messages("error-enodev.hex")
        #expect(messages.count == 1)
        #expect(messages[0].body == .error(code: -19))  // -ENODEV
        #expect(messages[0].header.sequence == 42)
    }

    @Test func deletions() throws {
        let deleted = try NetlinkFixtures.messages("event-veth-deleted.hex")
        let names = deleted.compactMap { if case .deleteLink(let l) = $0.body { l.name } else { nil } }
        #expect(names == ["veth0", "veth1"])

        let address = try NetlinkFixtures.messages("event-addr-del.hex")
        #expect(address.first?.body == .deleteAddress(AddressInfo(
            family: AddressFamily.ipv4, prefixLength: 24, flags: 0x81, scope: 0, interfaceIndex: 3,  // PERMANENT|SECONDARY
            address: [198, 18, 0, 5], local: [198, 18, 0, 5])))

        let route = try NetlinkFixtures.messages("event-route-default-del.hex")
        guard case .deleteRoute(let r) = route.first?.body else { Issue.record("not a deleteRoute"); return }
        #expect(r.isDefaultRoute)
        #expect(r.gateway == [198, 18, 0, 2])
    }

    @Test func controlMessages() {
        var b = NetlinkBytes()
        b.message(type: Netlink.noop, payload: [])
        b.message(type: Netlink.done, payload: [0, 0, 0, 0])
        b.message(type: Netlink.overrun, payload: [])
        b.message(type: 0x1234, payload: [1, 2, 3])
        b.message(type: Netlink.error, payload: [0, 0, 0, 0] + Array(repeating: 0, count: 16))
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.problems.isEmpty)
        #expect(result.messages.map(\.body) == [.noop, .done, .overrun, .unsupported(type: 0x1234), .error(code: 0)])
    }

    @Test func headerLengthShorterThanHeaderEndsTheDatagram() {
        var b = NetlinkBytes()
        b.message(type: Netlink.noop, length: 8, payload: [])
        b.message(type: Netlink.noop, payload: [])
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.messages.isEmpty)
        #expect(result.problems == [NetlinkParseProblem(offset: 0, reason: .invalidLength(8))])
    }

    @Test func headerLengthBeyondBufferEndsTheDatagram() {
        var b = NetlinkBytes()
        b.message(type: Netlink.noop, payload: [])
        b.message(type: Netlink.noop, length: 4096, payload: [])
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.messages.map(\.body) == [.noop])
        #expect(result.problems == [NetlinkParseProblem(offset: 16, reason: .lengthBeyondBuffer(length: 4096, available: 16))])
    }

    @Test func truncatedHeaderIsReported() {
        let result = NetlinkParser.parse([1, 2, 3])
        #expect(result.messages.isEmpty)
        #expect(result.problems == [NetlinkParseProblem(offset: 0, reason: .truncatedHeader(available: 3))])
        #expect(NetlinkParser.parse([]) == NetlinkParseResult())
    }

    @Test func shortFixedPayloadSkipsOnlyThatMessage() {
        var b = NetlinkBytes()
        b.message(type: Netlink.newLink, payload: [0, 0, 1, 0, 2, 0, 0, 0])  // 8 of 16 bytes
        b.message(type: Netlink.newAddress, payload: [2, 24, 0])
        b.message(type: Netlink.newRoute, payload: [2, 0, 0, 0])
        b.message(type: Netlink.error, payload: [0xff, 0xff, 0xff, 0xff])
        b.message(type: Netlink.noop, payload: [])
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.messages.map(\.body) == [.noop])
        #expect(result.problems.map(\.reason) == [
            .truncatedPayload(type: Netlink.newLink, needed: 16, available: 8),
            .truncatedPayload(type: Netlink.newAddress, needed: 8, available: 3),
            .truncatedPayload(type: Netlink.newRoute, needed: 12, available: 4),
            .truncatedPayload(type: Netlink.error, needed: 20, available: 4),
        ])
    }

    @Test(arguments: [
        (UInt16(2), "rta_len below the attribute header"),
        (UInt16(200), "rta_len beyond the message"),
    ])
    func malformedAttributeSkipsOnlyThatMessage(length: UInt16, _ why: String) {
        var b = NetlinkBytes()
        let bad = NetlinkBytes.attribute(type: 3, value: Array("eth0\0".utf8), length: length)
        b.message(type: Netlink.newLink, payload: NetlinkBytes.link(index: 5, flags: 1, attributes: bad))
        let good = NetlinkBytes.attribute(type: 3, value: Array("eth1\0".utf8))
        b.message(type: Netlink.newLink, payload: NetlinkBytes.link(index: 6, flags: 1, attributes: good))
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.problems.map(\.reason) == [.malformedAttribute(messageType: Netlink.newLink, attributeType: 3)], "\(why)")
        #expect(result.messages.map(\.body) == [.newLink(LinkInfo(index: 6, flags: .up, name: "eth1"))])
    }

    @Test func tooShortAttributeValueSkipsTheMessage() {
        var b = NetlinkBytes()
        let operstate = NetlinkBytes.attribute(type: 16, value: [])  // u8 expected, none given
        b.message(type: Netlink.newLink, payload: NetlinkBytes.link(index: 5, flags: 1, attributes: operstate))
        let result = NetlinkParser.parse(b.bytes)
        #expect(result.messages.isEmpty)
        #expect(result.problems.map(\.reason) == [.malformedAttribute(messageType: Netlink.newLink, attributeType: 16)])
    }

    @Test func nestedFlagIsMaskedAndNameStopsAtNUL() {
        var b = NetlinkBytes()
        // NLA_F_NESTED (0x8000) set on IFLA_IFNAME; bytes after the NUL ignored.
        let name = NetlinkBytes.attribute(type: 3 | 0x8000, value: Array("wlan0\0junk".utf8))
        b.message(type: Netlink.newLink, payload: NetlinkBytes.link(index: 9, flags: 0, attributes: name))
        #expect(NetlinkParser.parse(b.bytes).messages.map(\.body) == [.newLink(LinkInfo(index: 9, flags: [], name: "wlan0"))])
    }

    /// A datagram placed at an odd address parses the same: reads are unaligned-safe.
    @Test(arguments: NetlinkFixtures.allNames)
    func misalignedBufferParsesTheSame(name: String) throws {
        for datagram in try NetlinkFixtures.datagrams(name) {
            let shifted = [0xAA] + datagram
            let expected = NetlinkParser.parse(datagram)
            let actual = shifted.withUnsafeBytes { NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: $0[1...])) }
            #expect(actual == expected)
        }
    }

    /// Every prefix of every captured datagram: no trap, and never more
    /// messages than the whole datagram had.
    @Test(arguments: NetlinkFixtures.allNames)
    func everyPrefixIsSafe(name: String) throws {
        for datagram in try NetlinkFixtures.datagrams(name) {
            let whole = NetlinkParser.parse(datagram).messages.count
            var tracker = LinkStateTracker()
            for end in 0..<datagram.count {
                let result = NetlinkParser.parse(Array(datagram[..<end]))
                #expect(result.messages.count <= whole)
                _ = tracker.apply(result.messages)
            }
        }
    }

    /// Random byte mutations of real datagrams (seeded, so failures reproduce).
    @Test func randomMutationsNeverTrap() throws {
        var generator = SplitMix64Jitter(seed: 0x5EED_2026)
        let datagrams = try NetlinkFixtures.allNames.flatMap { try NetlinkFixtures.datagrams($0) }
        var tracker = LinkStateTracker()
        var parsedSomething = 0
        for _ in 0..<3000 {
            var bytes = datagrams.randomElement(using: &generator)!
            let edits = Int.random(in: 1...8, using: &generator)
            for _ in 0..<edits {
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeLast(min(bytes.count - 1, Int.random(in: 0...16, using: &generator)))
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                default:
                    // Lengths are the interesting fields: hit one with an extreme value.
                    let at = Int.random(in: 0..<bytes.count, using: &generator)
                    bytes[at] = [0, 1, 3, 4, 0x7f, 0x80, 0xff].randomElement(using: &generator)!
                }
            }
            let result = NetlinkParser.parse(bytes)
            parsedSomething += result.messages.count
            if Bool.random(using: &generator) { tracker.reset() }
            _ = tracker.apply(result.messages)
        }
        #expect(parsedSomething > 0)
    }
}
