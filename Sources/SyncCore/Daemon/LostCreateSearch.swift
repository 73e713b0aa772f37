/// The search of the listing for a create whose answer was lost (docs/local-changes.md, "No duplicate
/// creates"), as a pure value: fed the listing's records one by one, it decides what becomes of the create.
///
/// Whether the server kept the client's ID itself is a lookup by that ID, done before this search. Here a
/// record that was not in the listing before (`previousIDs`) matches when, with `ClientIDField=`, that member
/// holds the client's ID; without it, when it has every member the create sent (but the ID) equal.
public struct LostCreateSearch: Sendable {
    /// What becomes of the lost create once the listing has been searched.
    public enum Decision: Sendable, Equatable {
        /// Exactly one record matches: the create is adopted under the server's ID.
        case adopt(id: String, idIsInteger: Bool)
        /// No record matches: the create is sent again.
        case resend
        /// Several records match (`ids`: the first five): the change is parked for a person to decide.
        case park(ids: [String])
    }

    /// How many matching IDs a parked change names.
    public static let namedMatches = 5

    private let clientID: String
    private let sent: JSONObject
    private let idField: String
    private let clientIDField: String?
    private let previousIDs: Set<RecordID>
    private var matched: [(id: String, idIsInteger: Bool)] = []

    /// A search for the create of `clientID` that sent `sent`, in a source whose records carry their ID in
    /// `idField`; `previousIDs` are the IDs the listing had before the create. With `clientIDField`, the value
    /// the create sent in that member is looked for (syncd puts the client's ID there unless the record set it).
    public init(clientID: String, sent: JSONObject, idField: String, clientIDField: String?, previousIDs: Set<RecordID>) {
        let sentClientID = clientIDField.flatMap { sent[$0]?.stringValue ?? sent[$0]?.integerText }
        self.clientID = sentClientID.flatMap { $0.isEmpty ? nil : $0 } ?? clientID
        self.sent = sent
        self.idField = idField
        self.clientIDField = clientIDField
        self.previousIDs = previousIDs
    }

    /// False once more records cannot change the decision or the IDs it names.
    public var wantsMore: Bool { matched.count < Self.namedMatches }

    /// Looks at one record of the listing.
    public mutating func consider(id: String, idIsInteger: Bool, body: JSONValue) {
        guard wantsMore, matches(id: id, body: body) else { return }
        matched.append((id, idIsInteger))
    }

    /// The decision for the records considered so far.
    public var decision: Decision {
        switch matched.count {
        case 0: return .resend
        case 1: return .adopt(id: matched[0].id, idIsInteger: matched[0].idIsInteger)
        default: return .park(ids: matched.map(\.id))
        }
    }

    private func matches(id: String, body: JSONValue) -> Bool {
        // A record the listing had before the create cannot be it, whatever it holds: with ClientIDField= a record
        // may set that member itself, to a value another record already has.
        guard !previousIDs.contains(RecordID(id)), case .object(let found) = body else { return false }
        if let clientIDField {
            // Compared as bytes: a canonically equivalent client ID is another one.
            return (found[clientIDField]?.stringValue ?? found[clientIDField]?.integerText)?.isSameID(as: clientID) ?? false
        }
        return sent.members.allSatisfy { $0.key == idField || found[$0.key] == $0.value }
    }
}
