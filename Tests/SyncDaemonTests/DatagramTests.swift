import Glibc
import Testing
@testable import SyncSystem

/// The datagrams syncd sends systemd (notifications) and journald (native protocol entries), received on
/// real sockets.
@Suite("Datagram")
struct DatagramTests {
    /// A datagram socket bound at `path` (or `@name`), and what it receives.
    final class Receiver {
        let fd: Int32
        init?(_ path: String) {
            guard let address = UnixSocketAddress(systemdSocket: path) else { return nil }
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0, address.withSocketAddress({ bind(fd, $0, $1) }) == 0 else { return nil }
        }
        deinit { close(fd) }
        func receive() -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            return n > 0 ? Array(buffer.prefix(n)) : []
        }
    }

    func temporaryPath() -> String {
        var template = Array("/tmp/syncd-datagram-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { buffer -> String in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return "/tmp" }
            return String(cString: made)
        }
        return directory + "/notify"
    }

    @Test func aNotificationArrivesWholeAtAPathSocket() throws {
        let path = temporaryPath()
        defer { unlink(path); rmdir(String(path.dropLast("/notify".count))) }
        let receiver = try #require(Receiver(path))
        #expect(Datagram.send(Array("READY=1\nSTATUS=2 sources".utf8), to: path))
        #expect(receiver.receive() == Array("READY=1\nSTATUS=2 sources".utf8))
    }

    @Test func anAbstractAddressIsUsedAsSystemdNamesIt() throws {
        let name = "@syncd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try #require(Receiver(name))
        #expect(Datagram.send(Array("WATCHDOG=1".utf8), to: name))
        #expect(receiver.receive() == Array("WATCHDOG=1".utf8))
    }

    @Test func unusableAddressesAreRefusedNotGuessed() {
        #expect(!Datagram.send(Array("READY=1".utf8), to: ""))
        #expect(!Datagram.send(Array("READY=1".utf8), to: "relative/notify"))
        #expect(!Datagram.send(Array("READY=1".utf8), to: "@"))
        #expect(!Datagram.send(Array("READY=1".utf8), to: "/" + String(repeating: "x", count: 200)))
        // Nobody listens there: the send fails instead of pretending.
        #expect(!Datagram.send(Array("READY=1".utf8), to: "/nonexistent/syncd/notify"))
    }

    @Test func journalEntriesUseTheBinaryFormOnlyForValuesWithLineBreaks() {
        let entry = Datagram.journalEntry(["MESSAGE=one line", "NOTE=a\nb", "no equals sign", "EMPTY="])
        var expected = Array("MESSAGE=one line\n".utf8)
        expected += Array("NOTE\n".utf8) + [3, 0, 0, 0, 0, 0, 0, 0] + Array("a\nb\n".utf8)
        expected += Array("EMPTY=\n".utf8)
        #expect(entry == expected)
    }
}
