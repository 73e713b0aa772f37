/// Rebasing a local change onto the server's current version.
///
/// A server with optimistic concurrency in the record itself (Django REST Framework with a version
/// column, and most hand-written APIs) refuses a change whose `VersionField` member names a version it
/// no longer has. When the conflict policy (or a person, `syncctl resolve --keep local`) decides that the
/// local version wins, the change is pushed "against the server's current version": its `VersionField`
/// member is given the server's value, written exactly as the server wrote it; every other byte of the
/// local record stays as it was (docs/local-changes.md, "Conflicts").
public enum VersionRebase {
    /// `local` with the value of its top-level member `field` replaced by the value of the same member in
    /// `server`. Nil when there is nothing to rebase: either text is not a JSON object, the local record has
    /// no such member (the server then has no version to check in the body), the server's record has none,
    /// or the two values are already the same text.
    public static func body(_ local: [UInt8], field: String, server: [UInt8]) -> [UInt8]? {
        guard case (.object, let localRange?)? = try? JSONValue.parsing(local, locatingMember: field),
              case (.object, let serverRange?)? = try? JSONValue.parsing(server, locatingMember: field) else { return nil }
        let serverValue = server[serverRange]
        guard !local[localRange].elementsEqual(serverValue) else { return nil }
        var rebased = local
        rebased.replaceSubrange(localRange, with: serverValue)
        return rebased
    }
}
