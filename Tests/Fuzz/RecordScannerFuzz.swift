// libFuzzer target for RecordScanner. Built by run-fuzz.sh together with the
// sources of Sources/SyncCore/JSON (not as a module), so no import is needed.
//
// Each input is scanned whole, then in two cuttings derived from its bytes, with and
// without a records path. Any difference between feedings, or a broken invariant of
// the emitted records, traps: a crash is a bug.

/// What one scan produced.
private struct FuzzOutcome: Equatable {
    var records: [[UInt8]] = []
    var keys: [String] = []
    var versions: [String?] = []
    var count: Int?
    var error: JSONScanError?
}

/// Scans `input` cut at `cuts` (sorted offsets) with `options`.
private func fuzzScan(_ input: UnsafeRawBufferPointer, options: RecordScannerOptions, cuts: [Int]) -> FuzzOutcome {
    var scanner = RecordScanner(options: options)
    var outcome = FuzzOutcome()
    var start = 0
    do {
        for end in cuts + [input.count] where end >= start {
            try scanner.feed(UnsafeRawBufferPointer(rebasing: input[start..<end])) { record in
                // Invariants: records in order, bytes from '{' to '}', a non-empty ID.
                guard record.index == outcome.records.count,
                      record.bytes.first == UInt8(ascii: "{"), record.bytes.last == UInt8(ascii: "}"),
                      !record.id.key.isEmpty
                else { fatalError("broken record invariant at index \(record.index)") }
                outcome.records.append(Array(record.bytes))
                outcome.keys.append(record.id.key)
                outcome.versions.append(record.version)
            }
            start = end
        }
        outcome.count = try scanner.finish()
        guard outcome.count == outcome.records.count, scanner.bytesConsumed == Int64(input.count) else {
            fatalError("count or bytesConsumed disagrees")
        }
    } catch let error as JSONScanError {
        outcome.error = error
        guard error.offset >= 0, error.offset <= Int64(input.count) else {
            fatalError("error offset \(error.offset) outside the input")
        }
    } catch {
        fatalError("unexpected error type \(error)")
    }
    return outcome
}

/// libFuzzer entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // Deterministic cut points from the data (FNV-1a).
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in input {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
    }
    let limit = UInt64(size + 1)
    let first = Int(hash % limit)
    let second = Int((hash >> 21) % limit)
    let cuttings: [[Int]] = [
        [first],
        [min(first, second), max(first, second)],
        Array(0..<min(size, 64)),  // the first bytes one by one
    ]
    let optionSets = [
        RecordScannerOptions(versionField: "v"),
        RecordScannerOptions(recordsPath: ["data"], idField: "k", versionField: "id", maxDepth: 8, maxIDBytes: 6),
        RecordScannerOptions(recordsPath: ["a", "1"], maxDepth: 16),
    ]
    for options in optionSets {
        let whole = fuzzScan(input, options: options, cuts: [])
        for cuts in cuttings {
            let split = fuzzScan(input, options: options, cuts: cuts)
            if split != whole {
                fatalError("feeding cut at \(cuts) differs: \(split) vs \(whole)")
            }
        }
    }
    return 0
}
