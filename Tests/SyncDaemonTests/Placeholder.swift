import Testing
@Test func placeholderDaemon() { #expect(1 + 1 == 2) }
