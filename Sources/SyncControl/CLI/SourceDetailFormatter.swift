import SyncCore

/// Renders one source in full for `syncctl status SOURCE`, like `systemctl status UNIT`: a header line with
/// the dot and the state, then one `Label: value` line per fact, the labels right-aligned.
public struct SourceDetailFormatter: Sendable {
    /// Wall-clock now, for relative times.
    public var now: Timestamp
    /// Colour the dot.
    public var color: Bool
    /// `●`, `×` and `—`; else `*`, `x` and `-`.
    public var unicode: Bool

    /// Creates a formatter.
    public init(now: Timestamp, color: Bool, unicode: Bool = true) {
        self.now = now
        self.color = color
        self.unicode = unicode
    }

    /// What the source's outbox holds, from `ListOutbox`: its entries, or nil when the caller may not read
    /// them (then the status's counts stand alone).
    public struct Outbox: Sendable, Equatable {
        /// The entries of the source's outbox, in outbox order; nil when `ListOutbox` was refused.
        public var entries: [OutboxEntry]?

        /// Creates a summary's input.
        public init(entries: [OutboxEntry]?) {
            self.entries = entries
        }
    }

    /// The parked changes listed one by one under the outbox line, at most.
    static let parkedShown = 5

    /// The lines of one running source, each ending in a newline.
    public func format(_ source: SourceStatus, outbox: Outbox) -> String {
        // Every text a server or the configuration wrote, safe for a terminal (HumanFormat.printable).
        let source = source.printable
        var rows: [(String, String)] = [("URL", source.url)]
        var records = HumanFormat.count(source.records) + " cached"
        records += ", \(HumanFormat.count(source.pending)) pending, \(HumanFormat.count(source.parked)) parked, "
            + "\(HumanFormat.count(source.conflicts)) \(source.conflicts == 1 ? "conflict" : "conflicts")"
        rows.append(("Records", records))
        rows.append(("Last success", time(source.lastSuccess) ?? "never"))
        rows.append(("Last attempt", time(source.lastAttempt) ?? "never"))
        var error = source.lastError ?? "none"
        if source.lastError != nil, source.attempt > 0 {
            error += " (\(source.attempt) failed \(source.attempt == 1 ? "attempt" : "attempts") in a row)"
        }
        rows.append(("Error", error))
        rows.append(("Next try", nextTry(source)))
        if let mode = source.mode { rows.append(("Mode", Self.describe(mode))) }
        if let delta = source.delta { rows.append(("Delta", describe(delta))) }
        if let resume = source.resume { rows.append(("Listing", describe(resume, syncing: source.state == .syncing))) }
        for warning in source.warnings { rows.append(("Warning", warning)) }
        if let file = source.cacheFile { rows.append(("Cache file", file)) }
        if let seq = source.seq { rows.append(("Change", "\(seq) (syncctl changes \(HumanFormat.printable(source.name)) --since \(seq) lists what follows)")) }
        let (summary, parked) = outboxLines(source, outbox)
        rows.append(("Outbox", summary))
        var text = header(source) + "\n"
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows {
            text += String(repeating: " ", count: width - label.count) + label + ": " + value + "\n"
        }
        let indent = String(repeating: " ", count: width + 2)
        for line in parked { text += indent + line + "\n" }
        return text
    }

    /// The lines of a source left out because its `.source` file has an error.
    public func format(_ failed: FailedSourceStatus) -> String {
        let failed = failed.printable
        let cross = DotColor.red.cross(enabled: color, unicode: unicode)
        return "\(cross) \(failed.name) \(unicode ? "—" : "-") failed: not loaded because of a configuration error\n"
            + "   File: \(failed.file)\n"
            + "Problem: \(failed.problem)\n"
    }

    /// `watermark, last delta 2026-12-02T10:42:00Z (4min ago), last full listing 2026-12-02T08:40:00Z (2h ago)`.
    func describe(_ delta: DeltaStatus) -> String {
        guard let full = time(delta.lastFullListing) else {
            return "\(delta.mode), no checkpoint: the next refresh lists the whole collection"
        }
        guard let last = time(delta.lastDelta) else { return "\(delta.mode), last full listing \(full), no delta since" }
        return "\(delta.mode), last delta \(last), last full listing \(full)"
    }

