// One value inside a record's bytes, found by a JSON pointer without parsing the whole record: the change
// stamp (`DeltaField=`) and tombstone mark (`DeletedPath=`) of every record of a listing or a delta.

/// Finds the value a JSON pointer names inside one record's bytes. The bytes must be one valid JSON value,
/// as `RecordScanner` emits a record (it validated them): members not on the way are skipped, not parsed.
public enum RecordMember {
    /// The value at `path` (unescaped reference tokens, RFC 6901) in `bytes`, parsed; nil when absent.
    public static func value(at path: [String], in bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard let range = range(at: path, in: bytes) else { return nil }
        return try? JSONValue(parsing: UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// Where the value at `path` lies in `bytes`; nil when absent.
    static func range(at path: [String], in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        var start = skipSpace(bytes, 0)
        for token in path {
            guard start < bytes.count else { return nil }
            switch bytes[start] {
            case UInt8(ascii: "{"):
                guard let found = member(token, ofObjectAt: start, in: bytes) else { return nil }
                start = found
            case UInt8(ascii: "["):
                guard let found = element(token, ofArrayAt: start, in: bytes) else { return nil }
                start = found
            default:
                return nil
            }
        }
        guard start < bytes.count else { return nil }
        return start..<valueEnd(bytes, start)
    }

    /// The start of the value of member `name` of the object at `start`.
    private static func member(_ name: String, ofObjectAt start: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        var name = name
        return name.withUTF8 { wanted -> Int? in
            var i = skipSpace(bytes, start + 1)
            var found: Int?
            while i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
                let keyEnd = valueEnd(bytes, i)
                let valueStart = skipSpace(bytes, skipSpace(bytes, keyEnd) + 1)
                // The last member of a name counts, as the object's subscript reads it.
                if keyEquals(bytes, i..<keyEnd, UnsafeRawBufferPointer(wanted)) { found = valueStart }
                i = skipSpace(bytes, valueEnd(bytes, valueStart))
                guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { break }
                i = skipSpace(bytes, i + 1)
            }
            return found
        }
    }

    /// The start of element `token` (a canonical decimal index) of the array at `start`.
    private static func element(_ token: String, ofArrayAt start: Int, in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let first = token.utf8.first, first != UInt8(ascii: "0") || token.utf8.count == 1,
              token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let wanted = Int(token) else { return nil }
        var i = skipSpace(bytes, start + 1)
        var index = 0
        while i < bytes.count, bytes[i] != UInt8(ascii: "]") {
            if index == wanted { return i }
            i = skipSpace(bytes, valueEnd(bytes, i))
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpace(bytes, i + 1)
            index += 1
        }
        return nil
    }

    /// Whether the string token at `range` (with its quotes) is `wanted`: compared as bytes, unescaped first
    /// when it holds an escape.
    private static func keyEquals(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ wanted: UnsafeRawBufferPointer) -> Bool {
        let inner = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
        guard inner.contains(UInt8(ascii: "\\")) else { return inner.elementsEqual(wanted) }
        guard case .string(let key)? = try? JSONValue(parsing: UnsafeRawBufferPointer(rebasing: bytes[range])) else { return false }
        return key.utf8.elementsEqual(wanted)
    }

    /// The index after the value that starts at `start`.
    private static func valueEnd(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var i = start
        switch bytes[i] {
        case UInt8(ascii: "\""):
            i += 1
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\\"): i += 2
                case UInt8(ascii: "\""): return i + 1
                default: i += 1
                }
            }
            return bytes.count
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    i = valueEnd(bytes, i)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return bytes.count
        default:
            while i < bytes.count, !isDelimiter(bytes[i]) { i += 1 }
            return i
        }
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || isSpace(byte)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private static func skipSpace(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var i = start
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        return i
    }
}
