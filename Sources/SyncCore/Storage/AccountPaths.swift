/// Where one account's files are, below the state, cache and runtime directories syncd resolved
/// (syncd(8), FILES): the one place their paths are put together. Paths only: nothing here touches the
/// file system.
public struct AccountPaths: Sendable, Equatable {
    /// `StateDirectory=` as resolved (`/var/lib/syncd`).
    public var stateDirectory: String
    /// `CacheDirectory=` as resolved (`/var/cache/syncd`).
    public var cacheDirectory: String
    /// `RuntimeDirectory=` as resolved (`/run/syncd`).
    public var runtimeDirectory: String
    /// `Account=`.
    public var account: String

    /// Creates the paths of `account` below the three directories.
    public init(stateDirectory: String, cacheDirectory: String, runtimeDirectory: String, account: String) {
        self.stateDirectory = stateDirectory
        self.cacheDirectory = cacheDirectory
        self.runtimeDirectory = runtimeDirectory
        self.account = account
    }

    /// The file name of the control socket: the Varlink interface it serves.
    public static let controlSocketName = "io.syncd.Manager"

    /// `STATE/<account>`: the account's state folder (mode 0700).
    public var stateFolder: String { stateDirectory + "/" + account }

    /// `STATE/<account>/state.db`: the account's state database.
    public var database: String { stateFolder + "/state.db" }

    /// `CACHE/<account>`: the folder of the account's cache files (mode 0750).
    public var cacheFolderPath: String { cacheDirectory + "/" + account }

    /// The account's cache folder, its new files given `group`.
    public func cacheFolder(group: UInt32?) -> CacheFolder {
        CacheFolder(directory: cacheFolderPath, account: account, group: group)
    }

    /// `RUNTIME/io.syncd.Manager`: the control socket.
    public var controlSocket: String { AccountPaths.controlSocket(in: runtimeDirectory) }

    /// The control socket in the runtime directory `runtimeDirectory` (syncctl, which knows no configuration).
    public static func controlSocket(in runtimeDirectory: String) -> String { runtimeDirectory + "/" + controlSocketName }
}
