/// When the daemon unloads libcurl after its last use (docs/architecture.md, "libcurl on demand"): the loop
/// looks `quietPeriod` after it first sees the library loaded, and unloads it only if nothing used it since that
/// look was planned (the library's count of releases unchanged, no one holding it); otherwise it looks again one
/// quiet period later. So the library goes 1–2 quiet periods after its last use, and refreshes that follow each
/// other closer than that load it once.
public struct LibraryLinger: Sendable, Equatable {
    /// How long the library must go unused before it is unloaded.
    public let quietPeriod: Duration
    /// When the next look is due; nil when none is planned.
    public private(set) var due: MonotonicInstant?
    /// The library's count of releases when the look was planned.
    public private(set) var releases: UInt64?

    /// No look planned.
    public init(quietPeriod: Duration = .seconds(2)) {
        self.quietPeriod = quietPeriod
    }

    /// The library is loaded at `now`, its count of releases `releases`: plans a look, unless one is planned.
    public mutating func loaded(releases: UInt64, at now: MonotonicInstant) {
        guard due == nil else { return }
        due = now + quietPeriod
        self.releases = releases
    }

    /// The count to compare with when the planned look is due at `now` (and takes it off the plan); nil otherwise.
    public mutating func look(at now: MonotonicInstant) -> UInt64? {
        guard let due, due <= now, let releases else { return nil }
        self.due = nil
        self.releases = nil
        return releases
    }
}
