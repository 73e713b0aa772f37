import SyncCore
import SyncStore

/// Resuming an interrupted full listing (docs/architecture.md, "Resuming an interrupted listing"; syncd.conf(5),
/// "RESUMING A FIRST SYNC"): each page of a listing that can resume is staged in the store with the point the
/// listing continues from, one transaction per page; the next refresh replays the staged records into its writer
/// and asks the server only for the rest.
final class ListingStaging {
    let method: ListingResume.Method
    let binding: String
    /// When the listing began (RFC 3339): kept across resumes.
    let startedAt: String
    /// `.watermark`: the stamps so far in order, for where the listing would resume.
    var stamps = AscendingStamps()
    /// The records received since the last staged page, as the inside of a JSON array: staged with the next page
    /// that can be (a `.watermark` listing whose records all share one stamp cannot resume yet).
    var pending: [UInt8] = []
    /// The records staged and pending.
    var records = 0
    /// The number the next staged page is stored under (staged pages are numbered apart from the server's).
    var nextBlob = 1
    /// False once the listing turned out unable to resume (its stamps went down), or too fast to be worth staging:
    /// nothing more is staged.
    var active = true
    /// When (on the boot clock) pages begin to be staged: `StagePagesAfterSec=` after this refresh's listing began.
    /// The records received before are held in `pending` and staged with the first page after it.
    let stagesFrom: Duration

    init(method: ListingResume.Method, binding: String, startedAt: String, stagesFrom: Duration) {
        self.method = method
        self.binding = binding
        self.startedAt = startedAt
        self.stagesFrom = stagesFrom
    }

    /// The most bytes held for staging at once: a `.watermark` listing whose stamps stay one for longer stops staging.
    static let pendingLimit = 64 << 20

    /// Takes one record the listing keeps: its bytes while staging, its stamp for the order in any case.
    func take(_ record: ScannedRecord, field: [String]) {
        if method == .watermark { stamps.see(RecordMember.value(at: field, in: record.bytes)) }
        guard active else { return }
        guard pending.count < ListingStaging.pendingLimit else {
            // Pages already staged keep their point; nothing more is staged (`stage` sees it).
            active = false
            pending = []
            return
        }
        if !pending.isEmpty { pending.append(UInt8(ascii: ",")) }
        pending.append(contentsOf: record.bytes)
        records += 1
    }
}

/// The hash the IDs of replayed records are remembered by: a resumed listing skips a record it already replayed.
private func replayedKey(_ id: RecordID) -> UInt64 {
    var bytes: [UInt8] = [id.kind == .integer ? 1 : 0]
    bytes.append(contentsOf: id.key.utf8)
    return XXHash64.hash(bytes)
}

extension ListingFetcher {
    /// What `fetch` does about resuming, decided before it starts (`SyncEngine`): stage this listing's pages, and
    /// replay the staged ones of `point` first.
    struct ResumePlan {
        var staging: ListingStaging
        /// The staged listing to continue; nil: a listing from its start.
        var point: ListingResumePoint?
    }

    /// Whether `record`, received after a resume, was replayed already (its ID came in a staged page) or is a
    /// tombstone of the delta a `.watermark` listing resumes with: either is left out, and the delta that follows the
    /// listing brings the record's latest state.
    func skipsAfterResume(_ record: ScannedRecord) -> Bool {
        guard let replayedIDs else { return false }
        if replayedIDs.contains(replayedKey(record.id)) {
            skippedAfterResume += 1
            return true
        }
        return resumedByWatermark && DeltaStamp.isTombstone(record, source: source)
    }

    /// Begins the listing's writer with the staged records of `point` (its first `keep`), as the pages brought them;
    /// restores the watermarks, the counts and the stamp order. Returns the URL the listing continues at. A
    /// `.watermark` listing's staged pages are cut to the records kept, so that a second interruption resumes right.
    func replay(_ point: ListingResumePoint, plan: ResumePlan, into writer: inout ListingWriter?) throws(RefreshFailure) -> String {
        let staging = plan.staging
        let options = RecordScannerOptions(recordsPath: [], idField: source.idField, versionField: source.versionField,
                                           maxRecordBytes: Int(clamping: source.maxRecordBytes))
        var scanner = RecordScanner(options: options)
        var replayed = Set<UInt64>()
        var kept = 0
        var cut: (page: Int, bytes: Int)?
        do {
            let target = try store.beginListing(source: source.name, header: CacheHeader(savedAt: savedAt, etag: nil))
            writer = target
            let records = RecordPipeline(writer: target)
            defer { records.drain() }
            var blob = 0
            try scanner.feed([UInt8(ascii: "[")]) { _ in }
            try store.forEachStagedPage(source: source.name) { bytes in
                blob += 1
                if blob > 1 { try scanner.feed([UInt8(ascii: ",")]) { _ in } }
                let start = bytes.baseAddress
                try scanner.feed(bytes) { record in
                    guard kept < point.keep else { return }
                    kept += 1
                    replayed.insert(replayedKey(record.id))
                    if staging.method == .watermark { staging.stamps.see(RecordMember.value(at: source.delta.field, in: record.bytes)) }
                    try records.add(record)
                    if kept == point.keep, let start, let end = record.bytes.baseAddress {
                        cut = (blob, end - start + record.bytes.count)
                    }
                }
                return kept < point.keep
            }
            try records.finish()
            staging.nextBlob = (cut?.page ?? blob) + 1
        } catch let failure as RefreshFailure {
            writer?.rollback()
            throw failure
        } catch let error as StoreError {
            writer?.rollback()
            throw storeFailure(error)
        } catch {
            writer?.rollback()
            try? store.discardListingResume(source: source.name)
            throw RefreshFailure(.transient, "the staged pages of the interrupted listing could not be read (\(error)); it starts over")
        }
        guard kept == point.keep else {
            writer?.rollback()
            try? store.discardListingResume(source: source.name)
            throw RefreshFailure(.transient, "the staged pages of the interrupted listing hold \(kept) of its \(point.keep) records; it starts over")
        }
        if staging.method == .watermark, let cut {
            do {
                try store.cutStagedPages(source: source.name, lastPage: cut.page, bytes: cut.bytes)
            } catch {
                writer?.rollback()
                throw storeFailure(error)
            }
        }
        staging.records = kept
        replayedIDs = replayed
        resumedAtRecord = kept
        if let first = point.firstPageStamp { firstPageWatermark = DeltaWatermark(checkpoint: first) }
        // The highest stamp of the records kept: a watermark listing's resume point is below the ones it dropped.
        if watermark != nil { watermark = DeltaWatermark(checkpoint: staging.method == .watermark ? point.next : point.highestStamp) }
        switch staging.method {
        case .nextPage:
            return point.next
        case .watermark:
            resumedByWatermark = true
            return DeltaPlan.requestURL(source, checkpoint: point.next)
        }
    }

