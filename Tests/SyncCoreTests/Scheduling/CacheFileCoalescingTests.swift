import Testing
import SyncCore

/// When a local change's cache file rewrite happens (docs/syncd.8.md, "Local changes and the cache file").
@Suite("Cache file coalescing")
struct CacheFileCoalescingTests {
    let rule = CacheFileCoalescing(immediateBytes: 1 << 20, delay: .milliseconds(250))

    @Test func aSmallFileIsRewrittenAtOnce() {
        #expect(rule.decide(fileBytes: nil, scheduled: false) == .now, "no file yet")
        #expect(rule.decide(fileBytes: 0, scheduled: false) == .now)
        #expect(rule.decide(fileBytes: 1 << 20, scheduled: false) == .now, "the limit itself is small")
    }

    @Test func aLargeFileIsRewrittenOnceForABurst() {
        #expect(rule.decide(fileBytes: (1 << 20) + 1, scheduled: false) == .schedule(after: .milliseconds(250)))
        #expect(rule.decide(fileBytes: 105 << 20, scheduled: false) == .schedule(after: .milliseconds(250)))
    }

    @Test func aChangeWhileARewriteIsScheduledJoinsIt() {
        // Whatever the size: the scheduled rewrite reads the store when it runs, so it shows this change too.
        #expect(rule.decide(fileBytes: 105 << 20, scheduled: true) == .joinScheduled)
        #expect(rule.decide(fileBytes: 10, scheduled: true) == .joinScheduled)
    }

    @Test func theDaemonsRuleAndTheOneShotRule() {
        #expect(CacheFileCoalescing.daemon == CacheFileCoalescing(immediateBytes: 256 << 10, delay: .milliseconds(250)))
        #expect(CacheFileCoalescing.never.decide(fileBytes: Int64.max, scheduled: false) == .now)
    }
}
