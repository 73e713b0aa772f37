internal import Glibc

/// One datagram to a Unix socket: how syncd talks to systemd's notification socket (sd_notify(3)) and to
/// journald's native protocol socket (systemd-journald.service(8)) without linking libsystemd, whose five
/// extra libraries cost the idle daemon 0.9 MiB of resident memory (docs/benchmarks.md, "Daemon memory").
public enum Datagram {
    /// Sends `bytes` as one datagram to the socket at `path` (a file system path, or `@name` for an address
    /// in the abstract namespace, as `$NOTIFY_SOCKET` may be). False when the address is unusable or the
    /// send failed (errno tells why), e.g. `EMSGSIZE` for a datagram larger than the socket accepts.
    public static func send(_ bytes: [UInt8], to path: String) -> Bool {
        guard let address = UnixSocketAddress(systemdSocket: path) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let sent = bytes.withUnsafeBytes { buffer in
            address.withSocketAddress { pointer, length in
                retryingEINTR { sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), pointer, length) }
            }
        }
        return sent == bytes.count
    }

    /// One entry in journald's native protocol: `KEY=value\n` for each field, or, when the value holds a
    /// line break, `KEY\n`, the value's length as a little-endian 64-bit integer, the value and `\n`.
    /// Each field is `KEY=value`; one without `=` is left out.
    public static func journalEntry(_ fields: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            let utf8 = Array(field.utf8)
            guard let equals = utf8.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let value = utf8[(equals + 1)...]
            if value.contains(UInt8(ascii: "\n")) {
                bytes += utf8[..<equals]
                bytes.append(UInt8(ascii: "\n"))
                var length = UInt64(value.count).littleEndian
                withUnsafeBytes(of: &length) { bytes += $0 }
                bytes += value
            } else {
                bytes += utf8
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }
}
