internal import Glibc

/// Where `syncctl` writes and what the terminal can show.
public struct TerminalOutput: Sendable {
    /// Whether standard output is a terminal (progress lines, pretty JSON).
    public var isTerminal: Bool
    /// Whether to colour the status dots.
    public var color: Bool

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
        return TerminalOutput(isTerminal: tty, color: shouldColor(environment: environment, isTerminal: tty))
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

    /// `●`, coloured when `enabled`.
    public func dot(enabled: Bool) -> String {
        enabled ? rawValue + "●" + "\u{1B}[0m" : "●"
    }
}
