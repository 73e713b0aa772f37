import Testing
@testable import SyncCore

@Suite("ItemURL: one record's URL")
struct ItemURLTests {
    @Test("derived from URL=", arguments: [
        // Django REST Framework's DefaultRouter: trailing slash on both.
        ("http://127.0.0.1:8000/api/notes/", "251", "http://127.0.0.1:8000/api/notes/251/"),
        ("http://localhost:3000/posts", "7", "http://localhost:3000/posts/7"),
        // The query stays the query, after the ID.
        ("https://h/api/notes/?format=json", "7", "https://h/api/notes/7/?format=json"),
        ("https://h/items?format=json&x=1", "a b", "https://h/items/a%20b?format=json&x=1"),
        // A fragment is never part of a request.
        ("https://h/items#top", "1", "https://h/items/1"),
        // IDs are one path segment: slashes and dot segments cannot walk the path.
        ("https://h/items", "../admin", "https://h/items/..%2Fadmin"),
        ("https://h/items/", "..", "https://h/items/%2E%2E/"),
    ])
    func derived(url: String, id: String, expected: String) {
        #expect(ItemURL(collectionURL: url, template: nil).url(for: id) == expected)
    }

    @Test("ItemURL= replaces every {id}, percent-encoded")
    func template() {
        let rule = ItemURL(collectionURL: "https://h/list", template: "https://h/item/{id}?id={id}")
        #expect(rule.url(for: "x/y?") == "https://h/item/x%2Fy%3F?id=x%2Fy%3F")
        #expect(rule.example == "https://h/item/{id}?id={id}")
    }

    @Test("the example shows where the ID goes")
    func example() {
        #expect(ItemURL(collectionURL: "http://h/api/notes/?format=json", template: nil).example == "http://h/api/notes/{id}/?format=json")
        #expect(ItemURL(collectionURL: "http://h/posts", template: nil).example == "http://h/posts/{id}")
    }
}

@Suite("ItemURL: the template suggested after a failure")
struct ItemURLAlternativeTests {
    @Test("the slash after {id} toggled, the query kept; never the template that failed", arguments: [
        ("http://h/api/notes/", nil, "http://h/api/notes/{id}"),
        ("http://h/posts", nil, "http://h/posts/{id}/"),
        ("http://h/api/notes/?format=json", nil, "http://h/api/notes/{id}?format=json"),
        ("http://h/list", "http://h/item/{id}/", "http://h/item/{id}"),
        ("http://h/list", "http://h/item/{id}#x", "http://h/item/{id}/#x"),
    ] as [(String, String?, String)])
    func alternative(url: String, template: String?, expected: String) {
        let rule = ItemURL(collectionURL: url, template: template)
        #expect(rule.alternative == expected)
        #expect(rule.alternative != rule.example)
    }

    @Test("no suggestion when the ID is not at the end of the path")
    func none() {
        #expect(ItemURL(collectionURL: "http://h/list", template: "http://h/old?id={id}").alternative == nil)
        #expect(ItemURL(collectionURL: "http://h/list", template: "http://h/item/{id}.json").alternative == nil)
    }
}
