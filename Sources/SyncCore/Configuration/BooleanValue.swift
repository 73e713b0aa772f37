// Booleans as syncd.conf(5) (and systemd's parse_boolean()) spell them.

/// Parses booleans as syncd.conf(5) lists them.
public enum BooleanValue {
    /// Parses `yes`/`no`, `true`/`false`, `on`/`off`, `1`/`0`, in any letter case.
    ///
    /// - Throws: `ValueError`, e.g. `invalid boolean "maybe"; use yes or no`.
    public static func parse(_ text: String) throws(ValueError) -> Bool {
        switch ConfigurationText.trimmed(text).lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw ValueError("invalid boolean \"\(text)\"; use yes or no")
        }
    }

    /// `yes` or `no`, as the configuration files write it.
    public static func format(_ value: Bool) -> String {
        value ? "yes" : "no"
    }
}
