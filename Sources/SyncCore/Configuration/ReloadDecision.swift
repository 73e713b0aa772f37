// Which changes a reload can apply (syncd.conf(5), DESCRIPTION). A reload replaces the configuration whole or not
// at all: the account and the directories are where every engine, the cache folder other apps watch and the control
// socket live, and the access policy and the cache files' group are set when they are opened. Switching them in a
// running daemon would mix accounts (a new source token publishing into the old account's folder), so a reload that
// changes one of them is rejected whole, with what to do (restart), and the old configuration stays in force.

/// The settings only a restart applies, with the directories as syncd resolved them (an empty `StateDirectory=`
/// and its default are the same folder; `/x/state/`, `/x/./state` and `/x//state` are `/x/state`: `FolderPath`).
public struct RestartSettings: Sendable, Equatable {
    /// `Account=`.
    public var account: String
    /// The state directory in use.
    public var stateDirectory: String
    /// The cache directory in use.
    public var cacheDirectory: String
    /// The runtime directory in use.
    public var runtimeDirectory: String
    /// `ControlGroup=`.
    public var controlGroup: String
    /// `ReadGroup=`, empty when unset.
    public var readGroup: String

    /// Creates the settings.
    public init(account: String, stateDirectory: String, cacheDirectory: String, runtimeDirectory: String, controlGroup: String,
                readGroup: String = "") {
        self.account = account
        self.stateDirectory = stateDirectory
        self.cacheDirectory = cacheDirectory
        self.runtimeDirectory = runtimeDirectory
        self.controlGroup = controlGroup
        self.readGroup = readGroup
    }
}

/// The decision on a reload's `[Daemon]` settings.
public enum ReloadDecision {
    /// One key a reload found changed: its name (`Account=`), the value in force and the new one.
    public struct Change: Sendable, Equatable {
        /// The key, with its `=`.
        public var key: String
        /// The value in force.
        public var old: String
        /// The value in the new configuration.
        public var new: String
    }

    /// The keys whose change needs a restart, in syncd.conf(5) order; empty when the reload may apply. The
    /// directories are compared as paths to the same folder (`FolderPath.normalized`); a change shows them as given.
    public static func changesNeedingRestart(from old: RestartSettings, to new: RestartSettings) -> [Change] {
        let keys: [(String, KeyPath<RestartSettings, String>, Bool)] = [
            ("Account=", \.account, false), ("StateDirectory=", \.stateDirectory, true),
            ("CacheDirectory=", \.cacheDirectory, true), ("RuntimeDirectory=", \.runtimeDirectory, true),
            ("ControlGroup=", \.controlGroup, false), ("ReadGroup=", \.readGroup, false),
        ]
        return keys.compactMap { key, path, isFolder in
            let (was, now) = (old[keyPath: path], new[keyPath: path])
            let same = isFolder ? FolderPath.normalized(was) == FolderPath.normalized(now) : was == now
            // Only ReadGroup= may be empty (not set): say so rather than print nothing.
            return same ? nil : Change(key: key, old: was.isEmpty ? "(not set)" : was, new: now.isEmpty ? "(not set)" : now)
        }
    }

    /// Why the reload is rejected and what to do, or nil when nothing needs a restart: "Account= changed from alice
    /// to bob, which only a restart applies; restart syncd to apply the new configuration (systemctl restart syncd)".
    public static func rejection(_ changes: [Change], userMode: Bool) -> String? {
        guard let first = changes.first else { return nil }
        var parts = ["\(first.key) changed from \(shown(first.old)) to \(shown(first.new))"]
        parts += changes.dropFirst().map { "\($0.key) from \(shown($0.old)) to \(shown($0.new))" }
        let listed = parts.count == 1 ? parts[0] : parts.dropLast().joined(separator: ", ") + " and " + parts[parts.count - 1]
        let restart = userMode ? "systemctl --user restart syncd" : "systemctl restart syncd"
        return "\(listed), which only a restart applies; nothing of the new configuration was applied: "
            + "restart syncd to apply it (\(restart))"
    }

    private static func shown(_ value: String) -> String { PrintableText.escaping(value) }
}
