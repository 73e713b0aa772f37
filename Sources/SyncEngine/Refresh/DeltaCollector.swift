import SyncCore
import SyncStore

/// The records of a delta (syncd.conf(5), "Incremental pull") as its pages arrive: each record replaces an
/// earlier one of the same ID (the last word counts), a tombstone (`DeletedPath=` holding `DeletedValue=`)
/// removes it. Nothing is applied until every page arrived and validated (`SyncEngine` then hands the
/// result to `StateStore.applyDelta` in one transaction). Held in memory: a delta is bounded by `MaxBytes=`.
final class DeltaCollector {
    let source: SourceConfiguration
    /// Records received, tombstones included.
    private(set) var received = 0
    /// `Delta=watermark`: the highest change stamp so far, from the stored checkpoint on.
    private(set) var watermark: DeltaWatermark?
    /// The IDs in the order they first came.
    private var order: [RecordID] = []
    /// The latest word on each ID: a record, or nil for a tombstone.
    private var latest: [RecordID: DeltaRecord?] = [:]

    init(source: SourceConfiguration, watermark: DeltaWatermark?) {
        self.source = source
        self.watermark = watermark
    }

    /// Takes one record of a delta page.
    func add(_ record: ScannedRecord) throws(RefreshFailure) {
        received += 1
        let removed = try DeltaStamp.take(record, of: "delta", source: source, readingTombstones: true, into: &watermark)
        let id = record.id
        if latest.updateValue(removed ? nil : DeltaRecord(id: id.key, idIsInteger: id.kind == .integer, version: record.version,
                                                          body: Array(record.bytes)), forKey: id) == nil {
            order.append(id)
        }
    }

    /// The records to add or replace, in the order they came, and the IDs to remove.
    var changes: (upserts: [DeltaRecord], removals: [String]) {
        var upserts: [DeltaRecord] = []
        var removals: [String] = []
        for id in order {
            guard let word = latest[id] else { continue }
            if let record = word { upserts.append(record) } else { removals.append(id.key) }
        }
        return (upserts, removals)
    }
}

/// One record's change stamp taken into a watermark, or the refresh's failure naming the record.
enum DeltaStamp {
    /// Takes `record`'s stamp (of a "listing" or "delta", `what`) into `watermark` when there is one
    /// (`Delta=watermark`); a tombstone may carry no stamp (it counts when it does). Returns whether the record is a
    /// tombstone, read only when `readingTombstones` (a delta) or when it has no stamp: a listing's records pay one
    /// lookup each, not two.
    static func take(_ record: ScannedRecord, of what: String, source: SourceConfiguration, readingTombstones: Bool,
                     into watermark: inout DeltaWatermark?) throws(RefreshFailure) -> Bool {
        if watermark != nil {
            let stamp = RecordMember.value(at: source.delta.field, in: record.bytes)
            if stamp == nil, isTombstone(record, source: source) { return true }
            try see(stamp, record: record, of: what, source: source, in: &watermark)
        }
        return readingTombstones && isTombstone(record, source: source)
    }

    /// Whether `record` is a tombstone: `DeletedPath=` holds `DeletedValue=` (read from its bytes, unparsed).
    static func isTombstone(_ record: ScannedRecord, source: SourceConfiguration) -> Bool {
        let delta = source.delta
        return !delta.deletedPath.isEmpty && DeltaPlan.marksDeleted(RecordMember.value(at: delta.deletedPath, in: record.bytes), delta)
    }

    /// `what`: "listing" or "delta", for the message.
    static func see(_ stamp: JSONValue?, record: ScannedRecord, of what: String, source: SourceConfiguration,
                    in watermark: inout DeltaWatermark?) throws(RefreshFailure) {
        do {
            try watermark?.see(stamp)
        } catch {
            let field = source.delta.fieldText
            let which = "the \(what)'s record \(record.index) (counted from 0; ID \(record.id.jsonLiteral))"
            let reason: String
            switch error {
            case .missing: reason = "has no change stamp at DeltaField=\(field)"
            case .notComparable(let kind): reason = "has \(kind) at DeltaField=\(field), not a number or a string"
            case .mixed(let kinds): reason = "makes the stamps at DeltaField=\(field) mix \(kinds)"
            }
            throw RefreshFailure(.permanent, "response rejected: \(which) \(reason); Delta=watermark needs a number or a string "
                                 + "in every record there: give the record a stamp on the server, point DeltaField= at the records' change "
                                 + "stamp, or set Delta=none")
        }
    }
}
