// RecordScanner with block skipping (ByteBlock) against the byte-at-a-time reference: the same
// records, IDs, versions, errors and error offsets on inputs built to put escapes, backslash
// runs, UTF-8 sequences, bad bytes and the end of input at and across the edges of blocks and
// chunks. The differential fuzzer (Tests/Fuzz) does the same on random inputs.

@testable import SyncCore
import Testing

/// Expects the same outcome from both scanners, whole and in a few cuttings; returns the whole one.
@discardableResult
private func expectSameWithAndWithoutBlocks(
    _ document: [UInt8], options: RecordScannerOptions = RecordScannerOptions(versionField: "v"),
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> ScanOutcome {
    let reference = scan(document, options: options, cuts: [], skipsByBlocks: false)
    let n = document.count
    for cuts in [[], [n / 2], [n / 3, 2 * n / 3], [max(n - 1, 0)]] {
        let blocks = scan(document, options: options, cuts: cuts, skipsByBlocks: true)
        #expect(blocks == reference, "cuts \(cuts) of \(String(decoding: document, as: UTF8.self).debugDescription)",
                sourceLocation: sourceLocation)
    }
    return reference
}

private let a40 = String(repeating: "a", count: 40)

/// Contents of a string value: plain, escaped, multi-byte and malformed, each after 40 plain bytes (so that
/// the scan is past its first four words and skipping by blocks) and again further on.
private let stringContents: [[UInt8]] = {
    var contents: [String] = [
        String(repeating: "a", count: 150),
        a40 + #"\""# + a40,
        a40 + #"\\"# + a40,
        a40 + #"\/\b\f\n\r\t"# + a40,
        a40 + #"\u00e9\ud83d\ude00"# + a40,
        a40 + "é😀日" + a40 + "ß" + a40,
        a40 + #"\ud83d"# + a40,  // unpaired surrogate
        a40 + #"\x"# + a40,  // invalid escape
    ]
    // Backslash runs of each length: even ends the string at the quote (then 'b' is unexpected), odd escapes it.
    for run in 1...9 {
        contents.append(a40 + String(repeating: "\\", count: run) + "\"" + String(repeating: "b", count: 30))
    }
    var bytes = contents.map { Array($0.utf8) }
    // Bad bytes in a string: a control byte, invalid and overlong UTF-8, a surrogate, beyond U+10FFFF, a lone continuation.
    for bad: [UInt8] in [[0x01], [0x1F], [0x7F], [0xC3, 0x28], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xFF]] {
        bytes.append(Array(a40.utf8) + bad + Array(a40.utf8))
    }
    return bytes
}()

@Suite("RecordScanner block skipping")
struct RecordScannerBlockTests {
    /// Each content at every alignment to the block and word edges (the padding shifts it by one byte each time).
    @Test(arguments: 0..<stringContents.count)
    func stringContentAtEveryAlignment(_ index: Int) {
        for padding in 0..<70 {
            let document = Array("[".utf8) + Array(repeating: UInt8(ascii: " "), count: padding)
                + Array(#"{"id":1,"v":""#.utf8) + stringContents[index] + Array(#""}]"#.utf8)
            expectSameWithAndWithoutBlocks(document)
        }
    }

    /// The input ends inside a long string, an escape, a `\u` escape or a UTF-8 sequence.
    @Test func truncatedInsideLongStrings() {
        let document = Array(#"[{"id":1,"v":""#.utf8) + Array((a40 + #"\u00e9\\"# + a40 + "é😀" + a40).utf8)
        for end in 0...document.count {
            let outcome = expectSameWithAndWithoutBlocks(Array(document[0..<end]))
            #expect(outcome.error?.kind == .truncated)
        }
    }

    /// Long member names and IDs: the record's key capture and the ID's go through the block path.
    @Test func longKeysAndIDs() {
        let longKey = String(repeating: "k", count: 70)
        let longID = String(repeating: "i", count: 90)
        let document = Array(#"[{"\#(longKey)":"\#(a40)","id":"\#(longID)","v":"\#(a40)\u00e9"},{"id":"\#(a40)é","v":1}]"#.utf8)
        let outcome = expectSameWithAndWithoutBlocks(document)
        #expect(outcome.records.map(\.key) == [longID, a40 + "é"])
        #expect(outcome.records.first?.version == a40 + "é")
        let tooLong = expectSameWithAndWithoutBlocks(document, options: RecordScannerOptions(maxIDBytes: 64))
        #expect(tooLong.error?.kind == .invalidID(index: 0, reason: "ID longer than 64 bytes"))
    }

    /// Long strings deep in nested values, and nesting beyond the limit.
    @Test func deepNesting() {
        let nested = String(repeating: "[", count: 60) + "\"\(a40)\(a40)\"" + String(repeating: "]", count: 60)
        let document = Array(#"[{"id":1,"v":\#(nested),"w":"\#(a40)"}]"#.utf8)
        #expect(expectSameWithAndWithoutBlocks(document).count == 1)
        let shallow = expectSameWithAndWithoutBlocks(document, options: RecordScannerOptions(maxDepth: 32))
        #expect(shallow.error?.kind == .depthExceeded(32))
    }

    /// A listing of many records with long values, fed in chunks of every size up to 130 bytes.
    @Test func manyRecordsInSmallChunks() {
        let records = (0..<20).map { #"{"id":\#($0),"v":"\#(a40)\#($0)","body":"\#(a40)\\n\#(a40)é\#(a40)"}"# }
        let document = Array(("[" + records.joined(separator: ",") + "]").utf8)
        let reference = scan(document, options: RecordScannerOptions(versionField: "v"), cuts: [], skipsByBlocks: false)
        #expect(reference.count == 20)
        for size in 1...130 {
            let cuts = Array(stride(from: size, to: document.count, by: size))
            let blocks = scan(document, options: RecordScannerOptions(versionField: "v"), cuts: cuts, skipsByBlocks: true)
            #expect(blocks == reference, "chunks of \(size)")
        }
    }
}
