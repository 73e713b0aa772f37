internal import Glibc
import SyncCore
import SyncStore

/// Opens one account's storage: `STATE/<account>/state.db` (0700) and `CACHE/<account>/` (0750).
/// A damaged or unknown-version database is moved aside (`state.db.corrupt-<UTC time>`), logged,
/// and replaced by an empty one that the next good refresh fills: the daemon never crashes on its own files.
public enum AccountStorage {
    /// Opens the store of `account`, recovering from a damaged file.
    public static func openStore(directories: Directories, account: String, logger: Logger, now: Timestamp) throws -> StateStore {
        try Directories.create(directories.state, mode: 0o700)
        let directory = directories.state + "/" + account
        try Directories.create(directory, mode: 0o700)
        let path = directory + "/state.db"
        do {
            return try StateStore(path: path)
        } catch .corrupt(_, let reason) {
            let target = path + ".corrupt-" + now.compact
            for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
                guard rename(path + suffix, target + suffix) == 0 else {
                    throw SystemError("move damaged database \(path + suffix) aside")
                }
            }
            logger.warning("State database \(path) was unusable (\(reason)); moved it to \(target) and starting with an empty one")
            return try StateStore(path: path)
        }
    }

    /// The snapshot writer for `account`.
    public static func snapshots(directories: Directories, account: String, group: String) throws -> SnapshotWriter {
        let gid = Directories.usableGroup(named: group)
        try Directories.create(directories.cache, mode: 0o750, group: gid)
        let writer = SnapshotWriter(directory: directories.cache + "/" + account, account: account, group: gid)
        try writer.prepareDirectory()
        return writer
    }
}
