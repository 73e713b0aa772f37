internal import Glibc
import SyncCore
import SyncStore

/// Opens one account's storage: `STATE/<account>/state.db` (0700) and `CACHE/<account>/` (0750).
/// A damaged or unknown-version database is moved aside (`state.db.corrupt-<UTC time>`), logged,
/// and replaced by an empty one that the next good refresh fills: the daemon never crashes on its own files.
/// At open, or later when an operation finds a damaged page (`SyncEngine.recoverDamagedStore`).
public enum AccountStorage {
    /// Opens the store of `account`, recovering from a damaged file (then `replaced` runs, so the daemon's
    /// other engines can follow). With `buildingAside`, a store that does not exist yet is built aside
    /// (`StateStore.init(buildingAside:)`, for `syncd --once`): the caller puts it in place with
    /// `StateStore.finishCreation()` before it ends.
    public static func openStore(directories: Directories, account: String, logger: Logger, now: Timestamp,
                                 buildingAside: Bool = false, replaced: () -> Void = {}) throws -> StateStore {
        try Directories.create(directories.state, mode: 0o700, kind: .state, parents: directories.parentMode)
        let paths = directories.paths(of: account)
        try refuseLink(paths.stateFolder)
        try Directories.create(paths.stateFolder, mode: 0o700, kind: .account, followingLinks: false)
        let path = paths.database
        try FolderCheck.checkIfPresent(file: path, kind: "state database", mode: 0o600)
        // What a `syncd --once` that was killed while it built the store aside left: never used, and the next run
        // may well not be one that builds aside (the daemon, or a run that finds the file another made since).
        do {
            for file in try StateStore.removeLeftAside(of: path) {
                logger.notice("Removed \(file), left behind by a first run that did not finish")
            }
        } catch {
            logger.warning("\(error); remove it by hand (nothing reads it)")
        }
        if buildingAside, let store = storeBuiltAside(at: path, logger: logger) { return store }
        do {
            return try openInPlace(path, folder: paths.stateFolder)
        } catch .corrupt(_, let reason) {
            let store = try replaceDamagedStore(at: path, problem: "was unusable (\(reason))", undeliveredChanges: nil, logger: logger, now: now)
            replaced()
            return store
        }
    }

    /// The new store built aside at `path` (`StateStore.init(buildingAside:)`) when no database file is there;
    /// nil when one is, or when building aside failed: only a faster way to create the file, the caller then
    /// creates it in place, which reports what is wrong. (SQLite itself deletes a log it finds beside an empty
    /// database file; a file built aside is not empty when it arrives, so it removes such a log first.)
    private static func storeBuiltAside(at path: String, logger: Logger) -> StateStore? {
        var info = stat()
        guard lstat(path, &info) != 0, errno == ENOENT else { return nil }
        do {
            return try StateStore(buildingAside: path)
        } catch {
            logger.debug("Failed to build the state database aside, creating it in place: \(failureReason(error))")
            return nil
        }
    }

    /// `StateStore(path:)`; when SQLite cannot open or create the file because `folder` cannot be written, the
    /// error says so and what to do (SQLite's own message names neither).
    private static func openInPlace(_ path: String, folder: String) throws(StoreError) -> StateStore {
        do {
            return try StateStore(path: path)
        } catch .sqlite(let error) where error.cannotOpen && access(folder, W_OK) != 0 {
            throw .sqlite(error.advising("the state folder \(folder) cannot be written (a read-only file system?): make it writable"))
        }
    }

    /// Moves the database at `path` with its `-wal` and `-shm` aside as `state.db.corrupt-<UTC time>`
    /// (kept for recovery, never deleted), logs what happened and opens an empty database in its place.
    /// The caller has closed its connection to the old file. Local changes in the old file cannot be
    /// trusted and stay in it; `undeliveredChanges` says how many there were, when it could be read.
    /// `builtAside`: the damaged store was being built aside (`StateStore.isBuiltAside`): its file aside is the one moved.
    static func replaceDamagedStore(at path: String, builtAside: Bool = false, problem: String, undeliveredChanges: Int?,
                                    logger: Logger, now: Timestamp) throws -> StateStore {
        let target = path + ".corrupt-" + now.compact
        let damaged = builtAside ? StateStore.asidePath(of: path) : path
        for suffix in ["", "-wal", "-shm"] where access(damaged + suffix, F_OK) == 0 {
            guard rename(damaged + suffix, target + suffix) == 0 else {
                throw SystemError("move damaged database \(damaged + suffix) aside")
            }
        }
        let changes = switch undeliveredChanges {
        case 0?: "; it held no pending local changes"
        case let count?: "; it held \(counted(count, "pending local change")), set aside with the file and not sent"
        case nil: "; any pending local changes it held were set aside with the file and not sent"
        }
        logger.warning("State database \(path) \(problem); moved it to \(target) (kept for recovery)\(changes); "
                       + "starting with an empty one, rebuilt from the servers by the next refresh")
        return try StateStore(path: path)
    }

    /// The snapshot writer for `account`.
    public static func snapshots(directories: Directories, account: String, group: String) throws -> CacheFileKeeper {
        try snapshots(directories: directories, account: account, groupID: Directories.usableGroup(named: group))
    }

    /// Like `snapshots(directories:account:group:)` with the group already looked up (`Directories.usableGroup`).
    public static func snapshots(directories: Directories, account: String, groupID gid: UInt32?) throws -> CacheFileKeeper {
        try Directories.create(directories.cache, mode: 0o750, group: gid, kind: .cache, parents: directories.parentMode)
        let folder = directories.paths(of: account).cacheFolder(group: gid)
        try refuseLink(folder.directory)
        let writer = CacheFileKeeper(folder: folder)
        try writer.prepareDirectory()
        return writer
    }

    /// Refuses an account folder that is a symbolic link. The folder below `StateDirectory=` or `CacheDirectory=`
    /// is syncd's own (it creates it); a link there was placed by someone else, and following it would write the
    /// account's files where syncd does not own them — and a logout would remove the link, not the files
    /// (docs/syncd.8.md, FILES). The directories themselves may be links an administrator chose. Checked whenever
    /// an engine opens the account (at start, for each refresh, after a logout), so a link planted while syncd
    /// runs fails the refreshes with this message instead of being written through.
    static func refuseLink(_ path: String) throws(LinkedAccountFolder) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &target, target.count - 1)
        let shown = count > 0 ? String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        throw LinkedAccountFolder(path: path, target: shown)
    }
}

/// An account folder that is a symbolic link (`AccountStorage.refuseLink`).
struct LinkedAccountFolder: FailureReason {
    /// The account folder.
    let path: String
    /// Where the link points.
    let target: String

    var reason: String {
        "use \(path) as the account's folder: it is a symbolic link (to \(PrintableText.escaping(target))), and syncd never "
            + "follows a link into a place it does not own; remove the link (rm \(path)): syncd creates the folder itself"
    }

    var description: String { "Failed to \(reason)" }
}
