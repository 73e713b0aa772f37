/// What to do when the daemon cannot create or open one of its folders (its state, cache or runtime folder, or
/// the lock file in the state folder) because the file system is read-only (`EROFS`) (syncd(8), EXIT STATUS;
/// syncd.conf(5), `StateDirectory=`).
///
/// Under the packaged `syncd.service` this is most often not a read-only disk but the unit's sandbox:
/// `ProtectSystem=strict` leaves only the unit's own `StateDirectory=`, `CacheDirectory=` and `RuntimeDirectory=`
/// writable, so a folder that syncd.conf moves elsewhere (`StateDirectory=/srv/syncd-state`) must be made writable
/// for the unit with `ReadWritePaths=`. The user unit has no such sandbox: there the file system is read-only.
public enum ReadOnlyFolderAdvice {
    /// The advice to append (after "; ") to the message of a start that failed with `EROFS` on `folder`; nil in
    /// user mode, where no unit makes the folder read-only.
    public static func advice(folder: String, userMode: Bool) -> String? {
        guard !userMode else { return nil }
        return "under syncd.service only the unit's own StateDirectory=, CacheDirectory= and RuntimeDirectory= are "
            + "writable (ProtectSystem=strict): add ReadWritePaths=\(folder) with 'systemctl edit syncd' "
            + "(create \(folder) first, owned by syncd, if it does not exist), then 'systemctl reset-failed syncd' "
            + "and 'systemctl restart syncd'"
    }
}
