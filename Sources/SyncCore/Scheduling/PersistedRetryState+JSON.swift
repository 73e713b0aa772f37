// The text form of a source's retry state in the state store (syncd(8) GUARANTEES 7): the JSON object
// that earlier releases wrote with Foundation's JSONEncoder, with the same members,
//   {"phase":"backoff","attempt":3,"nextAttemptInMilliseconds":1200,"retryAfterRemainingMilliseconds":50000}
// and absent (not null) members for nil, so a state saved by either release loads in the other
// (JSONEncoder wrote the members in no fixed order; this writes them in the order above). The daemon
// reads and writes it with SyncCore's JSONValue, which keeps Foundation out of the daemon's binary
// and resident memory (docs/benchmarks.md, "Storage: where the bytes and the memory go").

/// Why a saved retry state could not be read.
public struct RetryStateFormatError: FailureReason, Equatable, Sendable {
    /// What is wrong with the text, for a log line.
    public let problem: String

    /// Creates an error for `problem`.
    public init(_ problem: String) { self.problem = problem }

    /// "read the saved retry state: …", for quoting after "Failed to".
    public var reason: String { "read the saved retry state: \(problem)" }

    /// The whole message.
    public var description: String { "Failed to \(reason)" }
}

extension PersistedRetryState {
    /// The JSON text the state store keeps (the format of earlier releases; nil members left out).
    public var jsonText: String {
        var members: [(String, JSONValue)] = [("phase", .string(phase.rawValue)), ("attempt", .int(attempt))]
        if let nextAttemptInMilliseconds { members.append(("nextAttemptInMilliseconds", .integer(nextAttemptInMilliseconds))) }
        if let retryAfterRemainingMilliseconds {
            members.append(("retryAfterRemainingMilliseconds", .integer(retryAfterRemainingMilliseconds)))
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// Reads a state saved as `jsonText` (by this release or an earlier one). Members may come in any
    /// order; a nil value may be absent or `null`; unknown members are ignored, as JSONDecoder did.
    public init(jsonText text: String) throws(RetryStateFormatError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text, limits: JSONParseLimits(maxDepth: 4, maxBytes: 4096))
        } catch {
            throw RetryStateFormatError("\(error)")
        }
        guard let object = value.objectValue else { throw RetryStateFormatError("not a JSON object") }
        guard let phaseName = object["phase"]?.stringValue else {
            throw RetryStateFormatError("member \"phase\" is missing or not a string")
        }
        guard let phase = Phase(rawValue: phaseName) else {
            throw RetryStateFormatError("unknown phase \"\(phaseName)\" (expected \"backoff\" or \"error\")")
        }
        guard let attempt = object["attempt"]?.integerValue.flatMap({ Int(exactly: $0) }) else {
            throw RetryStateFormatError("member \"attempt\" is missing or not an integer")
        }
        self.init(phase: phase, attempt: attempt,
                  nextAttemptInMilliseconds: try Self.optionalInteger(object, "nextAttemptInMilliseconds"),
                  retryAfterRemainingMilliseconds: try Self.optionalInteger(object, "retryAfterRemainingMilliseconds"))
    }

    private static func optionalInteger(_ object: JSONObject, _ key: String) throws(RetryStateFormatError) -> Int64? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let integer = value.integerValue else { throw RetryStateFormatError("member \"\(key)\" is not an integer") }
        return integer
    }
}
