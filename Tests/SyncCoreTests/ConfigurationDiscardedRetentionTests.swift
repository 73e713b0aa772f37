import Testing
@testable import SyncCore

/// `DiscardedRetentionSec=` (syncd.conf(5)): how long a change a `ConflictPolicy=` discarded is kept.
@Suite("sources.d: DiscardedRetentionSec=")
struct ConfigurationDiscardedRetentionTests {
    let base = "[Source]\nURL=http://localhost:3000/posts\nWritable=yes\n"

    @Test("30 days unless set; an empty value restores the default")
    func defaultAndSet() throws {
        let standard = try #require(ConfigurationSourceTests.source(base))
        #expect(standard.discardedRetention == .seconds(30 * 86_400))
        #expect(standard.explanation.contains("discarded changes: kept 4w 2d for 'syncctl outbox --discarded' and --restore (DiscardedRetentionSec=)"))
        #expect(try #require(ConfigurationSourceTests.source(base + "DiscardedRetentionSec=7d\n")).discardedRetention == .seconds(7 * 86_400))
        #expect(try #require(ConfigurationSourceTests.source(base + "DiscardedRetentionSec=1h 30min\n")).discardedRetention == .seconds(5_400))
        #expect(try #require(ConfigurationSourceTests.source(base + "DiscardedRetentionSec=7d\nDiscardedRetentionSec=\n")).discardedRetention
                == .seconds(30 * 86_400))
    }

    @Test("a bad value is an error with FILE:LINE")
    func badValues() {
        #expect(ConfigurationSourceTests.problems(base + "DiscardedRetentionSec=0\n")
                == ["posts.source:4: DiscardedRetentionSec: must be greater than 0, e.g. 30s"])
        #expect(ConfigurationSourceTests.problems(base + "DiscardedRetentionSec=soon\n")
                == ["posts.source:4: DiscardedRetentionSec: invalid time span \"soon\": expected a number at \"soon\""])
        #expect(ConfigurationSourceTests.problems(base + "DiscardedRetentionSec=-1d\n")
                == ["posts.source:4: DiscardedRetentionSec: invalid time span \"-1d\": negative time spans are not allowed"])
    }
}
