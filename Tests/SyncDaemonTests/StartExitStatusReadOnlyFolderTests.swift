#if canImport(Glibc)
import Glibc
#endif
import SyncCore
import SyncSystem
import Testing
@testable import SyncDaemon

/// A start that fails on a read-only folder (docs/syncd.8.md, EXIT STATUS): under syncd.service that is the unit's
/// ProtectSystem=strict, and the message says how to make the folder writable for it.
@Suite("StartExitStatus read-only folder")
struct StartExitStatusReadOnlyFolderTests {
    static let advice = "under syncd.service only the unit's own StateDirectory=, CacheDirectory= and RuntimeDirectory= are "
        + "writable (ProtectSystem=strict): add ReadWritePaths=/srv/syncd-state with 'systemctl edit syncd' "
        + "(create /srv/syncd-state first, owned by syncd, if it does not exist), then 'systemctl reset-failed syncd' "
        + "and 'systemctl restart syncd'"

    @Test("the lock file on a read-only file system: the message names the state folder to add with ReadWritePaths=")
    func lockFile() {
        let error = InstanceLockError.system(SystemError("open lock file /srv/syncd-state/syncd.lock", code: EROFS))
        #expect(DaemonRun.startFailureMessage(error, folder: "/srv/syncd-state", userMode: false)
                == "Failed to start: open lock file /srv/syncd-state/syncd.lock: Read-only file system; " + Self.advice)
        // Still an ordinary failure: restarted by the unit up to its start limit, then failed.
        #expect(DaemonRun.startFailureStatus(error) == 1)
    }

    @Test("a folder that cannot be created on a read-only file system: the same advice, for that folder")
    func createFolder() {
        let error = SystemError("create directory /etc/syncd/cache", code: EROFS)
        #expect(DaemonRun.startFailureMessage(error, folder: "/etc/syncd/cache", userMode: false)
                == "Failed to start: create directory /etc/syncd/cache: Read-only file system; "
                + ReadOnlyFolderAdvice.advice(folder: "/etc/syncd/cache", userMode: false)!)
        #expect(ReadOnlyFolderAdvice.advice(folder: "/etc/syncd/cache", userMode: false)?.contains("ReadWritePaths=/etc/syncd/cache ") == true)
    }

    @Test("no advice in user mode (the user unit has no ProtectSystem=), for another errno, or after the folders")
    func noAdvice() {
        let readOnly = SystemError("create directory /srv/syncd-state", code: EROFS)
        #expect(DaemonRun.startFailureMessage(readOnly, folder: "/srv/syncd-state", userMode: true)
                == "Failed to start: create directory /srv/syncd-state: Read-only file system")
        #expect(ReadOnlyFolderAdvice.advice(folder: "/srv/syncd-state", userMode: true) == nil)
        let denied = SystemError("create directory /srv/syncd-state", code: EACCES)
        #expect(DaemonRun.startFailureMessage(denied, folder: "/srv/syncd-state", userMode: false)
                == "Failed to start: create directory /srv/syncd-state: Permission denied")
        #expect(DaemonRun.startFailureMessage(readOnly, folder: nil, userMode: false)
                == "Failed to start: create directory /srv/syncd-state: Read-only file system")
    }
}
