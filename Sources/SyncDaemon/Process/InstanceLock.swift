internal import Glibc
import SyncCore
import SyncEngine

/// Why `InstanceLock.acquire` failed.
public enum InstanceLockError: Error, Sendable, CustomStringConvertible {
    /// Another process holds the lock; `pid` is what it wrote into the file (nil if unreadable).
    case held(stateDirectory: String, pid: Int32?, userMode: Bool)
    /// The state directory or the lock file could not be created, opened or locked.
    case system(SystemError)
    /// The state directory (or a folder above it, or the lock file) is another user's or writable by others.
    case unsafe(UnsafeFolder)

    public var description: String {
        switch self {
        case .held(let directory, let pid, let userMode):
            let holder = pid.map { " (pid \($0))" } ?? ""
            let stop = userMode ? "systemctl --user stop syncd" : "systemctl stop syncd"
            return "another syncd is already using \(directory)\(holder); stop it first (\(stop))"
        case .system(let error):
            return error.description
        case .unsafe(let refusal):
            return refusal.description
        }
    }
}

/// The one-instance lock: an exclusive `flock(2)` on `STATE/syncd.lock`, held until the process exits.
///
/// Two processes on the same state directory (a second daemon, or `--once` next to a running daemon)
/// would both write the same databases and cache folders, so the second one must not start. The lock
/// covers the whole state directory, not one account: the account's own folder is erased on logout,
/// and all accounts of a state directory share one control socket. The file holds the holder's pid,
/// for the error message only; the lock itself is the `flock`, which the kernel drops when the holder
/// dies, so a crash never leaves a stale lock behind. The file is never deleted: unlinking a flock file
/// lets a third process lock a new file while the second still waits on the old one.
public final class InstanceLock: Sendable {
    /// The lock file's path.
    public let path: String
    private let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    /// Closing the descriptor releases the lock. Callers keep the lock alive for the whole run.
    deinit { close(fd) }

    /// Creates the state directory (0700) if needed and takes the lock without waiting.
    /// Throws `.held` when another process has it. The corresponding C calls are `open(2)` and `flock(2)`.
    public static func acquire(stateDirectory: String, userMode: Bool) throws(InstanceLockError) -> InstanceLock {
        do {
            try Directories.create(stateDirectory, mode: 0o700, kind: .state, parents: Directories.parentMode(userMode: userMode))
        } catch let refusal as UnsafeFolder {
            throw .unsafe(refusal)
        } catch {
            throw .system(error as? SystemError ?? SystemError("create directory \(stateDirectory)", code: EIO))
        }
        let path = stateDirectory + "/syncd.lock"
        // O_NOFOLLOW: the state directory is ours, a symlink planted there is not followed.
        let fd: Int32
        do {
            fd = try systemCall("open lock file \(path)") { openLockFile(path) }
        } catch {
            throw .system(error)
        }
        // A lock file another user owns was not made by syncd (docs/syncd.8.md, FILES): refused before it is used.
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = SystemError("read the status of \(path)")
            close(fd)
            throw .system(error)
        }
        do {
            try FolderCheck.check(file: info, path: path, kind: "lock file", mode: 0o600)
        } catch {
            close(fd)
            throw .unsafe(error)
        }
        guard retryingEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 else {
            let code = errno
            defer { close(fd) }
            guard code == EWOULDBLOCK else { throw .system(SystemError("lock \(path)", code: code)) }
            throw .held(stateDirectory: stateDirectory, pid: readPID(fd), userMode: userMode)
        }
        let lock = InstanceLock(path: path, fd: fd)
        // The pid first, so that a second process refused meanwhile names this one. Written over the last
        // holder's pid and cut to length: truncating to zero first would have ext4 flush the file when it is
        // closed (its replace-by-truncate heuristic), which every `syncd --once` paid at exit. Until then the file
        // holds the last holder's pid, which `readPID` drops as no longer running.
        var text = Array("\(getpid())\n".utf8)
        guard retryingEINTR({ pwrite(fd, &text, text.count, 0) }) == text.count, ftruncate(fd, off_t(text.count)) == 0 else {
            throw .system(SystemError("write pid to lock file \(path)"))
        }
        // The mode is enforced on an existing file too (an older or hand-made one). The file's owner is syncd's
        // user or root, as the state directory's is (checked above): root never runs on the service user's folders.
        _ = fchmod(fd, 0o600)
        return lock
    }

    /// Opens (creating) the lock file for reading and writing. A file of this user's that its mode makes
    /// unwritable (a hand-made 0400 one) gets the lock file's mode 0600 first, as any other existing one does.
    private static func openLockFile(_ path: String) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd < 0, errno == EACCES else { return fd }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), chmod(path, 0o600) == 0 else {
            errno = EACCES
            return -1
        }
        return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    }

    /// The pid of the holder, if the file names a running process: it is empty for a moment after the holder
    /// created it, and names the last holder (gone) until the new one has written its own.
    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = retryingEINTR { pread(fd, &buffer, buffer.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        guard let pid = Int32(text.trimmed()), pid > 0 else { return nil }
        // Signal 0 checks that the process exists; EPERM says it does, owned by someone else.
        return kill(pid, 0) == 0 || errno == EPERM ? pid : nil
    }
}
