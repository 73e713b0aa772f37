#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import SyncDaemon

@Suite("InstanceLock")
struct InstanceLockTests {
    /// A fresh directory; the state directory is created below it by `acquire`.
    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/syncd-lock-test.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return try #require(created.map { String(cString: $0) })
    }

    static func contents(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = fread(&buffer, 1, buffer.count, file)
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    @Test func createsTheStateDirectoryAndAPrivateLockFileWithThePID() throws {
        let root = try Self.temporaryDirectory()
        let state = root + "/state"
        let lock = try InstanceLock.acquire(stateDirectory: state, userMode: false)
        #expect(lock.path == state + "/syncd.lock")
        var info = stat()
        #expect(stat(state, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(lock.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(Self.contents(lock.path) == "\(getpid())\n")
        withExtendedLifetime(lock) {}
        unlink(state + "/syncd.lock")
        rmdir(state)
        rmdir(root)
    }

    /// A file an earlier holder left (a longer pid, stray bytes) is overwritten and cut to the new pid exactly.
    @Test func aLeftOverLockFileHoldsOnlyTheNewPID() throws {
        let root = try Self.temporaryDirectory()
        let path = root + "/syncd.lock"
        let old = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(old >= 0)
        let leftOver = Array("4194303123\nstray bytes an older writer left\n".utf8)
        #expect(write(old, leftOver, leftOver.count) == leftOver.count)
        close(old)
        let lock = try InstanceLock.acquire(stateDirectory: root, userMode: false)
        #expect(Self.contents(path) == "\(getpid())\n")
        withExtendedLifetime(lock) {}
        unlink(path)
        rmdir(root)
    }

    @Test(arguments: [(false, "systemctl stop syncd"), (true, "systemctl --user stop syncd")])
    func aSecondHolderIsRefusedWithThePIDAndTheLockSurvives(userMode: Bool, stop: String) throws {
        let root = try Self.temporaryDirectory()
        var first: InstanceLock? = try InstanceLock.acquire(stateDirectory: root, userMode: userMode)
        // flock(2) locks belong to the open file description: a second open in this process conflicts too.
        do {
            _ = try InstanceLock.acquire(stateDirectory: root, userMode: userMode)
            Issue.record("a second lock was granted")
        } catch {
            #expect(error.description == "another syncd is already using \(root) (pid \(getpid())); stop it first (\(stop))")
        }
        // The refused attempt neither released the lock nor rewrote the file.
        #expect(Self.contents(root + "/syncd.lock") == "\(getpid())\n")
        #expect(throws: InstanceLockError.self) { _ = try InstanceLock.acquire(stateDirectory: root, userMode: userMode) }
        // Releasing it (the process ending) lets the next one in; the file was never deleted.
        withExtendedLifetime(first) {}
        first = nil
        #expect(access(root + "/syncd.lock", F_OK) == 0)
        let second = try InstanceLock.acquire(stateDirectory: root, userMode: userMode)
        withExtendedLifetime(second) {}
        unlink(root + "/syncd.lock")
        rmdir(root)
    }

    /// A holder between its `flock` and writing its pid: the file is empty (a new one) or still names the last
    /// holder, which has exited. Neither, nor a pid no process could have, is named as the holder.
    @Test(arguments: ["", "exited", "\(Int32.max)\n"])
    func noPIDIsNamedButARunningHolders(content: String) throws {
        let root = try Self.temporaryDirectory()
        let path = root + "/syncd.lock"
        var text = content
        if content == "exited" {
            // A process that has run and been reaped: its pid names no one now.
            var pid = pid_t()
            var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            defer { free(arguments[0]) }
            #expect(posix_spawn(&pid, "/bin/true", nil, nil, &arguments, nil) == 0)
            var status: Int32 = 0
            #expect(waitpid(pid, &status, 0) == pid)
            #expect(kill(pid, 0) != 0)
            text = "\(pid)\n"
        }
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        #expect(fd >= 0 && write(fd, text, text.utf8.count) == text.utf8.count && flock(fd, LOCK_EX) == 0)
        do {
            _ = try InstanceLock.acquire(stateDirectory: root, userMode: false)
            Issue.record("a second lock was granted")
        } catch {
            #expect(error.description == "another syncd is already using \(root); stop it first (systemctl stop syncd)")
        }
        close(fd)
        unlink(path)
        rmdir(root)
    }

    @Test func anUnusableStateDirectoryIsASystemError() throws {
        let root = try Self.temporaryDirectory()
        // A file where the state directory should be.
        let file = root + "/state"
        close(open(file, O_WRONLY | O_CREAT, 0o600))
        do {
            _ = try InstanceLock.acquire(stateDirectory: file, userMode: false)
            Issue.record("a lock was granted in a file")
        } catch {
            guard case .system(let cause) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(cause.code == ENOTDIR)
            #expect(error.description == "Failed to use \(file) as a directory: \(String(cString: strerror(ENOTDIR)))")
        }
        unlink(file)
        rmdir(root)
    }
}

/// Needs root (make test runs it as root; make check leaves it out by name).
@Suite("InstanceLock as root", .system)
struct InstanceLockRootTests {
    /// Root does not run on a state directory another user owns, the service's user's included (only syncd's
    /// effective user and root count, docs/syncd.8.md FILES): nothing is created there, no lock file.
    @Test func rootRefusesAStateDirectoryAnotherUserOwns() throws {
        let root = try InstanceLockTests.temporaryDirectory()
        let state = root + "/state"
        #expect(mkdir(state, 0o700) == 0)
        #expect(chown(state, 65534, 65534) == 0)  // as if the service's user owned it
        do {
            _ = try InstanceLock.acquire(stateDirectory: state, userMode: false)
            Issue.record("acquired a lock in a folder uid 65534 owns")
        } catch {
            guard case .unsafe(let refusal) = error else { Issue.record("unexpected \(error)"); return }
            #expect(refusal.problem == .foreignOwner(uid: 65534) && refusal.path == state && refusal.parent == nil)
            #expect(error.description.hasPrefix("Failed to use state directory \(state): owned by uid 65534"))
        }
        var info = stat()
        #expect(lstat(state + "/syncd.lock", &info) != 0)
        rmdir(state)
        rmdir(root)
    }

    /// A lock file another user owns in syncd's own state directory is refused before it is locked or written.
    @Test func aLockFileAnotherUserOwnsIsRefused() throws {
        let root = try InstanceLockTests.temporaryDirectory()
        let state = root + "/state"
        #expect(mkdir(state, 0o700) == 0)
        let fd = open(state + "/syncd.lock", O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0 && write(fd, "12345\n", 6) == 6 && fchown(fd, 65534, 65534) == 0)
        close(fd)
        do {
            _ = try InstanceLock.acquire(stateDirectory: state, userMode: false)
            Issue.record("locked a lock file uid 65534 owns")
        } catch {
            guard case .unsafe(let refusal) = error else { Issue.record("unexpected \(error)"); return }
            #expect(refusal.kind == "lock file" && refusal.path == state + "/syncd.lock" && refusal.problem == .foreignOwner(uid: 65534))
        }
        #expect(InstanceLockTests.contents(state + "/syncd.lock") == "12345\n")  // not written
        unlink(state + "/syncd.lock")
        rmdir(state)
        rmdir(root)
    }
}
