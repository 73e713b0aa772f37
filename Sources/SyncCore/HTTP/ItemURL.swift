// The URL of one record of a writable source (docs/local-changes.md, "Item URLs").

/// Builds the URL a record's `PUT` and `DELETE` go to.
///
/// With `ItemURL=` the template's every `{id}` is replaced by the percent-encoded ID. Without it the URL is
/// derived from `URL=`: `URL` + ID + `/` when the path of `URL` ends in `/` (Django REST Framework's
/// `/api/notes/` → `/api/notes/7/`), else `URL` + `/` + ID; a query string of `URL` stays the query.
public struct ItemURL: Sendable, Equatable {
    /// `URL=`.
    public let collectionURL: String
    /// `ItemURL=`, nil when unset.
    public let template: String?

    /// Creates the rule for a source.
    public init(collectionURL: String, template: String?) {
        self.collectionURL = collectionURL
        self.template = template
    }

    /// The item URL of the record with ID `id`.
    public func url(for id: String) -> String {
        let segment = Identifiers.pathSegment(id)
        if let template { return template.replacingEvery("{id}", with: segment) }
        return derived(segment: segment)
    }

    /// What `syncd --check-config --verbose` shows: the item URL with `{id}` where the ID goes.
    public var example: String { template ?? derived(segment: "{id}") }

    /// Another template to suggest when a URL made from `example` failed: the same with the slash after `{id}`
    /// added or removed (`…/notes/{id}/` ↔ `…/notes/{id}`, the query kept); nil when the path does not end in
    /// `{id}`. Never `example` itself: the template that produced the failing URL is not suggested again.
    public var alternative: String? {
        let template = example
        let pathEnd = template.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? template.endIndex
        let path = template[..<pathEnd], rest = template[pathEnd...]
        if path.hasSuffix("{id}/") { return String(path.dropLast()) + rest }
        if path.hasSuffix("{id}") { return String(path) + "/" + rest }
        return nil
    }

    private func derived(segment: String) -> String {
        // The fragment is never sent; the query is kept as the item URL's query.
        var base = Substring(collectionURL)
        if let hash = base.firstIndex(of: "#") { base = base[..<hash] }
        var query: Substring = ""
        if let question = base.firstIndex(of: "?") {
            query = base[question...]
            base = base[..<question]
        }
        let path = base.hasSuffix("/") ? base + segment + "/" : base + "/" + segment
        return path + query
    }
}

extension String {
    /// `self` with every occurrence of `target` replaced by `replacement`.
    public func replacingEvery(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
