// Throughput of RecordScanner on generated listings (100k records, 64 KiB chunks).
// Not a test. Build and run from the repository root:
//   swiftc -O -wmo -parse-as-library Sources/SyncCore/JSON/*.swift Sources/SyncCore/Text/JSONText.swift \
//       bench/scanner-throughput.swift -lm -o .build/scanner-throughput
//   .build/scanner-throughput
// Prints, per document shape, the median and the best of several runs in MB/s (10^6 bytes per
// second) of wall time and of the thread's CPU time (on a shared machine the CPU time is the steadier
// figure: time spent waiting for a core is not in it). Uses only the public interface, so the same
// file builds against an older checkout's scanner for a before/after comparison, with one change: each
// record's ID is read as syncd's records thread reads it, `record.withIDBytes` (no string); a checkout
// older than that call (2026-12-03) reads `record.id.key.utf8.count` instead.

#if canImport(Glibc)
import Glibc
#endif

@main
struct ScannerThroughput {
    static let recordCount = 100_000
    static let chunkSize = 64 * 1024
    static let defaultRuns = 15

    /// Arguments: an optional shape name (`compact`, `pretty`, `non-ASCII`) to run only that one, and
    /// an optional number of runs (0 only builds the listing: `perf stat` of both, subtracted, counts the
    /// cycles of the scans alone).
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        let only = arguments.first
        let runs = arguments.dropFirst().first.flatMap { Int($0) } ?? defaultRuns
        let ascii = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. "
        let unicode = "Größere Übungen für Öl — 日本語のテキスト、絵文字 😀 and more text to reach about a hundred chars."
        let shapes = [
            ("compact", "compact", { listing(body: ascii, pretty: false) }),
            ("pretty", "pretty-printed", { listing(body: ascii, pretty: true) }),
            ("non-ASCII", "compact, non-ASCII bodies", { listing(body: unicode, pretty: false) }),
            ("long", "compact, 2 kB bodies", { listing(body: String(repeating: ascii, count: 20), pretty: false, count: recordCount / 10) }),
        ]
        for (key, name, make) in shapes where only.map({ $0 == key }) ?? true {
            let document = make()
            guard runs > 0 else { continue }
            let (wall, cpu) = try times(document, runs: runs)
            func rate(_ seconds: Double) -> Int { Int(Double(document.count) / seconds / 1e6) }
            print(
                "\(name): \(document.count) bytes; wall median \(rate(median(wall))) MB/s, best \(rate(wall.min() ?? 0)) MB/s;"
                    + " CPU median \(rate(median(cpu))) MB/s, best \(rate(cpu.min() ?? 0)) MB/s"
            )
        }
    }

    /// A listing of typical records: `{"id":…,"title":…,"author":…,"body":…,"tags":[…],"lastModified":…}`.
    static func listing(body: String, pretty: Bool, count: Int = recordCount) -> [UInt8] {
        var document = Array("[\n".utf8)
        for index in 0..<count {
            let record = pretty
                ? "  {\n    \"id\": \(index),\n    \"title\": \"Post number \(index) about things\",\n    \"author\": \"Johnny Appleseed\",\n    \"body\": \"\(body)\",\n    \"tags\": [\n      \"a\",\n      \"b\"\n    ],\n    \"lastModified\": \"2026-11-29T10:00:00Z\"\n  }"
                : #"{"id":\#(index),"title":"Post number \#(index) about things","author":"Johnny Appleseed","body":"\#(body)","tags":["a","b"],"lastModified":"2026-11-29T10:00:00Z"}"#
            document += Array(record.utf8)
            document += Array((index == count - 1 ? "\n]\n" : ",\n").utf8)
        }
        return document
    }

    /// The median of `values`.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// The thread's CPU time in seconds.
    static func threadCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The wall and CPU times, in seconds, of each run scanning `document` in chunks.
    static func times(_ document: [UInt8], runs: Int) throws -> (wall: [Double], cpu: [Double]) {
        let clock = ContinuousClock()
        var wall: [Double] = []
        var cpu: [Double] = []
        for _ in 0..<runs {
            var scanner = RecordScanner(options: RecordScannerOptions(versionField: "lastModified"))
            var checksum = 0
            let cpuStart = threadCPUTime()
            let elapsed = try clock.measure {
                try document.withUnsafeBytes { all in
                    var offset = 0
                    while offset < all.count {
                        let end = min(offset + chunkSize, all.count)
                        try scanner.feed(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { record in
                            checksum &+= record.bytes.count &+ record.withIDBytes { $0.count }
                        }
                        offset = end
                    }
                }
                let count = try scanner.finish()
                precondition(count > 0)
            }
            cpu.append(threadCPUTime() - cpuStart)
            precondition(checksum > 0)
            let (seconds, attoseconds) = elapsed.components
            wall.append(Double(seconds) + Double(attoseconds) / 1e18)
        }
        return (wall, cpu)
    }
}
