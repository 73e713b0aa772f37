// What every user of the engine also sees: the pure core, system errors and the logger, the store and the
// transport's request and answer types.
@_exported import SyncCore
@_exported import SyncSystem
