/// One link of an RFC 8288 `Link` header: its target and its relation types.
public struct WebLink: Sendable, Equatable {
    /// The target URI reference as written (may be relative).
    public var target: String
    /// Relation types, lowercased (`rel` may hold several, space-separated).
    public var relations: [String]
}

/// Parses RFC 8288 `Link` header values.
public enum LinkHeader {
    /// Every link in `value`, e.g. `<https://a/p?page=2>; rel="next", <…>; rel="last"`.
    /// Malformed links are skipped (a server's junk must not break the refresh by itself).
    public static func parse(_ value: String) -> [WebLink] {
        var links: [WebLink] = []
        var scanner = Array(value.unicodeScalars)[...]
        while true {
            skip(&scanner, while: { $0 == " " || $0 == "\t" || $0 == "," })
            guard let first = scanner.first else { break }
            guard first == "<", let close = scanner.firstIndex(of: ">") else {
                // Not a link-value: skip to the next top-level comma.
                skipToComma(&scanner)
                continue
            }
            let target = String(String.UnicodeScalarView(scanner[scanner.index(after: scanner.startIndex)..<close]))
            scanner = scanner[scanner.index(after: close)...]
            var relations: [String] = []
            // link-params: *( OWS ";" OWS link-param )
            while true {
                skip(&scanner, while: { $0 == " " || $0 == "\t" })
                guard scanner.first == ";" else { break }
                scanner.removeFirst()
                skip(&scanner, while: { $0 == " " || $0 == "\t" })
                let name = take(&scanner, while: { $0 != "=" && $0 != ";" && $0 != "," && $0 != " " && $0 != "\t" }).lowercased()
                skip(&scanner, while: { $0 == " " || $0 == "\t" })
                var paramValue = ""
                if scanner.first == "=" {
                    scanner.removeFirst()
                    skip(&scanner, while: { $0 == " " || $0 == "\t" })
                    paramValue = scanner.first == "\"" ? quoted(&scanner) : take(&scanner, while: { $0 != ";" && $0 != "," })
                }
                // RFC 8288 §3.3: occurrences after the first rel are ignored.
                if name == "rel" && relations.isEmpty {
                    relations = paramValue.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                }
            }
            links.append(WebLink(target: target, relations: relations))
            skipToComma(&scanner)
        }
        return links
    }

    /// The target of the first `rel="next"` link among all `values`, if any.
    public static func nextTarget(in values: [String]) -> String? {
        for value in values {
            if let link = parse(value).first(where: { $0.relations.contains("next") }) { return link.target }
        }
        return nil
    }

    private static func skip(_ s: inout ArraySlice<Unicode.Scalar>, while predicate: (Unicode.Scalar) -> Bool) {
        while let c = s.first, predicate(c) { s.removeFirst() }
    }

    private static func take(_ s: inout ArraySlice<Unicode.Scalar>, while predicate: (Unicode.Scalar) -> Bool) -> String {
        var out = String.UnicodeScalarView()
        while let c = s.first, predicate(c) { out.append(c); s.removeFirst() }
        return String(out).trimmingTrailing(where: \.isBlank)
    }

    private static func quoted(_ s: inout ArraySlice<Unicode.Scalar>) -> String {
        s.removeFirst()
        var out = String.UnicodeScalarView()
        while let c = s.first {
            s.removeFirst()
            if c == "\"" { break }
            if c == "\\", let escaped = s.first { out.append(escaped); s.removeFirst(); continue }
            out.append(c)
        }
        return String(out)
    }

    private static func skipToComma(_ s: inout ArraySlice<Unicode.Scalar>) {
        var inQuotes = false
        while let c = s.first {
            if c == "\"" { inQuotes.toggle() }
            if c == "," && !inQuotes { return }
            s.removeFirst()
        }
    }
}
