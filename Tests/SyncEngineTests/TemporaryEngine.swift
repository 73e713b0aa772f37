import Foundation
import SyncStore
@testable import SyncEngine

/// An engine over a fresh state database and cache folder in `directory` (created here; the caller removes
/// it), and the database's path, for reading what the engine stored.
func temporaryEngine(in directory: String) throws -> (SyncEngine, String) {
    try FileManager.default.createDirectory(atPath: directory + "/cache", withIntermediateDirectories: true)
    let path = directory + "/state.db"
    let engine = try SyncEngine(store: StateStore(path: path),
                                snapshots: CacheFileKeeper(folder: CacheFolder(directory: directory + "/cache", account: "default", group: nil)),
                                logger: Logger(journal: false, threshold: .error), environment: [:])
    return (engine, path)
}
