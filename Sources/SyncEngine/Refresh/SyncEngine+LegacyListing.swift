import SyncCore
import SyncStore

// A listing a schema-1 store held whose conversion failed (a full disk): its records stay in the old table
// and its cache file as the earlier syncd wrote it, until a conversion succeeds, at the start or before a
// refresh (docs/architecture.md, "Upgrading from schema 1").
extension SyncEngine {
    /// Whether `name`'s listing is still in the earlier storage format.
    func hasUnconvertedListing(_ name: String) -> Bool {
        (try? store.legacySources())?.contains(name) == true
    }

    /// Converts `name`'s listing from the earlier storage format, if it still is in it; nil when done or
    /// nothing was to do, else the failure, worded by what still holds the records: a local failure, retried.
    func convertLegacyListing(_ name: String) -> RefreshFailure? {
        guard hasUnconvertedListing(name) else { return nil }
        do {
            let records = try store.migrateLegacyListing(source: name)
            logger.forSource(name).notice("converted the stored listing (\(counted(records, "record"))) to the new storage format")
            return nil
        } catch {
            let reason = failureReason(cacheFileFailure(error) ?? error)
            return RefreshFailure(.local, "Failed to convert the stored listing to the new storage format: \(reason); "
                + "the records are still in the state database in the earlier format and the cache file is as it was, "
                + "and the conversion is tried again before the next refresh")
        }
    }
}
