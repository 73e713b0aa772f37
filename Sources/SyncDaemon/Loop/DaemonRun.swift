import Dispatch
internal import Glibc
import SyncControl
import SyncCore
import SyncRemote
import SyncStore
import SyncEngine

/// The long-running daemon (`syncd` without `--once`): serve the cache at once, report ready, then keep
/// every source fresh as triggers arrive, until SIGTERM or SIGINT.
public struct DaemonRun: Sendable {
    let configuration: Configuration
    let configurationDirectory: String
    let directories: Directories
    let userMode: Bool
    let logger: Logger
    let environment: [String: String]
    /// `.source` files left out at start because of a configuration error (already logged).
    let failedSources: [FailedSource]

    /// Creates the run.
    public init(configuration: Configuration, configurationDirectory: String, directories: Directories,
                userMode: Bool, logger: Logger, environment: [String: String], failedSources: [FailedSource] = []) {
        self.failedSources = failedSources
        self.configuration = configuration
        self.configurationDirectory = configurationDirectory
        self.directories = directories
        self.userMode = userMode
        self.logger = logger
        self.environment = environment
    }

    /// Runs until asked to stop; returns the exit status.
    public func run() async -> Int32 {
        MemoryPolicy.configure()
        let (events, input) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .unbounded)
        let lock: InstanceLock
        let loop: DaemonLoop
        // The folder being created or opened, for the advice on a read-only one (nil once they are all done).
        var folder: String? = directories.state
        do {
            // Before anything is written: the three directories are syncd's own, not another user's (docs/syncd.8.md,
            // FILES, "Ownership"). A refusal is a configuration error (the configuration names a folder syncd must
            // not use): it exits the way a rejected syncd.conf does.
            try Directories.create(directories.state, mode: 0o700, kind: .state, parents: directories.parentMode)
            folder = directories.cache
            try Directories.create(directories.cache, mode: 0o750,
                                   group: Directories.usableGroup(named: configuration.daemon.cacheFileGroup), kind: .cache,
                                   parents: directories.parentMode)
            folder = directories.runtime
            try Directories.create(directories.runtime, mode: 0o755, kind: .runtime, parents: directories.parentMode)
            // Before anything opens the store or the control socket: one daemon per state directory.
            folder = directories.state
            lock = try InstanceLock.acquire(stateDirectory: directories.state, userMode: userMode)
            folder = nil
            // Refreshes in quick succession load libcurl once; the loop unloads it when unused (LibraryLinger).
            HTTPClient.keepLibraryLoadedBetweenUses()
            loop = try DaemonLoop(run: self, input: input)
        } catch {
            logger.error(DaemonRun.startFailureMessage(error, folder: folder, userMode: userMode))
            return DaemonRun.startFailureStatus(error)
        }
        let status = await loop.run(events)
        withExtendedLifetime(lock) {}
        return status
    }
}

extension DaemonRun {
    /// The message of a start that failed with `error` while creating or opening `folder` (nil: after the folders):
    /// a read-only one (`EROFS`) adds what to do, `ReadOnlyFolderAdvice` (syncd(8), EXIT STATUS).
    static func startFailureMessage(_ error: any Error, folder: String?, userMode: Bool) -> String {
        let system: SystemError? = switch error {
        case let error as SystemError: error
        case InstanceLockError.system(let error): error
        default: nil
        }
        // A system call's failure reads "Failed to start: open lock file …: …", not "Failed to start: Failed to open …".
        let message = "Failed to start: \(failureReason(system ?? error))"
        guard let folder, system?.code == EROFS, let advice = ReadOnlyFolderAdvice.advice(folder: folder, userMode: userMode) else {
            return message
        }
        return message + "; " + advice
    }

    /// The exit status of a start that failed with `error`: a folder refused as not syncd's own is the
    /// configuration's fault (it names the folder), so it exits with `StartExitStatus.configurationError`, which the
    /// units list in `RestartPreventExitStatus=` (a restart would meet the same folder); anything else, 1.
    static func startFailureStatus(_ error: any Error) -> Int32 {
        switch error {
        case is UnsafeFolder, InstanceLockError.unsafe: StartExitStatus.configurationError
        default: 1
        }
    }
}
