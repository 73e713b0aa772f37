import Testing
@testable import SyncCore

@Suite("Identifiers")
struct IdentifiersTests {
    @Test func uuidIsVersion4InCanonicalForm() {
        var generator = SplitMix64Jitter(seed: 7)
        var seen: Set<String> = []
        for _ in 0..<200 {
            let uuid = Identifiers.uuid(using: &generator)
            let parts = uuid.split(separator: "-")
            #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
            #expect(parts[2].first == "4")
            #expect("89ab".contains(parts[3].first!))
            #expect(uuid == uuid.lowercased())
            seen.insert(uuid)
        }
        #expect(seen.count == 200)
    }

    @Test(arguments: [("abc-1_2.~", "abc-1_2.~"), ("a/b", "a%2Fb"), ("é", "%C3%A9"), ("a b?#", "a%20b%3F%23"), ("..", "%2E%2E"), (".", "%2E"), ("a..b", "a..b")])
    func pathSegmentsAreEscaped(_ input: String, _ expected: String) {
        #expect(Identifiers.pathSegment(input) == expected)
    }
}

@Suite("counted")
struct CountedTests {
    @Test(arguments: [(0, "0 records"), (1, "1 record"), (2, "2 records"), (1_000, "1000 records")])
    func nounFollowsTheCount(count: Int, expected: String) {
        #expect(counted(count, "record") == expected)
    }
}
