// RecordID: the identity of a record in a listing.

/// The identity of a record. IDs compare by their canonical text: the JSON string's
/// unescaped content, or an integer's decimal digits. So `1` and `"1"` are the SAME ID
/// (both address URL/1 on the server); a listing holding both is a duplicate.
///
/// Equality, hashing and ordering use the UTF-8 bytes of `key`, without Unicode
/// normalisation (unlike `String.==`): `"é"` written precomposed and decomposed are two
/// different IDs, because they address two different URLs.
public struct RecordID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// How an ID was written in the listing.
    public enum Kind: Sendable {
        /// A JSON string, e.g. `"abc"`.
        case string
        /// A JSON integer, e.g. `123` or `-5`.
        case integer
    }

    /// The canonical text: the string's unescaped content or the integer's digits.
    public let key: String
    /// How the ID was written; kept for display and for re-encoding as JSON.
    public let kind: Kind

    /// Creates an ID from its canonical text and the way it was written.
    public init(key: String, kind: Kind) {
        self.key = key
        self.kind = kind
    }

    /// Compares the UTF-8 bytes of `key`; `kind` is ignored.
    public static func == (lhs: RecordID, rhs: RecordID) -> Bool {
        lhs.key.utf8.elementsEqual(rhs.key.utf8)
    }

    /// Hashes the UTF-8 bytes of `key`; `kind` is ignored.
    public func hash(into hasher: inout Hasher) {
        var key = key
        key.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Orders by the UTF-8 bytes of `key` (the same as code point order); `kind` is ignored.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
    }

    /// The key as people should see it.
    public var description: String { key }

    /// The ID as a JSON value: `123` for an integer, `"abc"` (escaped per RFC 8259 §7)
    /// for a string. An integer ID whose key is not a valid JSON integer (only possible
    /// when built by hand) is written as a string.
    public var jsonLiteral: String {
        if kind == .integer, Self.isJSONInteger(key) {
            return key
        }
        return JSONText.quoted(key)
    }

    /// Whether `text` matches RFC 8259's `[ minus ] int` (no fraction, no exponent).
    static func isJSONInteger(_ text: String) -> Bool {
        var digits = Substring(text).utf8
        if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        guard let first = digits.first, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return false
        }
        return first != UInt8(ascii: "0") || digits.count == 1
    }
}

extension RecordID: ExpressibleByStringLiteral {
    /// The ID `key`, as a key to look up or group by (`kind` is `.string`, which comparisons ignore).
    public init(_ key: String) {
        self.init(key: key, kind: .string)
    }

    /// The ID written as a string literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }
}

extension String {
    /// Whether `self` and `other`, both record IDs (or client IDs), name the same record: the same UTF-8 bytes.
    /// `String.==` is not that: it holds canonically equivalent texts equal (`"é"` precomposed and decomposed),
    /// which a server keeps apart as two records at two URLs.
    public func isSameID(as other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }
}
