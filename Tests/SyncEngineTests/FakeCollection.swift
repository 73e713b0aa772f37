import SyncRemote
@testable import SyncEngine

/// A REST collection in memory, the way Django REST Framework serves one: `GET URL` lists it (paged as `paging`
/// says), `POST URL` creates (201), `GET/PUT/DELETE URL<id>/` read, replace and remove a record, each write
/// raising its integer `version`; `If-Match` with a stale ETag gets 412. Tests assert on `records`, the
/// server's own truth, as well as on the engine's view.
final class FakeCollection: @unchecked Sendable {
    /// How listings are paged.
    enum Paging: Equatable {
        case none
        /// `Link: <…>; rel="next"`.
        case link(Int)
        /// `{"results": […], "next": URL}`.
        case body(Int)
        /// `{"results": […], "cursor": TOKEN}`, next page `URL?cursor=TOKEN`.
        case cursor(Int)
        /// `URL?page=N`; a short page ends it.
        case page(Int)
        /// `URL?offset=N`; a short page ends it.
        case offset(Int)
        /// `Next-Page:` header (Kinto).
        case header(Int)
    }

    let url: String
    var paging: Paging = .none
    /// The records in listing order: ID and body (with `id` and `version`).
    private(set) var records: [(id: String, body: JSONObject)] = []
    /// IDs given to creates without one.
    private var nextID = 100
    /// Whether POST takes the client's ID (DRF with a writable id); otherwise the server numbers records.
    var takesClientIDs = true
    /// Kinto's shapes: records in and out wrapped as `{"data": …}`, the listing as `{"data": […]}`.
    var kinto = false
    /// Change feeds (syncd.conf(5), "Incremental pull"): every write stamps the record's `modified` with the next
    /// number of the collection's clock, a removal leaves a tombstone `{"id", "modified", "deleted": true}`;
    /// `?since=N` lists what changed after N (watermark), `?syncToken=N` the same with the next token in `token` on
    /// the last page (token; listings then are objects `{"results": […], "token": N}` and page by `Next-Page`).
    var deltas = false
    /// Token mode's shapes (see `deltas`).
    var tokens = false
    /// A `since` or `syncToken` below this is refused with 410, as a server that forgot its older changes.
    var forgottenBefore: Int64 = 0
    /// The collection's change clock: the stamp of the latest write.
    private(set) var clock: Int64 = 0
    /// Records removed, with the stamp of their removal.
    private(set) var tombstones: [(id: String, stamp: Int64)] = []

    /// Stamps record `index` with the next tick of the clock.
    private func stamp(_ index: Int) {
        guard deltas else { return }
        clock += 1
        records[index].body["modified"] = .integer(clock)
        tombstones.removeAll { $0.id == records[index].id }
    }

    /// Notes a removal as a tombstone.
    private func tombstone(_ id: String) {
        guard deltas else { return }
        clock += 1
        tombstones.append((id, clock))
    }

    init(url: String = "http://api.test/posts/") { self.url = url }

    /// Adds a record as someone else did on the server.
    func seed(_ id: String, _ fields: [(String, JSONValue)] = [], version: Int64 = 1) {
        var body = JSONObject([("id", .string(id))] + fields)
        body["version"] = .integer(version)
        if let index = records.firstIndex(where: { $0.id == id }) { records[index].body = body } else { records.append((id, body)) }
        if let index = records.firstIndex(where: { $0.id == id }) { stamp(index) }
    }

    /// Changes a record as someone else did: its version goes up.
    func edit(_ id: String, _ key: String, _ value: JSONValue) {
        guard let index = records.firstIndex(where: { $0.id == id }) else { return }
        records[index].body[key] = value
        records[index].body["version"] = .integer((records[index].body["version"]?.integerValue ?? 0) + 1)
        stamp(index)
    }

    /// Removes a record as someone else did.
    func remove(_ id: String) {
        records.removeAll { $0.id == id }
        tombstone(id)
    }

    /// The server's copy of a record.
    func record(_ id: String) -> JSONObject? { records.first { $0.id == id }?.body }

    func etag(_ body: JSONObject) -> String { "\"v\(body["version"]?.integerValue ?? 0)\"" }

    /// Called with each request before it is answered: someone else changing the collection meanwhile.
    var beforeAnswer: ((HTTPRequest) -> Void)?

