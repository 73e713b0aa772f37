// SyncControl
