// SyncRemote
