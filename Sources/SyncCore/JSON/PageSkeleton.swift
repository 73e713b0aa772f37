// What a page says about paging lies outside its records: `next`, `count`, `has_more`, `links.next`,
// a cursor. PageSkeleton keeps a page's bytes with the records array's contents left out, so those
// members can be read whatever the size of the page, in little memory (syncd.conf(5), "Pagination=").

/// A page of a listing without its records: fed the same chunks as the `RecordScanner`, it keeps every byte
/// but those inside the array at the records path, so `{"count": 9, "results": [{…}, …], "next": "…"}` is
/// kept as `{"count": 9, "results": [], "next": "…"}`, ready for `JSONValue(parsing:)`.
///
/// It only follows strings and brackets; the scanner validates the document. A member name with an escape
/// is compared as written (a records path through such a name keeps the records: only the size suffers).
public struct PageSkeleton: Sendable {
    /// The records path's tokens as UTF-8 (RFC 6901, unescaped).
    private let path: [[UInt8]]
    /// The most bytes kept; a larger skeleton is dropped (`overflowed`).
    public let limit: Int
    /// The page without its records (meaningful once the whole page was fed, unless `overflowed`).
    public private(set) var bytes: [UInt8] = []
    /// The page's members besides its records were larger than `limit`: `bytes` is empty.
    public private(set) var overflowed = false

    private var inString = false
    private var escaped = false
    /// Open containers outside the records array: whether each is on the records path, is an object, its
    /// current member name (objects) or element index (arrays), and whether a member name is due next.
    private var levels: [Level] = []
    /// Inside the records array: how deep below it (0 = directly in the array).
    private var skipping: Int?
    /// The member name being read, when it is one on a level that lies on the path.
    private var name: [UInt8]?

    private struct Level {
        var onPath: Bool
        var isObject: Bool
        var member: [UInt8] = []
        var index = 0
        var expectsName: Bool
    }

    /// A skeleton for pages whose records are at `recordsPath` (empty: the page is the records array).
    public init(recordsPath: [String], limit: Int = 1 << 20) {
        path = recordsPath.map { Array($0.utf8) }
        self.limit = limit
    }

    /// Feeds the next chunk of the page.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        for byte in chunk { take(byte) }
    }

    /// Feeds the next chunk of the page (tests).
    public mutating func feed(_ chunk: [UInt8]) {
        chunk.withUnsafeBytes { feed($0) }
    }

    /// The skeleton parsed; nil when it overflowed or is not JSON (the scanner says why).
    public var document: JSONValue? {
        overflowed ? nil : try? JSONValue(parsing: bytes)
    }

    private mutating func keep(_ byte: UInt8) {
        guard !overflowed else { return }
        guard bytes.count < limit else {
            overflowed = true
            bytes = []
            return
        }
        bytes.append(byte)
    }

    private mutating func take(_ byte: UInt8) {
        if let depth = skipping {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                return
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): skipping = depth + 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth == 0 {
                    skipping = nil
                    keep(byte)
                } else {
                    skipping = depth - 1
                }
            default: break
            }
            return
        }
        keep(byte)
        if inString {
            if escaped {
                escaped = false
                name = nil  // an escaped member name is not compared
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if let read = name, !levels.isEmpty { levels[levels.count - 1].member = read }
                name = nil
            } else {
                name?.append(byte)
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
            if let last = levels.last, last.isObject, last.expectsName {
                levels[levels.count - 1].expectsName = false
                levels[levels.count - 1].member = []
                name = last.onPath && levels.count <= path.count ? [] : nil
            }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let onPath = levels.last.map { parent in
                guard parent.onPath, levels.count <= path.count else { return false }
                let token = path[levels.count - 1]
                return parent.isObject ? parent.member == token : String(decoding: token, as: UTF8.self) == String(parent.index)
            } ?? true
            if onPath && levels.count == path.count && byte == UInt8(ascii: "[") {
                skipping = 0
                return
            }
            levels.append(Level(onPath: onPath, isObject: byte == UInt8(ascii: "{"), expectsName: byte == UInt8(ascii: "{")))
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if !levels.isEmpty { levels.removeLast() }
        case UInt8(ascii: ","):
            guard let last = levels.last else { break }
            if last.isObject { levels[levels.count - 1].expectsName = true } else { levels[levels.count - 1].index += 1 }
        default:
            break
        }
    }
}
