import SyncCore
import SyncEngine

/// The parameters of a `Get` or `List` reply with each record's JSON as stored (the server's bytes, or the
/// local change as written), spliced in rather than parsed and serialised again: numbers, escapes and member
/// order reach the client unchanged (docs/control-api.md, `Get`).
enum RecordsReply {
    /// `{"<key>": <record>, ...others}` (`asArray` false, one record) or `{"<key>": [<record>, ...], ...others}`;
    /// a record that is not one JSON value (never written by syncd) is `null`, as it always was.
    static func bytes(_ key: String, records: [[UInt8]], asArray: Bool, others: JSONObject = [:]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        JSONText.appendQuoted(key, to: &out)
        out.append(UInt8(ascii: ":"))
        if asArray { out.append(UInt8(ascii: "[")) }
        for (position, record) in records.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            if (try? JSONValue(parsing: record)) != nil {
                out += record
            } else {
                out += "null".utf8
            }
        }
        if asArray { out.append(UInt8(ascii: "]")) }
        for member in others {
            out.append(UInt8(ascii: ","))
            JSONText.appendQuoted(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            member.value.write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
