internal import Glibc

/// Where `syncctl` writes and what the terminal can show.
public struct TerminalOutput: Sendable {
    /// Whether standard output is a terminal (progress lines, pretty JSON).
    public var isTerminal: Bool
    /// Whether to colour the status dots.
    public var color: Bool
    /// Whether the locale can show `●` and `—`; else `*` and `-` (as systemctl falls back).
    public var unicode: Bool = true

    /// Where standard output and standard error go (replaceable for tests).
    let writeOutput: @Sendable (String) -> Void
    let writeErrorOutput: @Sendable (String) -> Void

    /// Settings writing to file descriptors 1 and 2.
    public init(isTerminal: Bool, color: Bool) {
        self.init(isTerminal: isTerminal, color: color, write: { TerminalOutput.write($0, to: 1) },
                  writeError: { TerminalOutput.write($0, to: 2) })
    }

    /// Settings writing through the given functions.
    public init(isTerminal: Bool, color: Bool, write: @escaping @Sendable (String) -> Void,
                writeError: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.color = color
        self.writeOutput = write
        self.writeErrorOutput = writeError
    }

    /// Settings for this process's standard output and environment.
    public static func current(environment: [String: String]) -> TerminalOutput {
        let tty = isatty(1) == 1
        var output = TerminalOutput(isTerminal: tty, color: shouldColor(environment: environment, isTerminal: tty))
        _ = setlocale(LC_CTYPE, "")
        let codeset = nl_langinfo(nl_item(CODESET)).map { String(cString: $0) }
        let locale = setlocale(LC_CTYPE, nil).map { String(cString: $0) }
        output.unicode = isUTF8Locale(environment: environment, locale: locale, codeset: codeset)
        return output
    }

    /// systemd's `is_locale_utf8()`: `$SYSTEMD_UTF8` decides if set; a C/POSIX locale nobody asked for
    /// (no `LC_ALL`, `LC_CTYPE`, `LANG`) counts as UTF-8; otherwise the locale's codeset must be UTF-8.
    public static func isUTF8Locale(environment: [String: String], locale: String?, codeset: String?) -> Bool {
        if let setting = environment["SYSTEMD_UTF8"]?.lowercased() {
            switch setting {
            case "0", "no", "false", "off": return false
            case "1", "yes", "true", "on": return true
            default: break
            }
        }
        guard let locale else { return true }
        if locale == "C" || locale == "POSIX" {
            let asked = ["LC_ALL", "LC_CTYPE", "LANG"].contains { !(environment[$0] ?? "").isEmpty }
            if !asked { return true }
        }
        return codeset == "UTF-8"
    }

    /// systemd's rules: `SYSTEMD_COLORS` (0/no/false off; 1/yes/true/16/256 on) beats
    /// `NO_COLOR` (set: off), which beats `TERM=dumb` (off), which beats the terminal check.
    public static func shouldColor(environment: [String: String], isTerminal: Bool) -> Bool {
        if let setting = environment["SYSTEMD_COLORS"]?.lowercased() {
            switch setting {
            case "0", "no", "false", "off": return false
            case "1", "yes", "true", "on", "16", "256", "24bit": return true
            default: break
            }
        }
        if environment["NO_COLOR"] != nil { return false }
        if environment["TERM"] == "dumb" { return false }
        return isTerminal
    }

    /// Writes to standard output unbuffered (so `watch | grep` sees each line at once).
    public func write(_ text: String) {
        writeOutput(text)
    }

    /// Writes to standard error.
    public func writeError(_ text: String) {
        writeErrorOutput(text)
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = retryingEINTR { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// ANSI colours for the status dot.
public enum DotColor: String, Sendable {
    case green = "\u{1B}[0;1;32m"
    case yellow = "\u{1B}[0;1;33m"
    case red = "\u{1B}[0;1;31m"

    /// `●` (`*` without `unicode`), coloured when `enabled`.
    public func dot(enabled: Bool, unicode: Bool = true) -> String {
        let dot = unicode ? "●" : "*"
        return enabled ? rawValue + dot + "\u{1B}[0m" : dot
    }

    /// `×` (`x` without `unicode`) for a source that failed to load, coloured when `enabled` (systemctl's mark
    /// for a failed unit).
    public func cross(enabled: Bool, unicode: Bool = true) -> String {
        let cross = unicode ? "×" : "x"
        return enabled ? rawValue + cross + "\u{1B}[0m" : cross
    }
}
