// SyncDaemon
