// Delta=, DeltaField=, DeltaQuery=, DeltaTokenPath=, DeletedPath=, DeletedValue=, DeltaExpired=,
// FullResyncIntervalSec=: how a source asks for what changed since a checkpoint (syncd.conf(5), "Incremental pull").

/// `Delta=`: how a source's refreshes after the first ask for changes only.
public enum DeltaMode: String, Sendable, CaseIterable {
    /// Every refresh fetches the whole listing (the default).
    case none
    /// The checkpoint is the highest `DeltaField=` value seen; a delta asks for records changed after it.
    case watermark
    /// The checkpoint is a token the server gives on a listing's last page (`DeltaTokenPath=`).
    case token
}

/// The incremental-pull settings of one source.
public struct DeltaSettings: Equatable, Sendable {
    /// `Delta=`.
    public var mode: DeltaMode = .none
    /// `DeltaField=` as reference tokens: where each record holds its change stamp (watermark); empty if unset.
    public var field: [String] = []
    /// `DeltaField=` as written, for messages.
    public var fieldText: String = ""
    /// `DeltaQuery=`: the query added to `URL=` for a delta request, `{checkpoint}` replaced (percent-encoded).
    /// Empty with `Delta=token`: the token is the URL of the next delta request (Microsoft Graph's delta link).
    public var query: String = ""
    /// `DeltaTokenPath=` as reference tokens: where a listing's last page holds the next checkpoint (token).
    public var tokenPath: [String] = []
    /// `DeltaTokenPath=` as written, for messages.
    public var tokenPathText: String = ""
    /// `DeletedPath=` as reference tokens: where a record marks itself a tombstone; empty if unset.
    public var deletedPath: [String] = []
    /// `DeletedPath=` as written, for messages.
    public var deletedPathText: String = ""
    /// `DeletedValue=`: the JSON value at `DeletedPath=` that means deleted (default `true`).
    public var deletedValue: JSONValue = .bool(true)
    /// `DeletedValue=` as written, for messages.
    public var deletedValueText: String = "true"
    /// `DeltaExpired=`: the HTTP statuses meaning the checkpoint is too old (default 410).
    public var expiredStatuses: [Int] = [410]
    /// `FullResyncIntervalSec=`: a full listing at most this long after the last one (default 1 day).
    public var fullResyncInterval: Duration = .seconds(86_400)

    /// Settings at their defaults: `Delta=none`.
    public init() {}

    /// Whether refreshes after the first ask for changes only.
    public var isEnabled: Bool { mode != .none }

    /// The placeholder `DeltaQuery=` holds for the checkpoint.
    public static let placeholder = "{checkpoint}"
}

extension DeltaSettings {
    /// `DeltaExpired=`: one or more HTTP statuses from 400 to 599, separated by spaces.
    static func statuses(_ text: String) throws(ValueError) -> [Int] {
        let words = text.split(separator: " ")
        guard !words.isEmpty else { throw ValueError("needs at least one HTTP status, e.g. 410") }
        var statuses: [Int] = []
        for word in words {
            guard let status = Int(word), (400...599).contains(status) else {
                throw ValueError("invalid HTTP status \"\(word)\"; use error statuses from 400 to 599 separated by spaces, e.g. 410 400")
            }
            if !statuses.contains(status) { statuses.append(status) }
        }
        return statuses
    }

    /// `DeletedValue=`: a JSON value (true, a number, a quoted string, null).
    static func deletedValue(_ text: String) throws(ValueError) -> JSONValue {
        guard let value = try? JSONValue(parsing: text), value.objectValue == nil, value.arrayValue == nil else {
            throw ValueError("invalid JSON value \"\(text)\"; write a JSON scalar: true, a number, null or a quoted string such as \"cancelled\"")
        }
        return value
    }

    /// `DeltaQuery=`: query parameters (`name=value&...`), with `{checkpoint}` where the checkpoint goes. The rest
    /// is used as written, so it must be a valid query already (RFC 3986 §3.4: unreserved characters, `%XX`,
    /// sub-delimiters, `:`, `@`, `/` and `?`), and every parameter needs a name.
    static func query(_ text: String) throws(ValueError) -> String {
        let query = text.hasPrefix("?") ? String(text.dropFirst()) : text
        let written = query.replacingEvery(placeholder, with: "")
        let valid = written.utf8.allSatisfy { ConfigurationText.isLetterOrDigit($0) || "-._~%!$&'()*+,;=:@/?".utf8.contains($0) }
            && !query.split(separator: "&").contains { $0.hasPrefix("=") || $0.prefix { $0 != "=" }.contains("{") }
        guard valid else {
            throw ValueError("invalid query \"\(text)\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}")
        }
        return query
    }
}
