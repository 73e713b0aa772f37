internal import CShim
import SyncSystem
import SyncEngine

/// Keeps the daemon's secrets (bearer tokens, credential headers) out of core dumps (syncd(8), SECURITY, "Core dumps"):
/// the process is made non-dumpable, so a crash writes no core and no other user may ptrace it or read its
/// memory through /proc. Its own /proc/self stays readable to it (the memory policy reads smaps), and peer
/// credentials on the control socket are unaffected. The units also set `LimitCORE=0`.
public enum CoreDumps {
    /// Makes this process non-dumpable. The corresponding C call is `prctl(PR_SET_DUMPABLE, 0)` (prctl(2)).
    public static func disable() throws(SystemError) {
        let result = cshim_prctl_set_dumpable(0)
        if result < 0 { throw SystemError("make the process non-dumpable", code: -result) }
    }

    /// Whether this process may dump core. The corresponding C call is `prctl(PR_GET_DUMPABLE)`.
    public static var enabled: Bool { cshim_prctl_get_dumpable() != 0 }
}
