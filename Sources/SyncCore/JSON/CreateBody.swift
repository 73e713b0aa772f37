// The body of a create as it goes out (docs/local-changes.md, "Server-assigned IDs"; syncd.conf(5), SendClientID=).

/// What a `POST` of a new record sends: the queued record, without its ID when the server assigns IDs.
public enum CreateBody {
    /// The bytes to send for the queued create `body`. With `sendClientID` false, every `idField` member is left
    /// out: a server that assigns integer IDs and rejects unknown fields (400 "Unknown field [id]") takes it, and
    /// answers with the ID it gave. A body that is not a JSON object goes out as queued.
    public static func bytes(_ body: [UInt8], idField: String, sendClientID: Bool) -> [UInt8] {
        guard !sendClientID, case .object(var record)? = try? JSONValue(parsing: body), record[idField] != nil else { return body }
        record[idField] = nil
        return JSONValue.object(record).serializedBytes(.compact)
    }
}
