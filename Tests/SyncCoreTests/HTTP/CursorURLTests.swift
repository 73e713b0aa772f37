import Testing
@testable import SyncCore

@Suite("CursorURL: the next page of a cursor listing")
struct CursorURLTests {
    @Test("the parameter is added, or replaced, and the token encoded", arguments: [
        ("https://h/items", "cursor", "abc", "https://h/items?cursor=abc"),
        ("https://h/items?limit=50", "cursor", "a+b/c=", "https://h/items?limit=50&cursor=a%2Bb%2Fc%3D"),
        ("https://h/items?cursor=old&limit=50", "cursor", "new", "https://h/items?cursor=new&limit=50"),
        ("https://h/items?after=1#x", "after", "2", "https://h/items?after=2"),
    ])
    func next(base: String, parameter: String, token: String, expected: String) {
        #expect(CursorURL.url(base: base, parameter: parameter, token: token) == expected)
    }
}
