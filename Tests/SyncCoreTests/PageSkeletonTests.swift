import Testing
@testable import SyncCore

@Suite("PageSkeleton: a page without its records")
struct PageSkeletonTests {
    static func skeleton(_ path: [String], _ json: String, chunk: Int = 3, limit: Int = 1 << 20) -> PageSkeleton {
        var skeleton = PageSkeleton(recordsPath: path, limit: limit)
        let bytes = Array(json.utf8)
        stride(from: 0, to: bytes.count, by: chunk).forEach { skeleton.feed(Array(bytes[$0..<min($0 + chunk, bytes.count)])) }
        return skeleton
    }

    @Test("the records array is kept empty, every other member as it is", arguments: [
        (["results"], #"{"count": 2, "results": [{"id": 1, "n": "]}"}, {"id": [2]}], "next": "/p2"}"#,
         #"{"count": 2, "results": [], "next": "/p2"}"#),
        (["data", "items"], #"{"data": {"items": [{"a": "\"["}], "links": {"next": null}}, "items": [1]}"#,
         #"{"data": {"items": [], "links": {"next": null}}, "items": [1]}"#),
        (["pages", "1"], #"{"pages": [[1, 2], [3, 4]]}"#, #"{"pages": [[1, 2], []]}"#),
        ([], #"[{"id": 1}, {"id": 2}]"#, "[]"),
        (["results"], #"{"results\"": [1], "results": [2]}"#, #"{"results\"": [1], "results": []}"#),
    ])
    func keeps(path: [String], json: String, expected: String) {
        let skeleton = Self.skeleton(path, json)
        #expect(String(decoding: skeleton.bytes, as: UTF8.self) == expected)
        #expect(skeleton.document != nil)
    }

    @Test("members besides the records larger than the limit are dropped")
    func overflow() {
        let skeleton = Self.skeleton(["results"], #"{"results": [{"id": 1}], "blob": "0123456789"}"#, limit: 20)
        #expect(skeleton.overflowed && skeleton.bytes.isEmpty && skeleton.document == nil)
        let records = Self.skeleton(["results"], #"{"results": [{"id": 1, "blob": "0123456789012345678901234"}]}"#, limit: 20)
        #expect(!records.overflowed && records.document != nil)
    }
}
