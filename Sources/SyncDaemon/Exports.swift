// What every user of the daemon module also sees: the pure core (SyncCore), system errors and the logger (SyncSystem).
@_exported import SyncSystem
@_exported import SyncCore
@_exported import SyncEngine
