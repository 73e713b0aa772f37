import Testing
@Test func placeholderSyncStoreTests() { #expect(1 + 1 == 2) }
