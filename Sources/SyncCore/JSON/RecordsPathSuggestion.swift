/// Where the records may be in a page that is not an array (`syncd --probe`): the JSON pointers of the arrays of
/// objects among the page's members and their members (two levels, e.g. `/data`, `/results`, `/data/items`),
/// so a user who left out `RecordsPath=` is told what to set instead of only that the top is not an array.
public enum RecordsPathSuggestion {
    /// The pointers, in the page's member order, of every array whose elements are all objects (and at least one).
    public static func candidates(in page: JSONValue) -> [String] {
        var found: [String] = []
        func visit(_ value: JSONValue, pointer: String, depth: Int) {
            guard case .object(let object) = value, depth < 2 else { return }
            for member in object.members {
                let path = pointer + "/" + escaped(member.key)
                if case .array(let items) = member.value, !items.isEmpty,
                   items.allSatisfy({ if case .object = $0 { return true } else { return false } }) {
                    found.append(path)
                } else {
                    visit(member.value, pointer: path, depth: depth + 1)
                }
            }
        }
        visit(page, pointer: "", depth: 0)
        return found
    }

    /// A member name as an RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
    static func escaped(_ name: String) -> String {
        var token = ""
        for character in name {
            switch character {
            case "~": token += "~0"
            case "/": token += "~1"
            default: token.append(character)
            }
        }
        return token
    }
}
