// RFC 6901 JSON pointer evaluation over a parsed value (the syntax is JSONPointerSyntax in SyncCore).

extension JSONValue {
    /// The value `tokens` (unescaped reference tokens, RFC 6901 §4) point at, or nil when something on the way
    /// is missing: an absent member, an index out of range or not canonical (`01`, `-`), a scalar.
    public func value(at tokens: [String]) -> JSONValue? {
        var current = self
        for token in tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let elements):
                guard let first = token.utf8.first, first != UInt8(ascii: "0") || token.utf8.count == 1,
                      token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let index = Int(token), index < elements.count
                else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}
