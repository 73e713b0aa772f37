// One configurable key: how a non-empty value is parsed into the model and
// how an empty assignment resets it. systemd semantics: `Key=` (empty)
// restores the default, and for list keys clears the list.

/// One key of one section, generic over the model it writes into.
struct ConfigurationSetting<Model> {
    /// The key as written in the file; keys are case-sensitive.
    var key: String
    /// Applies a non-empty value.
    var assign: (inout Model, String) throws(ValueError) -> Void
    /// Applies an empty value.
    var reset: (inout Model) -> Void

    /// A key whose value replaces the property at `path`; empty restores `defaultValue`.
    static func value<Value>(
        _ key: String, _ path: WritableKeyPath<Model, Value>, default defaultValue: Value,
        _ parse: @escaping (String) throws(ValueError) -> Value
    ) -> ConfigurationSetting {
        ConfigurationSetting(
            key: key,
            assign: { (model: inout Model, text: String) throws(ValueError) in model[keyPath: path] = try parse(text) },
            reset: { model in model[keyPath: path] = defaultValue })
    }

    /// A time span that must be more than zero.
    static func positiveTimeSpan(_ text: String) throws(ValueError) -> Duration {
        let duration = try TimeSpan.parse(text)
        guard duration > .zero else { throw ValueError("must be greater than 0, e.g. 30s") }
        return duration
    }

    /// A time span of at least `minimum` (or 0 when `zeroTurnsOff`): a shorter one would only load
    /// the server, e.g. `IntervalSec=1ns` would refresh hundreds of times a second.
    static func timeSpan(atLeast minimum: Duration, zeroTurnsOff: Bool = false)
        -> (String) throws(ValueError) -> Duration {
        { text throws(ValueError) in
            let duration = try TimeSpan.parse(text)
            if duration >= minimum || (zeroTurnsOff && duration == .zero) { return duration }
            let floor = TimeSpan.format(minimum)
            throw ValueError(zeroTurnsOff
                ? "\(TimeSpan.format(duration)) is below the minimum of \(floor); use 0 to turn it off, or at least \(floor)"
                : "\(TimeSpan.format(duration)) is below the minimum of \(floor); use at least \(floor)")
        }
    }
}

/// A named section and its keys.
struct ConfigurationSection<Model> {
    var name: String
    var settings: [ConfigurationSetting<Model>]

    var keys: [String] { settings.map(\.key) }

    func setting(for key: String) -> ConfigurationSetting<Model>? {
        settings.first { $0.key == key }
    }

    /// Explains an unknown key: a misspelling, a key of another section, or the list of keys.
    func unknownKeyMessage(_ key: String, otherSections: [ConfigurationSection]) -> String {
        if let home = otherSections.first(where: { $0.setting(for: key) != nil }) {
            return "key \"\(key)\" belongs in [\(home.name)], not [\(name)]"
        }
        if let guess = ConfigurationText.suggestion(for: key, among: keys) {
            return "unknown key \"\(key)\" in [\(name)]; did you mean \"\(guess)\"? (keys are case-sensitive)"
        }
        return "unknown key \"\(key)\" in [\(name)]; known keys: \(keys.joined(separator: ", "))"
    }
}
