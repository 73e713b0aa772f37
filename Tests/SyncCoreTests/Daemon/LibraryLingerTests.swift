import Testing
@testable import SyncCore

/// When the daemon looks at libcurl to unload it (docs/architecture.md, "libcurl on demand"), on a manual clock.
@Suite("LibraryLinger")
struct LibraryLingerTests {
    static func at(_ seconds: Int64) -> MonotonicInstant { MonotonicInstant(offset: .seconds(seconds)) }

    /// `look` at `seconds` (mutating calls cannot sit inside `#expect`).
    static func look(_ linger: inout LibraryLinger, at seconds: Int64) -> UInt64? {
        linger.look(at: at(seconds))
    }

    @Test("nothing is planned until the library is seen loaded; the look comes one quiet period later, once, with the count seen")
    func oneLookAfterTheQuietPeriod() {
        var linger = LibraryLinger(quietPeriod: .seconds(2))
        #expect(Self.look(&linger, at: 100) == nil)
        linger.loaded(releases: 7, at: Self.at(10))
        #expect(linger.due == Self.at(12))
        #expect(Self.look(&linger, at: 11) == nil)
        #expect(Self.look(&linger, at: 12) == 7)
        #expect(linger.due == nil && linger.releases == nil)
        #expect(Self.look(&linger, at: 20) == nil)
    }

    @Test("seeing it loaded again before the look moves nothing: the count compared is the one of the first sight")
    func laterSightsDoNotPostpone() {
        var linger = LibraryLinger(quietPeriod: .seconds(2))
        linger.loaded(releases: 3, at: Self.at(0))
        linger.loaded(releases: 5, at: Self.at(1))
        #expect(linger.due == Self.at(2))
        #expect(Self.look(&linger, at: 2) == 3, "a use between the sight and the look keeps it loaded one period more")
        // The loop plans the next look with the count it found.
        linger.loaded(releases: 5, at: Self.at(2))
        #expect(linger.due == Self.at(4) && linger.releases == 5)
    }
}
