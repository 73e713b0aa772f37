// JSONScanError: why a listing was rejected by `RecordScanner`, and where.

/// Why `RecordScanner` rejected a listing, and the byte offset at which it noticed.
///
/// Any error means the whole listing is unusable: the caller must discard the
/// records it has staged and keep the previous copy (syncd(8) GUARANTEES 2).
public struct JSONScanError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Equatable, Sendable {
        /// The input is not JSON (RFC 8259): an unexpected character, a bad escape,
        /// a bad number or literal, a duplicate key on the records path, …
        case syntax(String)
        /// A string holds bytes that are not well-formed UTF-8 (RFC 3629), or a byte
        /// outside any string can never start a UTF-8 sequence.
        case invalidUTF8
        /// Containers are nested deeper than the limit (the associated value).
        case depthExceeded(Int)
        /// Something other than whitespace follows the one top-level value.
        case trailingBytes
        /// The input ended before the document did (including empty input).
        case truncated
        /// The value at the records path is not an array. The path is a JSON pointer;
        /// `""` means the top level.
        case notAnArray(path: String)
        /// The records path leads nowhere: a key or index is absent, or a step meets a
        /// value that is not a container of the right kind.
        case pathNotFound(path: String)
        /// The element at `index` of the records array is not an object.
        case recordNotObject(index: Int)
        /// The record at `index` has no top-level member named `field`.
        case missingID(index: Int, field: String)
        /// The record at `index` has an ID that is not usable; `reason` says why.
        case invalidID(index: Int, reason: String)
        /// A string holds a raw control character (U+0000–U+001F), which RFC 8259 §7
        /// requires to be escaped.
        case controlCharacterInString
        /// The record at `index` is larger than `limit` bytes (`RecordScannerOptions.maxRecordBytes`).
        case recordTooLarge(index: Int, limit: Int)
        /// An earlier `onRecord` callback threw; the scanner stopped there. Only seen
        /// when a dead scanner is used again.
        case callbackFailed
    }

    /// What went wrong.
    public let kind: Kind
    /// The byte offset in the whole stream at which the problem was detected.
    public let offset: Int64

    /// Creates an error of `kind` detected at byte `offset`.
    public init(kind: Kind, offset: Int64) {
        self.kind = kind
        self.offset = offset
    }

    /// One line for people, e.g. `invalid JSON at byte 17: unexpected character '<'`.
    public var description: String {
        switch kind {
        case .syntax(let message):
            return "invalid JSON at byte \(offset): \(message)"
        case .invalidUTF8:
            return "invalid UTF-8 at byte \(offset)"
        case .depthExceeded(let limit):
            return "JSON nested deeper than \(limit) levels at byte \(offset)"
        case .trailingBytes:
            return "trailing bytes after the JSON document at byte \(offset)"
        case .truncated:
            return "JSON document is truncated (ended at byte \(offset))"
        case .notAnArray(let path):
            // Most often RecordsPath= left out for a wrapped listing ({"data": [...]}): say where to look.
            return path.isEmpty ? "top level is not an array; if the records are inside an object, set RecordsPath= to them "
                + "(e.g. /data; 'syncd --probe SOURCE' says where they are)" : "value at \(path) is not an array"
        case .pathNotFound(let path):
            return "no array at \(path)"
        case .recordNotObject(let index):
            return "record \(index) is not an object"
        case .missingID(let index, let field):
            return "record \(index) has no ID field \(RecordID(key: field, kind: .string).jsonLiteral)"
        case .invalidID(let index, let reason):
            return "record \(index) has an invalid ID: \(reason)"
        case .controlCharacterInString:
            return "invalid JSON at byte \(offset): unescaped control character in a string"
        case .recordTooLarge(let index, let limit):
            return "record \(index) is larger than \(limit) bytes (at byte \(offset))"
        case .callbackFailed:
            return "record scanning stopped at byte \(offset) because the record handler failed"
        }
    }
}