    /// Whether `error`, the answer to the first request of a resumed listing, refuses the position it asks for: 400,
    /// 410 or 422 (Kinto's invalid `_token`, an expired cursor), or a `DeltaExpired=` status. Credentials refused, a
    /// rate limit, a missing resource, a server in trouble or a page that did not parse say nothing about the
    /// position: the staged pages stay for the next try.
    func rejectsPosition(_ error: RefreshFailure) -> Bool {
        guard let status = error.status else { return false }
        return [400, 410, 422].contains(status) || source.delta.expiredStatuses.contains(status)
    }

    /// The failure of the first request of a resumed listing that retrying cannot help (the server refused the
    /// position it continues at): the staged pages go, and the engine starts the listing over at once (`resumeRefused`).
    func refusedResume(_ error: RefreshFailure) -> RefreshFailure {
        var failure = error
        do {
            try store.discardListingResume(source: source.name)
            resumeRefused = true
        } catch {
            failure.append(" (asked for where the interrupted listing stopped; its staged pages could not be dropped: \(error))")
        }
        return failure
    }

    /// The listing's last page arrived: a `.watermark` listing whose stamps came in no order says that it cannot
    /// resume (newest first is an order chosen, the recipes' own, and starts over unwarned, as documented).
    func finishStaging() {
        guard let staging = resumePlan?.staging, staging.method == .watermark, !staging.stamps.ascending, !staging.stamps.descending else { return }
        notices.append(SourceNotice(ownWords: "the listing's records are in no order of DeltaField=\(source.delta.fieldText), so an "
                                    + "interrupted listing starts over: sort the listing by it in URL=, oldest first, to let it resume"))
    }

    /// Stages the records since the last staged page, with where the listing continues after page `page`
    /// (`next`, the next page's URL) and what it received so far (`bytes`); a no-op for a listing that cannot resume.
    func stage(page: Int, next: String, bytes: Int64) throws(RefreshFailure) {
        guard let staging = resumePlan?.staging, staging.active else { return }
        // Staging writes every byte a second time: a listing that ends within StagePagesAfterSec= is not staged, and one
        // that brings more than `heldBeforeStaging` in that time is fast enough to start over (syncd.conf(5),
        // "RESUMING A FIRST SYNC"). What came before is staged with the first page after it.
        switch ListingResume.pageEnd(held: staging.pending.count, now: clocks.sinceBoot(), stagesFrom: staging.stagesFrom) {
        case .stage: break
        case .hold: return
        case .stopStaging:
            staging.active = false
            staging.pending = []
            return
        }
        let point: (keep: Int, next: String)
        switch staging.method {
        case .nextPage:
            point = (staging.records, next)
        case .watermark:
            guard staging.stamps.ascending else {
                // Stamps out of order: records at or below any resume point may still come, so none is safe. Newest
                // first is an order chosen (the recipes' own): such a listing starts over, as documented, unwarned.
                staging.active = false
                do { try store.discardListingResume(source: source.name) } catch { throw storeFailure(error) }
                return
            }
            guard let resume = staging.stamps.resumePoint else { return }
            point = (resume.keep, resume.checkpoint)
        }
        let resumePoint = ListingResumePoint(binding: staging.binding, method: staging.method.rawValue, next: point.next, keep: point.keep,
                                             pages: page, records: staging.records, bytes: bytes, firstPageStamp: firstPageWatermark?.checkpoint,
                                             highestStamp: watermark?.checkpoint, startedAt: staging.startedAt)
        do {
            try store.stageListingPage(source: source.name, page: staging.nextBlob, records: staging.pending, point: resumePoint)
        } catch {
            throw storeFailure(error)
        }
        staging.nextBlob += 1
        staging.pending.removeAll(keepingCapacity: true)
    }
}
