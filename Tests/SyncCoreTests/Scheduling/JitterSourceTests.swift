import Testing
@testable import SyncCore

@Suite("JitterSource")
struct JitterSourceTests {
    @Test func splitMixIsDeterministicPerSeed() {
        var a = SplitMix64Jitter(seed: 42)
        var b = SplitMix64Jitter(seed: 42)
        var c = SplitMix64Jitter(seed: 43)
        let sa = (0..<100).map { _ in a.fraction() }
        #expect(sa == (0..<100).map { _ in b.fraction() })
        #expect(sa != (0..<100).map { _ in c.fraction() })
    }

    @Test func splitMixKnownFirstOutput() {
        // Reference value of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        var generator = SplitMix64Jitter(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
    }

    @Test(arguments: [UInt64(1), 7, 123_456_789])
    func fractionsAreInTheUnitIntervalAndRoughlyUniform(seed: UInt64) {
        var jitter = SplitMix64Jitter(seed: seed)
        let values = (0..<20_000).map { _ in jitter.fraction() }
        #expect(values.allSatisfy { $0 >= 0 && $0 < 1 })
        let mean = values.reduce(0, +) / Double(values.count)
        #expect(abs(mean - 0.5) < 0.01)
    }

    @Test func systemAndConstantSources() {
        var system = SystemJitter()
        #expect((0..<1_000).allSatisfy { _ in (0..<1).contains(system.fraction()) })
        var constant = ConstantJitter(0.25)
        #expect(constant.fraction() == 0.25)
    }
}
