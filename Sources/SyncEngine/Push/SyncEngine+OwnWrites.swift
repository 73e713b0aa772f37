import SyncCore
import SyncStore

// Versions the engine's own pushes produced. A local change made while an earlier change of the same record was
// on its way, or before the listing showed what that push produced, is made against the version the listing
// showed, which the server no longer has: the server moved on, but only by syncd's own write. That is not a
// conflict (docs/local-changes.md, "Conflicts": a change made against a version someone else replaced), so the
// check before the push takes the version syncd's own push produced as the change's base instead of settling a
// conflict. Kept in memory: after a restart the listing shows the version, and a change queued before it is
// judged as before.

extension SyncEngine {
    /// The `VersionField=` value of `record` as text, or nil when it has none (or no `VersionField=` is set).
    static func version(of record: JSONObject, field: String?) -> String? {
        switch field.flatMap({ record[$0] }) {
        case .string(let text)?: return text
        case .number(let number)?: return number.literal
        case let value? where value.integerText != nil: return value.integerText
        default: return nil
        }
    }

    /// Remembers the version that the push of `entry` produced, read from the server's answer (inside
    /// `RecordEnvelope=`); an answer without one forgets any earlier one of the record.
    func notePushedVersion(of entry: OutboxRecord, recordID: String, source: SourceConfiguration, answer: [UInt8]) {
        guard source.versionField != nil else { return }
        var produced: String?
        if entry.operation != .delete, case .success(let (object, _)) = RecordEnvelope.unwrap(answer, at: source.recordEnvelope) {
            produced = SyncEngine.version(of: object, field: source.versionField)
        }
        let key = OwnWriteKey(source: source.name, recordID: RecordID(recordID))
        shared.memory.withLock { memory in
            // Bounded: a daemon pushing without end forgets the oldest knowledge at once (a false conflict then is
            // kept as a discarded change, never lost).
            if memory.producedVersions.count >= 10_000 { memory.producedVersions.removeAll() }
            memory.producedVersions[key] = produced
        }
    }

    /// Whether `version`, found on the server for `recordID`, is the one syncd's own latest push of it produced.
    func isOwnWrite(_ version: String?, recordID: String, source: SourceConfiguration) -> Bool {
        guard let version else { return false }
        let key = OwnWriteKey(source: source.name, recordID: RecordID(recordID))
        return shared.memory.withLock { $0.producedVersions[key] } == version
    }
}

extension SyncEngine {
    /// Whether the server's record `body` already holds what the update `change` sends: every member of the change
    /// but `VersionField=` has the same value there (numbers by value, strings by bytes). An update whose answer
    /// was lost (a timeout, a stop) that nonetheless landed is then done, not a conflict with itself, and is not
    /// sent twice; members the server adds (its own stamps) do not count.
    func serverHolds(_ change: OutboxRecord, record body: [UInt8], source: SourceConfiguration) -> Bool {
        guard change.operation == .update, let local = change.body,
              case .object(let mine)? = try? JSONValue(parsing: local),
              case .object(let theirs)? = try? JSONValue(parsing: body) else { return false }
        return PushPlan.holds(mine, in: theirs, versionField: source.versionField)
    }
}

/// A record of a source, by its ID's bytes.
public struct OwnWriteKey: Hashable, Sendable {
    var source: String
    var recordID: RecordID
}
