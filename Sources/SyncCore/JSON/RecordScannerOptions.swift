// RecordScannerOptions and ScannedRecord: what RecordScanner is told and what it emits.

/// Where the records are in a listing and how to read their IDs.
public struct RecordScannerOptions: Sendable {
    /// JSON pointer tokens (RFC 6901, already unescaped) leading to the records array;
    /// `[]` means the top-level value is the array. A token selects the member of that
    /// name in an object, or, when it is a decimal index without leading zeros, the
    /// element at that index in an array.
    public var recordsPath: [String]
    /// The member of each record that holds its ID, e.g. `id`.
    public var idField: String
    /// The member of each record that holds its version, e.g. `updatedAt`; `nil` = none.
    public var versionField: String?
    /// The deepest allowed container nesting, counted from the document root (the
    /// top-level array is level 1).
    public var maxDepth: Int
    /// The longest allowed ID in bytes (UTF-8, after unescaping).
    public var maxIDBytes: Int
    /// The largest allowed record in bytes, from `{` to `}` as received (`MaxRecordBytes=`). A larger one
    /// stops the scan as soon as its bytes pass the limit, before it is held whole.
    public var maxRecordBytes: Int

    /// Creates options; the defaults read a top-level array of records keyed by `id`.
    public init(
        recordsPath: [String] = [],
        idField: String = "id",
        versionField: String? = nil,
        maxDepth: Int = 64,
        maxIDBytes: Int = 1024,
        maxRecordBytes: Int = .max
    ) {
        self.recordsPath = recordsPath
        self.idField = idField
        self.versionField = versionField
        self.maxDepth = maxDepth
        self.maxIDBytes = maxIDBytes
        self.maxRecordBytes = maxRecordBytes
    }

    /// The records path as a JSON pointer (`""` for the top level, else `/a/b` with
    /// `~` and `/` escaped as `~0` and `~1`).
    public var recordsPointer: String {
        recordsPath.map { token in
            "/" + token.replacing("~", with: "~0").replacing("/", with: "~1")
        }.joined()
    }
}

/// A record as the scanner emits it. `bytes` is valid only during the callback.
public struct ScannedRecord {
    /// Where the ID is: a string made for it, or the range of `bytes` that is exactly its key (the common
    /// case: no escape, one chunk), with how it was written; the scanner then makes no string for it.
    enum IDSource {
        case text(RecordID)
        case range(Range<Int>, RecordID.Kind)
    }

    /// The record's 0-based position in the records array.
    public let index: Int
    private let idSource: IDSource
    /// The record object's exact bytes as received, from `{` to `}`. Valid only
    /// during the callback: copy what you keep.
    public let bytes: UnsafeRawBufferPointer
    /// The version when it was read into a string (escapes, or bytes split across chunks).
    private let versionText: String?
    /// Where the version's text lies in `bytes` when it is exactly its raw bytes (the common case:
    /// no escape, one chunk); the scanner then makes no string for it.
    private let versionRange: Range<Int>?

    /// The record's ID (a string is made for it here when the scanner made none: `withIDBytes` makes none).
    public var id: RecordID {
        switch idSource {
        case .text(let id): id
        case .range(let range, let kind): RecordID(key: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self), kind: kind)
        }
    }

    /// How the ID was written.
    public var idKind: RecordID.Kind {
        switch idSource {
        case .text(let id): id.kind
        case .range(_, let kind): kind
        }
    }

    /// Calls `body` with the UTF-8 bytes of the ID's key, without making a string when they are a slice of
    /// `bytes`. The buffer is valid only during the call.
    public func withIDBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch idSource {
        case .range(let range, _):
            return try body(UnsafeRawBufferPointer(rebasing: bytes[range]))
        case .text(let id):
            var key = id.key
            return try key.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// The version: a string's unescaped value, or a number's literal text; `nil` if
    /// the field is absent, `null`, or of another type (boolean, object, array).
    public var version: String? {
        guard let versionRange else { return versionText }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[versionRange]), as: UTF8.self)
    }

    /// Calls `body` with the version's UTF-8 bytes (nil when there is no version), without making a
    /// string when they are a slice of `bytes`. The buffer is valid only during the call.
    public func withVersionBytes<Result>(_ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        if let versionRange { return try body(UnsafeRawBufferPointer(rebasing: bytes[versionRange])) }
        guard var text = versionText else { return try body(nil) }
        return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    /// Creates a record; the scanner does this, tests and fakes may too.
    public init(index: Int, id: RecordID, version: String?, bytes: UnsafeRawBufferPointer) {
        self.init(index: index, idSource: .text(id), version: version, versionRange: nil, bytes: bytes)
    }

    /// A record whose ID and version are strings made for them or ranges of `bytes` (raw text, no escapes);
    /// `version` is ignored when `versionRange` is given.
    init(index: Int, idSource: IDSource, version: String?, versionRange: Range<Int>?, bytes: UnsafeRawBufferPointer) {
        self.index = index
        self.idSource = idSource
        self.versionText = versionRange == nil ? version : nil
        self.versionRange = versionRange
        self.bytes = bytes
    }
}
