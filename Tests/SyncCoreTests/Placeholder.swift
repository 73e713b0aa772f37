import Testing
@Test func placeholderSyncCoreTests() { #expect(1 + 1 == 2) }
