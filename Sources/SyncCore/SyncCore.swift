// SyncCore
