internal import Glibc

/// Splits a byte stream into NUL-terminated Varlink messages.
///
/// Bytes are appended as they arrive; `nextMessage()` yields each complete message (without
/// its NUL). A message that grows past `maxMessageSize` bytes without a NUL is refused with
/// `.messageTooLarge`; the connection should then be closed, since the stream cannot be resynchronised.
public struct VarlinkFramer: Sendable {
    /// The framer refuses a message longer than this (1 MiB by default, syncd(8) SECURITY).
    public let maxMessageSize: Int
    private var buffer: [UInt8] = []
    /// Where the next message starts in `buffer`.
    private var start = 0
    /// How far `buffer` has been searched for a NUL.
    private var scanned = 0

    /// A message exceeded the limit.
    public struct MessageTooLarge: Error, Sendable, Equatable {
        /// The limit in bytes.
        public let limit: Int
    }

    /// Creates a framer.
    public init(maxMessageSize: Int = 1 << 20) {
        self.maxMessageSize = maxMessageSize
    }

    /// Bytes received but not yet returned as messages.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Appends received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        // A message of megabytes (`GetStatus` of 10,000 sources: 2.7 MB) would be copied at each doubling of the
        // buffer, and each new buffer's pages faulted in again: past 64 KiB, room for the largest message allowed
        // is reserved once. That is address space only; the pages not written cost nothing.
        if buffer.count >= 64 << 10, buffer.count + bytes.underestimatedCount > buffer.capacity {
            buffer.reserveCapacity(Swift.max(buffer.count + bytes.underestimatedCount, Swift.min(maxMessageSize, 256 << 20) + (64 << 10)))
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, nil if none is complete yet; throws when the pending
    /// message is over the limit.
    public mutating func nextMessage() throws(MessageTooLarge) -> [UInt8]? {
        if let nul = firstNUL(from: scanned) {
            let message: [UInt8]
            if start == 0 && nul == buffer.count - 1 {
                // The buffer is exactly one message (a large reply, read whole): hand it over without a copy.
                buffer.removeLast()
                message = buffer
                buffer = []
                start = 0
                scanned = 0
                guard message.count <= maxMessageSize else { throw MessageTooLarge(limit: maxMessageSize) }
                return message
            }
            message = Array(buffer[start..<nul])
            start = nul + 1
            scanned = start
            compactIfWorthIt()
            guard message.count <= maxMessageSize else { throw MessageTooLarge(limit: maxMessageSize) }
            return message
        }
        scanned = buffer.count
        guard buffer.count - start <= maxMessageSize else { throw MessageTooLarge(limit: maxMessageSize) }
        return nil
    }

    /// The index of the first NUL at or after `offset` (memchr(3)).
    private func firstNUL(from offset: Int) -> Int? {
        guard offset < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes -> Int? in
            guard let base = bytes.baseAddress, let found = memchr(base + offset, 0, bytes.count - offset) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
    }

    private mutating func compactIfWorthIt() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 << 10)
            start = 0
            scanned = 0
        } else if start > 64 << 10, start * 2 > buffer.count {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
    }
}
