import SyncCore
import Testing
@testable import SyncControl

/// The human status table keeps its columns aligned whatever the counts ("1 record" beside "12 records").
@Suite("Status table alignment")
struct StatusFormatterAlignmentTests {
    @Test("record counts are right-aligned and the word padded, so the next column lines up")
    func recordColumn() throws {
        let now = try #require(Timestamp(rfc3339: "2026-11-29T10:00:12Z"))
        var one = FakeStatus.source
        one.name = "one"
        one.records = 1
        var many = FakeStatus.source
        many.name = "many"
        many.records = 12_000
        let text = StatusFormatter(now: now, color: false, noLegend: true).format(ManagerStatus(daemon: FakeStatus.daemon, sources: [one, many]))
        #expect(text == """
            ● one   idle       1 record   synced 12s ago
                http://localhost:3000/posts

            ● many  idle  12,000 records  synced 12s ago
                http://localhost:3000/posts

            """)
    }
}
