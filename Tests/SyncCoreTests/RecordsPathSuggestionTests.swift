import Testing
@testable import SyncCore

/// `syncd --probe` of a page that is not an array: where the records may be.
@Suite("RecordsPathSuggestion")
struct RecordsPathSuggestionTests {
    @Test(arguments: [
        (#"{"data": [{"id": 1}], "meta": {"count": 1}}"#, ["/data"]),
        (#"{"count": 2, "next": null, "results": [{"id": 1}, {"id": 2}]}"#, ["/results"]),
        (#"{"result": {"items": [{"id": "a"}]}, "tags": ["x", "y"]}"#, ["/result/items"]),
        (#"{"a/b": [{"id": 1}], "c~d": [{"id": 2}]}"#, ["/a~1b", "/c~0d"]),
        (#"{"data": [], "ids": [1, 2], "id": 1}"#, []),
        (#"{"x": {"y": {"z": [{"id": 1}]}}}"#, []),
        (#""just text""#, []),
    ])
    func candidates(page: String, expected: [String]) throws {
        #expect(RecordsPathSuggestion.candidates(in: try JSONValue(parsing: Array(page.utf8))) == expected)
    }
}
