// A folder's path as syncd compares it (syncd.conf(5), DESCRIPTION: a reload compares the directories "as syncd
// resolves them"): the kernel reads "/x/state/", "/x/./state" and "/x//state" as "/x/state", so they are one folder.
// ".." is left as it is: "/x/link/.." is the folder above the link's target, not "/x", so only a lookup on the
// real folders could say where it leads, and a reload must not look up (or create) anything to compare. Symbolic
// links are not resolved for the same reason: a path through a link is another setting than the path it points to.

/// Lexical normalisation of folder paths.
public enum FolderPath {
    /// `path` with "//" collapsed, "." components and trailing slashes dropped ("/" stays "/"; a relative path
    /// stays relative, "." when nothing is left).
    public static func normalized(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let joined = components.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
