/// Where the cache files of one account live (`CACHE/<account>`, syncd.cache(5)), and how new ones are made:
/// the one description of the folder, for the store that writes the files (SyncStore) and the daemon that
/// checks them (CacheFileKeeper). Paths only: nothing here touches the file system.
public struct CacheFolder: Sendable, Equatable {
    /// `CACHE/<account>`.
    public var directory: String
    /// The account whose data this is (written into every file).
    public var account: String
    /// Group owning new files, when the daemon may set it.
    public var group: UInt32?
    /// Mode of new files.
    public var mode: UInt32 = 0o640

    /// Creates a folder description.
    public init(directory: String, account: String, group: UInt32?) {
        self.directory = directory
        self.account = account
        self.group = group
    }

    /// Path of the cache file of `source`.
    public func path(of source: String) -> String { directory + "/" + CacheFolder.fileName(of: source) }

    /// Name of the cache file of `source` in the folder.
    public static func fileName(of source: String) -> String { source + ".json" }
}
