// What `syncd --check-config --verbose` says about a source: the requests it will make,
// in the words of syncd.conf(5), so a person can check them before the first refresh.

extension SourceConfiguration {
    /// One line per fact: the listing URL and how its pages are followed, and for a writable source
    /// where creates, changes and removals go.
    public var explanation: [String] {
        var lines = ["listing: GET \(url)"]
        switch pagination {
        case .none:
            lines.append("pages: one response holds the whole collection (Pagination=none)")
        case .link:
            lines.append("pages: Link: rel=\"next\" headers, at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=link)")
        case .body:
            lines.append("pages: the next page's URL at \(nextPathText) in each response, at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=body)")
        case .cursor:
            lines.append("pages: \(url) with \(cursorParameter)= set to the token at \(cursorPathText), at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=cursor)")
        case .page:
            lines.append("pages: \(url) with \(pageParameter)= counting up, until a short or empty page\(totalEnd), at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=page)")
        case .offset:
            lines.append("pages: \(url) with \(offsetParameter)= advanced by the records received, until a short or empty page\(totalEnd), at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=offset)")
        case .header:
            lines.append("pages: the next page's URL in each response's \(nextHeader) header, at most \(maxPages) pages within \(TimeSpan.format(listingTimeout)) (Pagination=header)")
        }
        if !hasMorePath.isEmpty, pagination == .body || pagination == .cursor {
            lines.append("pages: false at \(hasMorePathText) ends the listing (HasMorePath=)")
        }
        lines += deltaExplanation
        if pagination != .none { lines.append(resumeExplanation) }
        let policy = originPolicy
        if pagination != .none || !allowedOrigins.isEmpty {
            let others = allowedOrigins.map(\.description).joined(separator: " ")
            lines.append("origins: pages and redirects stay on \(policy.home.map(\.description) ?? url)"
                         + (others.isEmpty ? "" : ", or go to \(others) (without the token)"))
        }
        if writable {
            lines.append("create: POST \(url)" + (sendClientID ? "" : " without \"\(idField)\": the server assigns the ID (SendClientID=no)"))
            lines.append("change: PUT \(itemURL.example)" + (itemURLTemplate == nil ? " (derived from URL=; set ItemURL= if the server differs)" : " (ItemURL=)"))
            lines.append("remove: DELETE \(itemURL.example)")
            if !recordEnvelope.isEmpty {
                lines.append("one record: at \(recordEnvelopeText) in the item GET and the write answers; writes send it there (RecordEnvelope=)")
            }
            if let clientIDField {
                lines.append("lost create answers: looked up by the client's ID in \"\(clientIDField)\" (ClientIDField=)")
            } else {
                lines.append("lost create answers: looked up " + (sendClientID ? "by the client's ID, else " : "") + "by every field sent among new records")
            }
            lines.append("lost create answers: sent again only if a listing read \(TimeSpan.format(lostCreateWait)) after the request began lacks the record"
                         + (lostCreateWaitSetting == nil ? " (twice TimeoutSec=, at least 1min; LostCreateWaitSec=)" : " (LostCreateWaitSec=)"))
            lines.append("discarded changes: kept \(TimeSpan.format(discardedRetention)) for 'syncctl outbox --discarded' and --restore (DiscardedRetentionSec=)")
        }
        return lines
    }

    /// What a full listing cut short does at the next refresh (syncd.conf(5), "RESUMING A FIRST SYNC").
    private var resumeExplanation: String {
        let when = delta.isEnabled ? "a full listing" : "the first sync"
        let staged = stagePagesAfter == .zero ? "; every page is staged (StagePagesAfterSec=0)"
            : "; its pages are staged once it has run \(TimeSpan.format(stagePagesAfter)) (StagePagesAfterSec=)"
        switch ListingResume.method(for: self) {
        case .nextPage?:
            return "interrupted: \(when) resumes at the next page the server named (Pagination=\(pagination.rawValue))" + staged
        case .watermark?:
            return "interrupted: \(when) resumes from the highest \(delta.fieldText) below the last received, with the delta request, "
                + "while the pages come in ascending order of it (ask for that order in URL=)" + staged
        case nil:
            return "interrupted: a listing cut short starts over from its first page (Pagination=\(pagination.rawValue)"
                + (delta.mode == .watermark ? "" : " without Delta=watermark") + ": see RESUMING A FIRST SYNC in syncd.conf(5))"
        }
    }

    /// What a refresh after the first full listing asks for (`Delta=`, syncd.conf(5) "Incremental pull").
    private var deltaExplanation: [String] {
        let placeholder = DeltaSettings.placeholder
        let paged = pagination == .none ? "" : ", paged as the listing"
        var lines: [String]
        switch delta.mode {
        case .none:
            return []
        case .watermark:
            lines = ["delta: GET \(DeltaPlan.requestURL(self, encodedCheckpoint: placeholder)), \(placeholder) the highest "
                     + "\(delta.fieldText) of the last delta or of a full listing's first page\(paged) (Delta=watermark)"]
        case .token where delta.query.isEmpty:
            lines = ["delta: GET the URL at \(delta.tokenPathText) on the last page received\(paged) (Delta=token)"]
        case .token:
            lines = ["delta: GET \(DeltaPlan.requestURL(self, encodedCheckpoint: placeholder)), \(placeholder) the token at "
                     + "\(delta.tokenPathText) on the last page received\(paged) (Delta=token)"]
        }
        if delta.deletedPath.isEmpty {
            lines.append("delta: no tombstones (DeletedPath=): records deleted on the server go at the next full listing")
        } else {
            lines.append("delta: a record with \(delta.deletedValueText) at \(delta.deletedPathText) is removed (DeletedPath=, DeletedValue=)")
        }
        let statuses = delta.expiredStatuses.map(String.init).joined(separator: " ")
        lines.append("delta: a full listing at least every \(TimeSpan.format(delta.fullResyncInterval)) (FullResyncIntervalSec=) "
                     + "and after HTTP \(statuses) (DeltaExpired=)")
        return lines
    }

    /// How a listing paged by number or offset also ends: ` or once the total at /count is reached`.
    private var totalEnd: String { totalPath.isEmpty ? "" : " or once the total at \(totalPathText) is reached" }
}
