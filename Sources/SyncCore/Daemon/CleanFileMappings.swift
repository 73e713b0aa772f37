/// Which of the process's mappings hold only clean pages of a file that is mapped read-only and private —
/// code and read-only data of the executable and the shared libraries — decided from the text of
/// `/proc/self/smaps` (proc(5)). The daemon unmaps their resident pages when it goes idle
/// (docs/architecture.md, "Memory"): such a page is an exact copy of the file's page in the page cache,
/// so the next access maps the same bytes again (a minor fault, or a read from the file).
///
/// A mapping qualifies only when all of these hold, because then no byte of it can differ from the file:
/// - it is backed by a file (the name is an absolute path) that still exists (not "(deleted)");
/// - it is not writable and is private: permissions `r-xp` or `r--p` (never `rw`, never shared);
/// - none of its pages is a private copy: `Anonymous:`, `Private_Dirty:`, `Shared_Dirty:` and `Swap:`
///   are all 0 kB. Relocated read-only data (RELRO, written by the dynamic linker and then made
///   read-only) has anonymous pages, or swapped ones under memory pressure, and is never chosen;
/// - it is not locked (`Locked:` 0 kB) and has resident pages (`Rss:` above 0 kB).
public struct CleanFileMappings: Sendable, Equatable {
    /// One mapping to release: its address range and how much of it was resident (KiB).
    public struct Mapping: Sendable, Equatable {
        /// First address of the mapping.
        public var start: UInt
        /// One past its last address.
        public var end: UInt
        /// Its resident size when smaps was read, in KiB.
        public var residentKiB: Int
    }

    /// The qualifying mappings, in the order of smaps (ascending addresses).
    public private(set) var mappings: [Mapping] = []

    /// Their resident size together, in KiB.
    public var residentKiB: Int { mappings.reduce(0) { $0 + $1.residentKiB } }

    /// Reads the text of `/proc/PID/smaps`. Lines it does not understand are ignored; a mapping whose
    /// header or counters cannot be read does not qualify.
    public init(smaps text: String) {
        var current: Candidate?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let header = Candidate(header: line) {
                if let done = current?.qualifyingMapping { mappings.append(done) }
                current = header
            } else if current != nil {
                current?.read(counter: line)
            }
        }
        if let done = current?.qualifyingMapping { mappings.append(done) }
    }

    /// A mapping being read: its header, then its counters.
    private struct Candidate {
        var start: UInt
        var end: UInt
        /// Whether the header allows it at all (a read-only private mapping of an existing file).
        var eligible: Bool
        var counters: [Substring: Int] = [:]

        /// The counters that must all be present and 0 kB.
        static let mustBeZero: [Substring] = ["Anonymous", "Private_Dirty", "Shared_Dirty", "Swap", "Locked"]

        /// Parses "start-end perms offset dev inode [path]"; nil if `line` is not a mapping header.
        init?(header line: Substring) {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, !fields[0].hasSuffix(":") else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                  start < end else { return nil }
            self.start = start
            self.end = end
            let path = fields.count == 6 ? fields[5].drop { $0 == " " } : ""
            let permissions = fields[1]
            eligible = (permissions == "r-xp" || permissions == "r--p")
                && path.hasPrefix("/") && !path.hasSuffix(" (deleted)")
        }

        /// Records "Name:   N kB".
        mutating func read(counter line: Substring) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 3, parts[0].hasSuffix(":"), parts[2] == "kB", let value = Int(parts[1]) else { return }
            counters[parts[0].dropLast()] = value
        }

        /// The mapping, if it qualifies.
        var qualifyingMapping: Mapping? {
            guard eligible, let resident = counters["Rss"], resident > 0 else { return nil }
            for name in Candidate.mustBeZero where counters[name] != 0 { return nil }
            return Mapping(start: start, end: end, residentKiB: resident)
        }
    }
}
