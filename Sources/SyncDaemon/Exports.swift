// What every user of the daemon module also sees: system errors and the logger (SyncSystem).
@_exported import SyncSystem
