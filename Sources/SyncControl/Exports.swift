// What every user of the Varlink module also sees: the JSON tree (SyncCore) its messages carry and
// the system errors and logger (SyncSystem) its server reports with.
@_exported import SyncCore
@_exported import SyncSystem
