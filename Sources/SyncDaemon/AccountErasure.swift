import SyncCore

/// Erases one account's cache folder and state (logout, syncd(8) GUARANTEES 9).
enum AccountErasure {
    static func erase(configuration: Configuration, run: DaemonRun) throws {
        let directories = Directories(
            state: configuration.daemon.stateDirectory, cache: configuration.daemon.cacheDirectory,
            runtime: configuration.daemon.runtimeDirectory, userMode: run.userMode, environment: run.environment)
        let account = configuration.daemon.account
        for folder in [directories.cache + "/" + account, directories.state + "/" + account] {
            try DirectoryTree.remove(folder)
        }
    }
}
