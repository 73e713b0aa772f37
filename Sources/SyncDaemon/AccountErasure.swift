import SyncCore
import SyncEngine

/// Erases one account's cache folder and state (logout, syncd(8) GUARANTEES 9).
enum AccountErasure {
    static func erase(configuration: Configuration, run: DaemonRun) throws {
        let directories = Directories(
            state: configuration.daemon.stateDirectory, cache: configuration.daemon.cacheDirectory,
            runtime: configuration.daemon.runtimeDirectory, userMode: run.userMode, environment: run.environment)
        let account = configuration.daemon.account
        // The cache folder stays, emptied: apps watching it (syncd.cache(5)) go on hearing of the files the new
        // account's listings write there.
        try DirectoryTree.removeContents(of: directories.cache + "/" + account)
        try DirectoryTree.remove(directories.state + "/" + account)
    }
}
