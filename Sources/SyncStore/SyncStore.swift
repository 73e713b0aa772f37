// SyncStore
