// Test support for RecordScanner: feeding a document in given pieces and recording
// everything the scanner does, so that different feedings can be compared exactly.

@testable import SyncCore
import Testing

/// A copy of an emitted record that outlives the callback.
struct RecordCopy: Equatable, Sendable, CustomStringConvertible {
    var index: Int
    var key: String
    var kind: RecordID.Kind
    var version: String?
    var bytes: [UInt8]
    /// Whether the record's `id` agrees with the key and kind read without a string (`withIDBytes`, `idKind`):
    /// always expected.
    var idAgrees = true

    init(_ record: ScannedRecord) {
        index = record.index
        key = record.withIDBytes { String(decoding: $0, as: UTF8.self) }
        kind = record.idKind
        version = record.version
        bytes = Array(record.bytes)
        idAgrees = record.id.key == key && record.id.kind == kind
    }

    init(_ index: Int, _ key: String, _ kind: RecordID.Kind, version: String? = nil, bytes: String) {
        self.index = index
        self.key = key
        self.kind = kind
        self.version = version
        self.bytes = Array(bytes.utf8)
    }

    var description: String {
        "#\(index) \(kind) \(key.debugDescription) v=\(version?.debugDescription ?? "nil") \(String(decoding: bytes, as: UTF8.self))"
    }
}

/// Everything a scan produced: the records emitted, then the count or the error.
struct ScanOutcome: Equatable, CustomStringConvertible {
    var records: [RecordCopy] = []
    var count: Int?
    var error: JSONScanError?

    var description: String {
        "records \(records), count \(count.map(String.init) ?? "-"), error \(error.map(String.init(describing:)) ?? "-")"
    }
}

/// Feeds `document` cut at `cuts` (sorted offsets), then finishes; `skipsByBlocks: false` scans with the
/// byte-at-a-time reference.
func scan(_ document: [UInt8], options: RecordScannerOptions, cuts: [Int] = [], skipsByBlocks: Bool = true) -> ScanOutcome {
    var scanner = RecordScanner(options: options, skipsByBlocks: skipsByBlocks)
    var outcome = ScanOutcome()
    var start = 0
    do {
        for end in cuts + [document.count] where end >= start {
            try scanner.feed(Array(document[start..<end])) { outcome.records.append(RecordCopy($0)) }
            start = end
        }
        outcome.count = try scanner.finish()
    } catch let error as JSONScanError {
        outcome.error = error
    } catch {
        Issue.record("unexpected error type: \(error)")
    }
    return outcome
}

/// Feeds `document` whole, byte by byte, and in `randomSplits` random cuttings, and
/// checks that every feeding gives the same outcome; returns the whole-feed outcome.
func scanEverySplit(
    _ document: [UInt8], options: RecordScannerOptions, randomSplits: Int = 24,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> ScanOutcome {
    let whole = scan(document, options: options)
    let byteByByte = scan(document, options: options, cuts: Array(0..<document.count))
    #expect(byteByByte == whole, "byte-by-byte feeding differs", sourceLocation: sourceLocation)
    // Seeded, so failures reproduce.
    var random = SplitMix64Jitter(seed: UInt64(document.count))
    for _ in 0..<randomSplits where document.count > 1 {
        let pieces = Int.random(in: 1...min(8, document.count), using: &random)
        let cuts = (0..<pieces).map { _ in Int.random(in: 0...document.count, using: &random) }.sorted()
        let outcome = scan(document, options: options, cuts: cuts)
        #expect(outcome == whole, "feeding cut at \(cuts) differs", sourceLocation: sourceLocation)
    }
    return whole
}

extension Array where Element == UInt8 {
    /// The UTF-8 bytes of `text`.
    init(json text: String) { self = Array(text.utf8) }
}
