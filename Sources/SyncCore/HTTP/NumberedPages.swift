// Pagination=page and Pagination=offset (syncd.conf(5)): servers that name no next page, only take a page
// number or an offset, e.g. Django REST Framework's PageNumberPagination and LimitOffsetPagination.

/// The pages of a listing paged by number (`?page=1, 2, …`) or by offset (`?limit=100&offset=0, 100, …`):
/// after each page, the next page's URL, or nil at the end — an empty page, a page shorter than the first
/// (or than the limit in `URL=`, unless the server caps it), or once the records received reach the total
/// the server gave.
public struct NumberedPages: Sendable {
    /// `page` or `offset`.
    public let mode: PaginationMode
    private let base: String
    private let parameter: String
    /// The first page's number, or the first record's offset (from `URL=`, else 1 or 0).
    private let start: Int
    /// Records per page: the limit in `URL=` (offset), else the records of the first page.
    public private(set) var pageSize: Int?
    /// Records received so far, over all pages.
    public private(set) var received = 0
    /// Pages received so far.
    public private(set) var pages = 0

    /// The paging of `source`; nil unless its `Pagination=` is `page` or `offset`.
    public init?(source: SourceConfiguration) {
        switch source.pagination {
        case .page:
            parameter = source.pageParameter
            start = QueryParameter.value(of: parameter, in: source.url).flatMap { Int($0) }.map { max($0, 0) } ?? 1
        case .offset:
            parameter = source.offsetParameter
            start = QueryParameter.value(of: parameter, in: source.url).flatMap { Int($0) }.map { max($0, 0) } ?? 0
            pageSize = QueryParameter.value(of: source.limitParameter, in: source.url).flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        default:
            return nil
        }
        mode = source.pagination
        base = source.url
    }

    /// The URL after a page that held `records` records, with `total` the count the server gave for the
    /// whole collection (`TotalPath=`), if any; nil when that page was the last.
    public mutating func next(afterPageWith records: Int, total: Int64?) -> String? {
        received += records
        pages += 1
        if pages == 1, let limit = pageSize, records > 0, records < limit, let total, Int64(received) < total {
            // The server caps the limit in URL= (DRF's max_limit): its pages are this long.
            pageSize = records
        }
        let size = pageSize ?? records
        pageSize = size
        if records == 0 || records < size { return nil }
        if let total, Int64(received) >= total { return nil }
        let value = mode == .page ? start + pages : start + received
        return QueryParameter.setting(parameter, to: String(value), in: base)
    }
}

/// Reading and setting one query parameter of a URL (RFC 3986 §3.4), the rest of the URL kept as written.
public enum QueryParameter {
    /// The first value of `name` in `url`'s query, as written (not decoded); nil when absent.
    public static func value(of name: String, in url: String) -> String? {
        var text = Substring(url)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        guard let question = text.firstIndex(of: "?") else { return nil }
        for pair in text[text.index(after: question)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first == Substring(name) { return parts.count == 2 ? String(parts[1]) : "" }
        }
        return nil
    }

    /// `url` with `name` set to `value` (percent-encoded): an existing `name=` replaced, others kept in order.
    public static func setting(_ name: String, to value: String, in url: String) -> String {
        CursorURL.url(base: url, parameter: name, token: value)
    }
}
