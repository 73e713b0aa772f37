import Testing
@Test func placeholderSyncRemoteTests() { #expect(1 + 1 == 2) }