    /// Answers a request as the server would.
    func answer(_ request: HTTPRequest) -> ScriptedAnswer {
        if let beforeAnswer { beforeAnswer(request) }
        let (path, query) = split(request.url)
        if path == url {
            switch request.method {
            case "GET": return listing(query)
            case "POST": return create(request)
            default: return .status(405)
            }
        }
        guard path.hasPrefix(url) else { return .status(404) }
        let id = String(path.dropFirst(url.count).dropLast(path.hasSuffix("/") ? 1 : 0))
        guard let index = records.firstIndex(where: { $0.id == id }) else {
            return .json(#"{"detail": "Not found."}"#, status: 404)
        }
        if let ifMatch = request.headers.first(where: { $0.name.lowercased() == "if-match" })?.value,
           ifMatch != etag(records[index].body) {
            return .json(#"{"detail": "Precondition failed."}"#, status: 412)
        }
        switch request.method {
        case "GET":
            return .json(wrapped(records[index].body), headers: [("ETag", etag(records[index].body))])
        case "PUT":
            guard var object = unwrapped(request.body) else { return .json(#"{"detail": "JSON parse error"}"#, status: 400) }
            object["id"] = .string(id)
            object["version"] = .integer((records[index].body["version"]?.integerValue ?? 0) + 1)
            records[index].body = object
            stamp(index)
            return .json(wrapped(records[index].body), headers: [("ETag", etag(object))])
        case "DELETE":
            records.remove(at: index)
            tombstone(id)
            return .status(204)
        default:
            return .status(405)
        }
    }

    private func create(_ request: HTTPRequest) -> ScriptedAnswer {
        guard var object = unwrapped(request.body) else { return .json(#"{"detail": "JSON parse error"}"#, status: 400) }
        let id: String
        if takesClientIDs, let given = object["id"]?.stringValue ?? object["id"]?.integerText {
            if kinto, let index = records.firstIndex(where: { $0.id == given }) {
                // Kinto: a POST of a known ID answers 200 with the stored record, unchanged.
                return .json(wrapped(records[index].body), status: 200, headers: [("ETag", etag(records[index].body))])
            }
            guard !records.contains(where: { $0.id == given }) else {
                return .json(#"{"id": ["posts with this id already exists."]}"#, status: 400)
            }
            id = given
        } else {
            nextID += 1
            id = String(nextID)
        }
        object["id"] = .string(id)
        object["version"] = .integer(1)
        records.append((id, object))
        stamp(records.count - 1)
        return .json(wrapped(records[records.count - 1].body), status: 201, headers: [("ETag", etag(object))])
    }

    /// A written record, out of its envelope when `kinto`.
    private func unwrapped(_ body: [UInt8]?) -> JSONObject? {
        guard let body, let object = try? JSONValue(parsing: body).objectValue else { return nil }
        return kinto ? object["data"]?.objectValue : object
    }

    /// A record as the server sends it.
    private func wrapped(_ record: JSONObject) -> String {
        JSONValue.object(kinto ? JSONObject([("data", .object(record))]) : record).serialized()
    }

    private func listing(_ query: [String: String]) -> ScriptedAnswer {
        var all = records.map { JSONValue.object($0.body) }
        let since = query["since"] ?? query["syncToken"]
        if let since {
            guard let after = Int64(since), after >= forgottenBefore else { return .json(#"{"error": "too old"}"#, status: 410) }
            let changed = records.compactMap { record -> (Int64, JSONValue)? in
                guard let stamp = record.body["modified"]?.integerValue, stamp > after else { return nil }
                return (stamp, .object(record.body))
            }
            let removed = tombstones.filter { $0.stamp > after }.map { tombstone -> (Int64, JSONValue) in
                (tombstone.stamp, .object(JSONObject([("id", .string(tombstone.id)), ("modified", .integer(tombstone.stamp)), ("deleted", .bool(true))])))
            }
            all = (changed + removed).sorted { $0.0 < $1.0 }.map(\.1)
        }
        if tokens {
            // Next-Page paging of {"results": […]}, the token on the last page.
            let size: Int
            if case .header(let pageSize) = paging { size = pageSize } else { size = max(all.count, 1) }
            let number = Int(query["page"] ?? "1") ?? 1
            let start = (number - 1) * size
            var members: [(String, JSONValue)] = [("results", .array(Array(all.dropFirst(start).prefix(size))))]
            var headers: [(String, String)] = []
            if start + size < all.count {
                headers.append(("Next-Page", "\(url)?\(since.map { "syncToken=\($0)&" } ?? "")page=\(number + 1)"))
            } else {
                members.append(("token", .string(String(clock))))
            }
            return .json(JSONValue.object(JSONObject(members)).serialized(), headers: headers)
        }
        func page(_ size: Int, from start: Int) -> [JSONValue] { Array(all.dropFirst(start).prefix(size)) }
        func array(_ values: [JSONValue]) -> String {
            kinto ? JSONValue.object(JSONObject([("data", .array(values))])).serialized() : JSONValue.array(values).serialized()
        }
        switch paging {
        case .none:
            return .json(array(all))
        case .link(let size), .header(let size):
            let number = Int(query["page"] ?? "1") ?? 1
            let start = (number - 1) * size
            var headers: [(String, String)] = []
            if start + size < all.count {
                let next = "\(url)?\(since.map { "since=\($0)&" } ?? "")page=\(number + 1)"
                headers.append(paging == .link(size) ? ("Link", "<\(next)>; rel=\"next\"") : ("Next-Page", next))
            }
            return .json(array(page(size, from: start)), headers: headers)
        case .body(let size):
            let number = Int(query["page"] ?? "1") ?? 1
            let start = (number - 1) * size
            let next: JSONValue = start + size < all.count ? .string("\(url)?page=\(number + 1)") : .null
            return .json(JSONValue.object(JSONObject([("results", .array(page(size, from: start))), ("next", next)])).serialized())
        case .cursor(let size):
            let start = Int(query["cursor"].flatMap { $0.hasPrefix("c") ? String($0.dropFirst()) : nil } ?? "0") ?? 0
            let cursor: JSONValue = start + size < all.count ? .string("c\(start + size)") : .null
            return .json(JSONValue.object(JSONObject([("results", .array(page(size, from: start))), ("cursor", cursor)])).serialized())
        case .page(let size):
            let number = Int(query["page"] ?? "1") ?? 1
            return .json(array(page(size, from: (number - 1) * size)))
        case .offset(let size):
            return .json(array(page(size, from: Int(query["offset"] ?? "0") ?? 0)))
        }
    }

    private func split(_ url: String) -> (String, [String: String]) {
        guard let mark = url.firstIndex(of: "?") else { return (url, [:]) }
        var query: [String: String] = [:]
        for pair in url[url.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(url[..<mark]), query)
    }
}
