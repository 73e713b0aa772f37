// The link monitor's NETLINK_ROUTE socket: each system call wrapped once,
// EINTR retried, errors as SystemError values (netlink(7), poll(2), recv(2)).
internal import CShim
internal import Glibc
import SyncEngine

/// A subscribed `NETLINK_ROUTE` socket plus the stop pipe the monitor thread
/// also waits on. Used by the monitor thread only.
struct NetlinkSocket {
    /// What one wait for a datagram ended with.
    enum Received {
        /// A datagram from the kernel; valid until the next ``receive(timeoutMilliseconds:)``.
        case datagram(UnsafeRawBufferPointer)
        /// The stop pipe became readable.
        case stopped
        /// Nothing arrived in time.
        case timedOut
        /// The kernel dropped messages (`ENOBUFS`), or a datagram did not fit the buffer.
        case lostEvents
        /// A system call failed for a reason that retrying will not fix.
        case failed(SystemError)
    }

    let fd: Int32
    let stopFD: Int32
    let logger: Logger
    private let buffer: UnsafeMutableRawBufferPointer

    init(fd: Int32, stopFD: Int32, logger: Logger) {
        self.fd = fd
        self.stopFD = stopFD
        self.logger = logger
        buffer = .allocate(byteCount: LinkMonitor.bufferSize, alignment: 8)
    }

    /// Closes the socket and frees the buffer.
    func close() {
        _ = Glibc.close(fd)
        buffer.deallocate()
    }

    /// Sets the receive queue size (setsockopt(2) `SO_RCVBUF`): larger than the
    /// default so bursts of notifications (many routes at once) overflow less
    /// often; the kernel caps it at `net.core.rmem_max`. Failing only means
    /// more re-dumps.
    func setReceiveQueueSize(_ bytes: Int32) {
        var size = bytes
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) < 0 {
            logger.debug("Failed to enlarge the netlink receive buffer: \(SystemError("set SO_RCVBUF").reason), ignoring")
        }
    }

    /// Sends an `NLM_F_REQUEST|NLM_F_DUMP` request for `type` (`RTM_GETLINK`, …).
    /// Returns 0 or an errno value (`EBUSY` while an earlier dump still runs).
    func requestDump(type: UInt16, sequence: UInt32) -> Int32 {
        -retryingMinusEINTR { cshim_netlink_request_dump(fd, type, sequence) }
    }

    /// Waits for the next datagram from the kernel, the stop pipe, or the
    /// timeout (-1: none). Datagrams from other user-space ports are dropped.
    func receive(timeoutMilliseconds: Int32) -> Received {
        // Try recv(2) before sleeping in poll(2): the kernel continues a dump
        // that paused on a full queue only from inside recvmsg (netlink_recvmsg
        // calls netlink_dump), so after ENOBUFS mid-dump there may be nothing
        // to poll for until we ask. The stop pipe is checked first, without waiting.
        var wait: Int32 = 0
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            let ready = retryingEINTR { poll(&fds, 2, wait) }
            if ready < 0 { return .failed(SystemError("poll netlink socket")) }
            if fds[1].revents != 0 { return .stopped }
            if ready == 0 && wait != 0 { return .timedOut }

            var address = sockaddr_storage()
            var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            // MSG_TRUNC: return the datagram's real length even if it did not fit (netlink(7)).
            let count = withUnsafeMutablePointer(to: &address) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    retryingEINTR { recvfrom(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC), pointer, &addressLength) }
                }
            }
            if count < 0 {
                switch errno {
                case EAGAIN:
                    wait = timeoutMilliseconds  // nothing queued: now sleep
                    continue
                case ENOBUFS: return .lostEvents
                default: return .failed(SystemError("receive from netlink socket"))
                }
            }
            if count > buffer.count {
                logger.warning("Netlink datagram of \(count) bytes does not fit the \(buffer.count)-byte buffer, re-reading link state")
                return .lostEvents
            }
            guard Self.senderPort(address) == 0 else {
                logger.debug("Ignoring a netlink datagram from user-space port \(Self.senderPort(address) ?? 0)")
                continue
            }
            return .datagram(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// The sender's `nl_pid` from a `struct sockaddr_nl` { u16 family; u16 pad;
    /// u32 pid; u32 groups } (netlink(7)): 0 is the kernel. Read by offset
    /// because Swift's Glibc module does not import <linux/netlink.h>.
    static func senderPort(_ address: sockaddr_storage) -> UInt32? {
        guard Int32(address.ss_family) == AF_NETLINK else { return nil }
        return withUnsafeBytes(of: address) { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self) }
    }
}
