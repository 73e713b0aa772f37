/// Why the parser skipped part of a datagram. Malformed input is reported,
/// never trapped on: the kernel should not send any of these, so each one
/// means a bug or corruption worth logging.
public struct NetlinkParseProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Error, Hashable, Sendable {
        /// Fewer bytes remained than a `nlmsghdr` needs; the rest of the datagram was dropped.
        case truncatedHeader(available: Int)
        /// `nlmsg_len` is smaller than the header itself; the rest of the datagram was dropped.
        case invalidLength(UInt32)
        /// `nlmsg_len` runs past the end of the datagram; the rest of the datagram was dropped.
        case lengthBeyondBuffer(length: UInt32, available: Int)
        /// The message is too short for its fixed payload struct; the message was skipped.
        case truncatedPayload(type: UInt16, needed: Int, available: Int)
        /// An attribute's `rta_len` is impossible or its value too short; the message was skipped.
        case malformedAttribute(messageType: UInt16, attributeType: UInt16)
    }

    /// Byte offset, within the datagram, of the message concerned.
    public var offset: Int
    /// What was wrong.
    public var reason: Reason

    /// Creates a problem report.
    public init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .truncatedHeader(let available):
            "netlink message at offset \(offset): only \(available) bytes left for a 16-byte header, ignoring the rest of the datagram"
        case .invalidLength(let length):
            "netlink message at offset \(offset): length \(length) is shorter than its header, ignoring the rest of the datagram"
        case .lengthBeyondBuffer(let length, let available):
            "netlink message at offset \(offset): length \(length) exceeds the \(available) bytes left, ignoring the rest of the datagram"
        case .truncatedPayload(let type, let needed, let available):
            "netlink message type \(type) at offset \(offset): payload of \(available) bytes is shorter than \(needed), skipping it"
        case .malformedAttribute(let type, let attribute):
            "netlink message type \(type) at offset \(offset): malformed attribute \(attribute), skipping the message"
        }
    }
}

/// The messages decoded from one datagram, and what was skipped.
public struct NetlinkParseResult: Hashable, Sendable {
    /// Decoded messages, in datagram order.
    public var messages: [NetlinkMessage]
    /// Skipped messages or datagram tails, in datagram order.
    public var problems: [NetlinkParseProblem]

    /// Creates a result.
    public init(messages: [NetlinkMessage] = [], problems: [NetlinkParseProblem] = []) {
        self.messages = messages
        self.problems = problems
    }
}