    /// `resuming at record 4,001 (page 5), begun 2026-12-02T10:42:00Z (3min ago)`, or `interrupted: resumes at …`.
    func describe(_ resume: ResumeStatus, syncing: Bool) -> String {
        let at = "record \(HumanFormat.count(resume.records + 1)) (page \(resume.pages + 1)), begun \(time(resume.began) ?? resume.began)"
        return syncing ? "resuming at \(at)" : "interrupted: the next refresh resumes at \(at)"
    }

    /// `● posts — idle, stale`.
    func header(_ source: SourceStatus) -> String {
        let dot = StatusFormatter.dotColor(of: source).dot(enabled: color, unicode: unicode)
        return "\(dot) \(source.name) \(unicode ? "—" : "-") \(source.state.rawValue)" + (source.stale ? ", stale" : "")
    }

    /// `2026-11-29T10:00:00Z (3min ago)`: the daemon's UTC time as it sent it, and how long ago.
    func time(_ text: String?) -> String? {
        guard let text else { return nil }
        guard let time = Timestamp(rfc3339: text) else { return text }
        return "\(text) (\(HumanFormat.relative(time, now: now)))"
    }

    /// When the daemon refreshes the source next: the retry's time, or what it waits for.
    func nextTry(_ source: SourceStatus) -> String {
        guard let text = source.nextAttempt else {
            switch source.state {
            case .syncing: return "now (refreshing)"
            case .offline: return "when the network is back"
            default: return "at the next periodic refresh"
            }
        }
        guard let next = Timestamp(rfc3339: text) else { return text }
        return next > now ? "\(text) (\(HumanFormat.relative(next, now: now)))" : "\(text) (due)"
    }

    /// `writable (ConflictPolicy=server-wins), Pagination=link`; `read-only, Pagination=none`.
    static func describe(_ mode: SourceMode) -> String {
        let writes = mode.writable ? "writable" + (mode.conflictPolicy.map { " (ConflictPolicy=\($0))" } ?? "") : "read-only"
        return writes + ", Pagination=" + mode.pagination
    }

    /// The outbox line, and one line per parked change (the first `parkedShown`).
    func outboxLines(_ source: SourceStatus, _ outbox: Outbox) -> (String, [String]) {
        guard let entries = outbox.entries else {
            // The counts of the status: the entries need the rights of 'syncctl outbox'.
            let changed = source.pending + source.parked
            if changed == 0 { return ("empty", []) }
            return ("\(HumanFormat.count(source.pending)) pending, \(HumanFormat.count(source.parked)) parked "
                    + "(listing them needs root or membership in group \"syncd\")", [])
        }
        if entries.isEmpty { return ("empty", []) }
        // A parked change a newer one superseded is history: named apart, not counted as parked.
        func shownState(_ entry: OutboxEntry) -> String {
            entry.state == "parked" && entry.superseded ? "superseded" : entry.state
        }
        var states: [(String, Int)] = []
        for entry in entries {
            let state = shownState(entry)
            if let index = states.firstIndex(where: { $0.0 == state }) { states[index].1 += 1 } else { states.append((state, 1)) }
        }
        let counts = states.map { "\(HumanFormat.count(Int64($0.1))) \($0.0)" }.joined(separator: ", ")
        let summary = "\(entries.count) \(entries.count == 1 ? "change" : "changes") (\(counts)); "
            + "'syncctl outbox \(source.name)' lists them"
        let parked = entries.filter { shownState($0) == "parked" }
        var lines = parked.prefix(Self.parkedShown).map { entry in
            "parked \(entry.operation) of \(HumanFormat.printable(entry.id)) (outbox \(entry.seq)): "
                + (entry.lastError.map(HumanFormat.printable) ?? entry.lastStatus.map { "HTTP \($0)" } ?? "refused")
        }
        if parked.count > Self.parkedShown { lines.append("… and \(parked.count - Self.parkedShown) more parked") }
        return (summary, lines)
    }
}

/// The name a person probably meant: the configured name nearest to a mistyped one.
public enum SourceNameSuggestion {
    /// The configured name nearest to `name` by edit distance, if near enough to be a typo (at most a third of
    /// the longer name's characters differ, and at least one stays); ties go to the first in `names`.
    public static func nearest(to name: String, in names: [String]) -> String? {
        var best: (name: String, distance: Int)?
        for candidate in names {
            let distance = editDistance(Array(name.lowercased()), Array(candidate.lowercased()))
            let limit = max(1, max(name.count, candidate.count) / 3)
            guard distance <= limit, distance < max(name.count, candidate.count) else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
