/// Where one record sits in a single-record body, and how a write's body is wrapped (`RecordEnvelope=`,
/// syncd.conf(5)).
///
/// Kinto, JSON:API and many hand-written APIs answer an item GET, a POST and a PUT with the record inside
/// a wrapper (`{"data": {...}}`) and expect writes wrapped the same way. The record's own bytes are kept
/// exactly as the server wrote them when unwrapping, and as stored in the outbox when wrapping: only the
/// wrapper's members are syncd's words.
public enum RecordEnvelope {
    /// Why a body holds no record where the envelope says.
    public enum Problem: Error, Equatable, Sendable {
        /// The body is not JSON.
        case notJSON(JSONParseError)
        /// Nothing is at the pointer (a member is missing or a step on the way is not an object).
        case missing
        /// The value at the pointer is not a JSON object.
        case notObject

        /// Says what is wrong, naming `RecordEnvelope=` when it is set (`pointerText` not empty).
        public func message(pointerText: String) -> String {
            let place = pointerText.isEmpty ? "the body" : "RecordEnvelope=\(pointerText)"
            switch self {
            case .notJSON(let error): return "the answer is not JSON (\(error))"
            case .missing: return "the answer has nothing at \(place)"
            case .notObject where pointerText.isEmpty: return "the answer is not a JSON object"
            case .notObject: return "the answer's value at \(place) is not a JSON object"
            }
        }
    }

    /// `record` wrapped in one object per token of `path`, innermost last: `["data"]` gives
    /// `{"data":RECORD}`. The record's bytes are copied unchanged; an empty path returns them as they are.
    public static func wrap(_ record: [UInt8], in path: [String]) -> [UInt8] {
        guard !path.isEmpty else { return record }
        var wrapped: [UInt8] = []
        wrapped.reserveCapacity(record.count + path.reduce(0) { $0 + $1.utf8.count + 8 })
        for token in path {
            wrapped += Array("{".utf8) + JSONValue.string(token).serializedBytes(.compact) + Array(":".utf8)
        }
        wrapped += record
        wrapped += [UInt8](repeating: UInt8(ascii: "}"), count: path.count)
        return wrapped
    }

    /// The record at `path` in `body`: its parsed object and its bytes exactly as they appear in `body`.
    /// Each token names a member of an object; an empty path means the whole body.
    public static func unwrap(_ body: [UInt8], at path: [String],
                              limits: JSONParseLimits = JSONParseLimits()) -> Result<(record: JSONObject, bytes: [UInt8]), Problem> {
        var bytes = body
        for token in path {
            let located: (value: JSONValue, member: Range<Int>?)
            do { located = try JSONValue.parsing(bytes, locatingMember: token, limits: limits) } catch { return .failure(.notJSON(error)) }
            guard case .object = located.value, let range = located.member else { return .failure(.missing) }
            bytes = Array(bytes[range])
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: bytes, limits: limits) } catch { return .failure(.notJSON(error)) }
        guard case .object(let record) = value else { return .failure(.notObject) }
        // A located member is exactly its value; the whole body may have blanks around it (RFC 8259 §2).
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let start = bytes.firstIndex { !blank($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !blank($0) }.map { $0 + 1 } ?? start
        return .success((record, Array(bytes[start..<end])))
    }
}
