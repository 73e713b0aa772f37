import Testing
@testable import SyncCore

/// `MaxRecordBytes=`: what `syncctl get` and `List` can return whole, 32 MiB at most.
@Suite("Configuration MaxRecordBytes=")
struct ConfigurationMaxRecordBytesTests {
    @Test("the default is the most syncd serves; a smaller size is taken")
    func values() {
        #expect(ConfigurationSourceTests.source("[Source]\nURL=https://h/items\n")?.maxRecordBytes == 32 << 20)
        #expect(ConfigurationSourceTests.source("[Source]\nURL=https://h/items\nMaxRecordBytes=4M\n")?.maxRecordBytes == 4 << 20)
        #expect(ConfigurationSourceTests.source("[Source]\nURL=https://h/items\nMaxRecordBytes=32M\n")?.maxRecordBytes == 32 << 20)
    }

    @Test("zero or more than 32M is an error with FILE:LINE", arguments: ["0", "33M", "64M"])
    func bad(value: String) {
        #expect(ConfigurationSourceTests.problems("[Source]\nURL=https://h/items\nMaxRecordBytes=\(value)\n") == [
            "posts.source:3: MaxRecordBytes: must be from 1 to 32M: syncctl get and the List call return a record whole, "
                + "in one reply of at most 64 MiB",
        ])
    }
}
