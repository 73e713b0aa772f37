import Testing
@testable import SyncRemote

/// gzip bodies decoded by syncd (`GzipDecoder`): a body cut before its CRC-32 and length trailer is not complete
/// (libcurl's own decoder takes it as whole), a wrong CRC-32 is damaged.
@Suite("GzipDecoder")
struct GzipDecoderTests {
    /// `[{"id":1,"n":12345678901234567890}]` compressed by Python's gzip (mtime 0): 45 bytes, the last 8 the trailer.
    static let body: [UInt8] = hex("1f8b08000000000002038bae56ca4c51b232d451ca039246c626a666e616960608566d2c002eac254b23000000")
    static let text = #"[{"id":1,"n":12345678901234567890}]"#

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    /// Decodes `input` fed in pieces of `step` bytes: the text and whether the decoder saw a whole body.
    func decode(_ input: [UInt8], step: Int = 1 << 20) throws -> (String, complete: Bool) {
        let api = try CurlLibrary.shared.acquire()
        defer { CurlLibrary.shared.release() }
        let decoder = try #require(GzipDecoder(api: api), "libcurl brings zlib")
        var out: [UInt8] = []
        var start = 0
        while start < input.count {
            let end = min(input.count, start + step)
            let piece = Array(input[start..<end])
            try piece.withUnsafeBytes { try decoder.feed($0) { out += $0 } }
            start = end
        }
        return (String(decoding: out, as: UTF8.self), decoder.isComplete)
    }

    @Test(arguments: [1, 7, 1 << 20])
    func aWholeBodyDecodesAndIsComplete(step: Int) throws {
        let (text, complete) = try decode(Self.body, step: step)
        #expect(text == Self.text)
        #expect(complete)
    }

    @Test(arguments: [1, 4, 8])
    func aBodyCutInItsTrailerIsNotComplete(cut: Int) throws {
        let (text, complete) = try decode(Array(Self.body.dropLast(cut)))
        #expect(text == Self.text, "every byte of the data arrived")
        #expect(!complete)
    }

    @Test func aWrongCRCIsDamaged() throws {
        var body = Self.body
        body[body.count - 8] ^= 0xff
        #expect { try decode(body) } throws: { error in
            guard case GzipDecoder.Failure.damaged(let reason) = error else { return false }
            return reason == "incorrect data check"
        }
    }

    @Test func membersThatFollowOneAnotherAreAllDecoded() throws {
        let (text, complete) = try decode(Self.body + Self.body, step: 5)
        #expect(text == Self.text + Self.text)
        #expect(complete)
        #expect(try decode(Self.body + Self.body.dropLast(8)).complete == false)
    }

    @Test func anEmptyBodyIsComplete() throws {
        #expect(try decode([]) == ("", true))
    }
}
