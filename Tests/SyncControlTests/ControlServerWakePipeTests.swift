import Foundation
import Glibc
import Testing
@testable import SyncControl

@Suite("ControlServer wake-up pipe")
struct ControlServerWakePipeTests {
    @Test("a wake after the server stopped never writes into a file that reused the pipe's fd number")
    func wakeAfterStopTouchesNoOtherFile() async throws {
        let fixture = try ControlServerFixture()
        let wakeFD = fixture.server.wakeFDs.write
        await fixture.stop()
        // The pipe is still the server's: its fd number is not free for a new file.
        #expect(fcntl(wakeFD, F_GETFD) >= 0)
        let file = fixture.directory + "-other"
        let fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        defer {
            close(fd)
            unlink(file)
        }
        #expect(fd >= 0 && fd != wakeFD)
        fixture.server.wake()
        var info = stat()
        #expect(fstat(fd, &info) == 0 && info.st_size == 0)
    }
}
