// Throughput of RecordScanner on generated listings (100k records, 64 KiB chunks).
// Not a test. Build and run from the repository root:
//   swiftc -O -wmo -parse-as-library Sources/SyncCore/JSON/*.swift Sources/SyncCore/Hashing/*.swift \
//       Sources/SyncCore/Text/*.swift bench/scanner-throughput.swift -lm -o .build/scanner-throughput
//   .build/scanner-throughput
// Prints the best of several runs per document shape, in MB/s (10^6 bytes per second).

@main
struct ScannerThroughput {
    static let recordCount = 100_000
    static let chunkSize = 64 * 1024
    static let runs = 15

    static func main() throws {
        let ascii = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. "
        let unicode = "Größere Übungen für Öl — 日本語のテキスト、絵文字 😀 and more text to reach about a hundred chars."
        let shapes = [
            ("compact", listing(body: ascii, pretty: false)),
            ("pretty-printed", listing(body: ascii, pretty: true)),
            ("compact, non-ASCII bodies", listing(body: unicode, pretty: false)),
        ]
        for (name, document) in shapes {
            let seconds = try bestTime(document)
            let megabytesPerSecond = Int(Double(document.count) / seconds / 1e6)
            print("\(name): \(document.count) bytes, best \(Int(seconds * 1000)) ms, \(megabytesPerSecond) MB/s")
        }
    }

    /// A listing of typical records: `{"id":…,"title":…,"author":…,"body":…,"tags":[…],"lastModified":…}`.
    static func listing(body: String, pretty: Bool) -> [UInt8] {
        var document = Array("[\n".utf8)
        for index in 0..<recordCount {
            let record = pretty
                ? "  {\n    \"id\": \(index),\n    \"title\": \"Post number \(index) about things\",\n    \"author\": \"Johnny Appleseed\",\n    \"body\": \"\(body)\",\n    \"tags\": [\n      \"a\",\n      \"b\"\n    ],\n    \"lastModified\": \"2026-11-29T10:00:00Z\"\n  }"
                : #"{"id":\#(index),"title":"Post number \#(index) about things","author":"Johnny Appleseed","body":"\#(body)","tags":["a","b"],"lastModified":"2026-11-29T10:00:00Z"}"#
            document += Array(record.utf8)
            document += Array((index == recordCount - 1 ? "\n]\n" : ",\n").utf8)
        }
        return document
    }

    /// The best wall time, in seconds, to scan `document` in chunks.
    static func bestTime(_ document: [UInt8]) throws -> Double {
        let clock = ContinuousClock()
        var best = Duration.seconds(1000)
        for _ in 0..<runs {
            var scanner = RecordScanner(options: RecordScannerOptions(versionField: "lastModified"))
            var checksum = 0
            let elapsed = try clock.measure {
                try document.withUnsafeBytes { all in
                    var offset = 0
                    while offset < all.count {
                        let end = min(offset + chunkSize, all.count)
                        try scanner.feed(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { record in
                            checksum &+= record.bytes.count &+ record.id.key.utf8.count
                        }
                        offset = end
                    }
                }
                let count = try scanner.finish()
                precondition(count == recordCount)
            }
            precondition(checksum > 0)
            best = min(best, elapsed)
        }
        let (seconds, attoseconds) = best.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
