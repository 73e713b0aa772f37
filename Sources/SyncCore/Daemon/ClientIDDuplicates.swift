/// Finds the records of a listing that carry one client ID in `ClientIDField=`: a create the server took
/// twice (docs/local-changes.md, "No duplicate creates"). syncd keeps both records as the server lists them
/// and says so, since only a person can tell which one to remove.
///
/// Two passes over the listing, so that a large one costs 8 bytes per record, not a set of strings: the first
/// (`tally`) keeps a hash of each client ID; only when two hashes are equal does a second (`collect`) gather
/// the IDs of the records whose client ID has a repeated hash, and equal hashes of different values drop out.
public struct ClientIDDuplicates: Sendable {
    /// A client ID carried by several records, with their IDs (the first `namedRecords`, in listing order).
    public struct Group: Sendable, Equatable {
        public var clientID: String
        public var recordIDs: [String]
        /// How many records carry it.
        public var count: Int
    }

    /// How many record IDs a group names.
    public static let namedRecords = 5
    /// How many groups a notice names.
    public static let namedGroups = 3

    public let field: String
    private var hashes: [UInt64] = []
    private var suspects: Set<UInt64> = []
    /// Keyed by the client IDs' bytes (`RecordID`): canonically equivalent client IDs are different ones.
    private var groups: [RecordID: Group] = [:]
    private var order: [RecordID] = []

    /// A search of the records' member `field`.
    public init(field: String) { self.field = field }

    /// The client ID a record carries in `field`: a non-empty string, or an integer as its digits.
    public static func clientID(of body: JSONValue, field: String) -> String? {
        guard case .object(let members) = body, let value = members[field] else { return nil }
        let text = value.stringValue ?? value.integerText
        return text.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// First pass: notes the client ID of one record.
    public mutating func tally(_ body: JSONValue) {
        guard let clientID = Self.clientID(of: body, field: field) else { return }
        hashes.append(XXHash64.hash(Array(clientID.utf8)))
    }

    /// Ends the first pass; false when no two records can share a client ID (no second pass is needed).
    public mutating func needsSecondPass() -> Bool {
        hashes.sort()
        for index in hashes.indices.dropFirst() where hashes[index] == hashes[index - 1] { suspects.insert(hashes[index]) }
        hashes = []
        return !suspects.isEmpty
    }

    /// Second pass: looks at one record again, with its ID.
    public mutating func collect(id: String, body: JSONValue) {
        guard !suspects.isEmpty, let clientID = Self.clientID(of: body, field: field),
              suspects.contains(XXHash64.hash(Array(clientID.utf8))) else { return }
        let key = RecordID(clientID)
        var group = groups[key] ?? Group(clientID: clientID, recordIDs: [], count: 0)
        if groups[key] == nil { order.append(key) }
        group.count += 1
        if group.recordIDs.count < Self.namedRecords { group.recordIDs.append(id) }
        groups[key] = group
    }

    /// The client IDs carried by more than one record, in the order the listing first showed them.
    public var duplicates: [Group] { order.compactMap { groups[$0] }.filter { $0.count > 1 } }

    /// One line for the status and the log naming the duplicates; nil when there are none.
    public var notice: String? {
        let found = duplicates
        guard !found.isEmpty else { return nil }
        let named = found.prefix(Self.namedGroups).map { group in
            let more = group.count > group.recordIDs.count ? " and \(group.count - group.recordIDs.count) more" : ""
            return "\(group.count) records carry \(field)=\(JSONText.quoted(group.clientID)) "
                + "(\(group.recordIDs.joined(separator: ", "))\(more))"
        }
        return Self.sentence(named, groups: found.count) + Self.advice
    }

    /// `notice` for callers outside ControlGroup= (docs/control-api.md, "Secrets"): how many records carry one
    /// client ID, without the client IDs and the record IDs (both the server's text); nil when there are none.
    public var publicNotice: String? {
        let found = duplicates
        guard !found.isEmpty else { return nil }
        let named = found.prefix(Self.namedGroups).map { "\($0.count) records carry one \(field)= value" }
        return Self.sentence(named, groups: found.count) + Self.advice
            + " (root and members of ControlGroup= see which records)"
    }

    private static func sentence(_ named: [String], groups: Int) -> String {
        let others = groups > namedGroups ? "; \(groups - namedGroups) more client IDs" : ""
        return "the server took one create more than once: \(named.joined(separator: "; "))\(others); "
    }

    private static let advice = "syncd keeps every record the server lists: remove the extra ones on the server"
}
