import Testing
@testable import SyncCore

/// `MaxRecordBytes=`: a record larger than the limit stops the scan, as soon as its bytes pass it.
@Suite("RecordScanner record limit")
struct RecordScannerRecordLimitTests {
    @Test("a record of exactly the limit passes, one byte more is refused with its index")
    func limit() throws {
        // {"id":2,"p":"aaaa"} is 19 bytes, its "}" at byte 28.
        let document = Array(json: #"[{"id":1},{"id":2,"p":"aaaa"}]"#)
        var fits = RecordScanner(options: RecordScannerOptions(maxRecordBytes: 19))
        var sizes: [Int] = []
        try fits.feed(document) { sizes.append($0.bytes.count) }
        #expect(try fits.finish() == 2 && sizes == [8, 19])
        var tooSmall = RecordScanner(options: RecordScannerOptions(maxRecordBytes: 18))
        var seen = 0
        #expect(throws: JSONScanError(kind: .recordTooLarge(index: 1, limit: 18), offset: 28)) {
            try tooSmall.feed(document) { _ in seen += 1 }
        }
        #expect(seen == 1)
    }

    @Test("a record spanning chunks is refused at the chunk that passes the limit, before it is whole")
    func spanningChunks() throws {
        var scanner = RecordScanner(options: RecordScannerOptions(maxRecordBytes: 1000))
        try scanner.feed(Array(json: #"[{"id":1},{"id":2,"pad":""#)) { _ in }
        try scanner.feed(Array(repeating: UInt8(ascii: "a"), count: 600)) { _ in }
        // 15 + 600 bytes held; the next 600 pass the limit while the record is still open.
        #expect(throws: JSONScanError(kind: .recordTooLarge(index: 1, limit: 1000), offset: 1225)) {
            try scanner.feed(Array(repeating: UInt8(ascii: "a"), count: 600)) { _ in }
        }
        #expect(throws: JSONScanError(kind: .recordTooLarge(index: 1, limit: 1000), offset: 1225)) { _ = try scanner.finish() }
    }

    @Test("a record past the limit is refused for its size, not for what else is wrong with it, however it is cut")
    func sizeBeforeMissingID() throws {
        // {"x":"aaaaaaaaaaaaaaaaaaaaaaaa"} is 32 bytes with no ID: too large for 20 in one chunk or cut inside it.
        let document = Array(json: #"[{"id":1},{"x":"aaaaaaaaaaaaaaaaaaaaaaaa"}]"#)
        for cut in [nil, 25] as [Int?] {
            var scanner = RecordScanner(options: RecordScannerOptions(maxRecordBytes: 20))
            var emitted: [String] = []
            do {
                for part in cut.map({ [Array(document[..<$0]), Array(document[$0...])] }) ?? [document] {
                    try scanner.feed(part) { emitted.append($0.id.key) }
                }
                Issue.record("a 32-byte record passed a 20-byte limit")
            } catch let error as JSONScanError {
                #expect(error.kind == .recordTooLarge(index: 1, limit: 20), "cut at \(String(describing: cut))")
            }
            #expect(emitted == ["1"])
        }
    }

    @Test("the message names the record and the limit")
    func message() {
        #expect(JSONScanError(kind: .recordTooLarge(index: 3, limit: 1000), offset: 5000).description
                == "record 3 is larger than 1000 bytes (at byte 5000)")
    }
}
