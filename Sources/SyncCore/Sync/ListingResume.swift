/// Resuming an interrupted full listing (syncd.conf(5), "RESUMING A FIRST SYNC"; docs/architecture.md, "Resuming
/// an interrupted listing"): which sources can, from where, and what the staged pages are bound to. Pure: the
/// engine stages each page with its resume point and, at the next refresh, replays the staged records and asks
/// the server for the rest.
public enum ListingResume {
    /// How a listing continues after its last staged page.
    public enum Method: String, Sendable, Equatable {
        /// At the next page's URL the server gave (`Pagination=header` or `cursor`: an opaque position, the
        /// server's own keyset token or cursor, which does not move when records are added or removed before it).
        case nextPage = "next-page"
        /// `Delta=watermark` over pages in ascending stamp order: the delta request from the highest stamp below the
        /// last one staged, the staged records with that last stamp dropped (more may share it on the next page).
        case watermark
    }

    /// The most bytes of records a listing holds before `StagePagesAfterSec=` has passed: one that receives more
    /// in that time is not staged at all. At that speed starting over costs seconds, while staging would write every
    /// byte a second time, in the state database (about 3× a loopback first sync's time, docs/benchmarks.md).
    public static let heldBeforeStaging = 8 << 20

    /// What a listing that can resume does at the end of a page (not its last): `held` bytes of records received since
    /// the last staged page, at `now` on the boot clock, staging from `stagesFrom` (`StagePagesAfterSec=` after the
    /// listing began).
    public enum PageEnd: Equatable, Sendable {
        /// Keep the records for the first page that ends after `stagesFrom`.
        case hold
        /// Stage them, with where the listing continues.
        case stage
        /// More than `heldBeforeStaging` before `stagesFrom`: drop them and stage nothing more of this listing.
        case stopStaging
    }

    /// See `PageEnd`.
    public static func pageEnd(held: Int, now: Duration, stagesFrom: Duration) -> PageEnd {
        if now >= stagesFrom { return .stage }
        return held > heldBeforeStaging ? .stopStaging : .hold
    }

    /// How a full listing of `source` resumes; nil when it starts over: a single page (nothing to resume inside
    /// it), or pages by link, body URL, number or offset without `Delta=watermark` (a page number or offset shifts
    /// when records are added or removed before it, so resuming there could skip records in silence).
    public static func method(for source: SourceConfiguration) -> Method? {
        switch source.pagination {
        case .none:
            return nil
        case .header, .cursor:
            return .nextPage
        case .link, .body, .page, .offset:
            return source.delta.mode == .watermark && !source.delta.query.isEmpty ? .watermark : nil
        }
    }

    /// What staged pages are bound to: everything that decides which records the pages hold and how they are
    /// read (the delta binding's settings, the paging settings, the version field). Staged pages of another binding
    /// are dropped and the listing starts over.
    public static func binding(of source: SourceConfiguration, account: String) -> String {
        let parts = [
            DeltaPlan.binding(of: source, account: account), "version=" + (source.versionField ?? ""),
            "next=" + source.nextPathText, "cursor=" + source.cursorPathText, "cursorParameter=" + source.cursorParameter,
            "nextHeader=" + source.nextHeader, "hasMore=" + source.hasMorePathText, "headers=" + source.headers.map { $0.name }.joined(separator: ","),
        ]
        return "resume-binding-1:" + String(XXHash64.hash(Array(parts.joined(separator: "\u{0}").utf8)), radix: 16)
    }
}

/// `ListingResume.Method.watermark`: whether a listing's stamps so far come in ascending order (equal stamps
/// allowed), and where it would resume. Fed each record's stamp in the listing's order.
public struct AscendingStamps: Sendable, Equatable {
    /// Records seen.
    public private(set) var count = 0
    /// False once a stamp came below an earlier one, or a record had none: the listing cannot resume by watermark.
    public private(set) var ascending = true
    /// True while no stamp came above an earlier one: newest first, as the recipes list, which is an order chosen, not
    /// a listing out of order (it starts over when cut short, without a warning).
    public private(set) var descending = true
    /// The last stamp, for `descending`.
    private var previous: JSONValue?
    /// The highest (last) stamp.
    private var top: JSONValue?
    /// The highest stamp strictly below `top`.
    private var below: JSONValue?
    /// How many records came before the first stamped `top`: exactly those stamped `below` or lower.
    private var beforeTop = 0

    /// Creates an empty sequence.
    public init() {}

    /// Takes the next record's stamp (nil: it has none).
    public mutating func see(_ stamp: JSONValue?) {
        defer { count += 1 }
        guard let stamp, !stamp.isNull else {
            ascending = false
            descending = false
            return
        }
        if descending {
            // Equal stamps keep the order; one above the last (or of another kind) breaks it.
            if let previous, DeltaWatermark.compare(stamp, previous) != false { descending = false }
            previous = stamp
        }
        guard ascending else { return }
        guard let current = top else {
            top = stamp
            beforeTop = count
            return
        }
        switch DeltaWatermark.compare(stamp, current) {
        case .some(true):
            below = current
            top = stamp
            beforeTop = count
        case .some(false):
            // Equal stamps are in order; a lower one is not.
            if DeltaWatermark.compare(current, stamp) != false { ascending = false }
        case .none:
            ascending = false
        }
    }

    /// Where a listing resumes: the first `keep` records (every record stamped `checkpoint` or lower), then the
    /// delta request from `checkpoint`. Nil while not ascending or while every record shares one stamp.
    public var resumePoint: (keep: Int, checkpoint: String)? {
        guard ascending, let below else { return nil }
        var watermark = DeltaWatermark()
        try? watermark.see(below)
        return watermark.checkpoint.map { (beforeTop, $0) }
    }
}
