import Glibc
import SyncCore
import SyncSystem
import Testing

@Suite("SystemError and systemCall")
struct SystemErrorTests {
    @Test("systemCall throws the call's errno, and a wrapped error says 'Failed to' once")
    func failureCarriesErrnoOnce() {
        let path = "/nonexistent-syncd-test/file"
        do {
            _ = try systemCall("open \(path)") { open(path, O_RDONLY) }
            Issue.record("open of a missing path succeeded")
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.description == "Failed to open \(path): No such file or directory")
            let wrapped = "Failed to start: \(failureReason(error))"
            #expect(wrapped == "Failed to start: open \(path): No such file or directory")
        }
    }

    @Test("systemCall returns the call's result on success")
    func success() throws {
        let fd = try systemCall("open /dev/null") { open("/dev/null", O_RDONLY) }
        #expect(fd >= 0)
        close(fd)
    }
}
