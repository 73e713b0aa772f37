import Foundation
@testable import SyncCore

/// Real rtnetlink datagrams captured in a scratch network namespace (see the
/// comment at the top of each file under Fixtures/), one datagram per line as hex.
enum NetlinkFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Every fixture's file name.
    static let allNames: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".hex") }.sorted()
    }()

    /// The datagrams of a fixture.
    static func datagrams(_ name: String) throws -> [[UInt8]] {
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return try text.split(separator: "\n").compactMap { line -> [UInt8]? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
            return try hexBytes(trimmed)
        }
    }

    /// The messages of a fixture, in order (every datagram must parse cleanly).
    static func messages(_ name: String) throws -> [NetlinkMessage] {
        try datagrams(name).flatMap { datagram -> [NetlinkMessage] in
            let result = NetlinkParser.parse(datagram)
            guard result.problems.isEmpty else { throw FixtureError.problems(name, result.problems) }
            return result.messages
        }
    }

    enum FixtureError: Error {
        case badHex(String)
        case problems(String, [NetlinkParseProblem])
    }

    private static func hexBytes(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw FixtureError.badHex(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { throw FixtureError.badHex(text) }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Builds netlink messages byte by byte (host byte order) for malformed-input tests.
struct NetlinkBytes {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v) { bytes.append(contentsOf: $0) } }
    mutating func pad() { while bytes.count % 4 != 0 { bytes.append(0) } }

    /// Appends a message: header with `length` (default: the real one) and `payload`.
    mutating func message(type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 7, length: UInt32? = nil, payload: [UInt8]) {
        u32(length ?? UInt32(16 + payload.count))
        u16(type)
        u16(flags)
        u32(sequence)
        u32(0)
        bytes.append(contentsOf: payload)
        pad()
    }

    /// An `ifinfomsg` payload followed by `attributes` (already encoded).
    static func link(index: Int32, flags: UInt32, attributes: [UInt8] = []) -> [UInt8] {
        var b = NetlinkBytes()
        b.u8(0); b.u8(0); b.u16(1)
        b.u32(UInt32(bitPattern: index))
        b.u32(flags)
        b.u32(0)
        return b.bytes + attributes
    }

    /// One attribute, padded.
    static func attribute(type: UInt16, value: [UInt8], length: UInt16? = nil) -> [UInt8] {
        var b = NetlinkBytes()
        b.u16(length ?? UInt16(4 + value.count))
        b.u16(type)
        b.bytes.append(contentsOf: value)
        b.pad()
        return b.bytes
    }
}
