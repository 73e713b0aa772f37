import Testing
@testable import SyncCore

/// What a reload does to the list of sources: new, changed (refreshed by the core) and removed ones.
@Suite struct SourceListChangesTests {
    static func source(_ name: String, _ url: String = "https://api.example.com/items", line: Int = 1) -> SourceConfiguration {
        SourceConfiguration(name: name, url: url, location: SourceLocation(file: "\(name).source", line: line))
    }

    @Test func anUnchangedConfigurationChangesNothing() {
        let sources = [Self.source("a"), Self.source("b")]
        let changes = SourceListChanges(from: sources, to: sources)
        #expect(changes.entries.isEmpty)
        #expect(changes.removed.isEmpty)
        #expect(changes.changed.isEmpty)
    }

    @Test func newAndChangedSourcesAreListedInTheNewOrderAndOnlyChangedOnesAreRefreshed() {
        let old = [Self.source("a"), Self.source("b"), Self.source("c")]
        let new = [Self.source("d"), Self.source("c", "https://api.example.com/other"), Self.source("a"), Self.source("b", line: 4)]
        let changes = SourceListChanges(from: old, to: new)
        #expect(changes.entries == [.init("d", .added), .init("c", .changed), .init("b", .changed)])
        #expect(changes.changed == ["c", "b"])
        #expect(changes.removed.isEmpty)
    }

    @Test func removedSourcesAreListedByName() {
        let old = [Self.source("zeta"), Self.source("alpha"), Self.source("kept"), Self.source("mid")]
        let changes = SourceListChanges(from: old, to: [Self.source("kept")])
        #expect(changes.removed == ["alpha", "mid", "zeta"])
        #expect(changes.entries.isEmpty)
    }

    @Test func everySourceIsNewAfterAnEmptyConfigurationAndGoneBeforeOne() {
        let sources = [Self.source("b"), Self.source("a")]
        #expect(SourceListChanges(from: [], to: sources).entries == [.init("b", .added), .init("a", .added)])
        #expect(SourceListChanges(from: sources, to: []).removed == ["a", "b"])
    }

    @Test func aRepeatedNameCountsOnceByItsFirstDefinition() {
        let old = [Self.source("a"), Self.source("a", "https://api.example.com/other")]
        let changes = SourceListChanges(from: old, to: [Self.source("a"), Self.source("a", "https://api.example.com/third")])
        #expect(changes.entries.isEmpty)
        #expect(changes.removed.isEmpty)
    }
}
