/// The exit status of a `syncd` that stops before it runs because the configuration is wrong (syncd(8), EXIT STATUS).
///
/// The daemon exits with `EX_CONFIG` (78, sysexits(3)), which both units list in `RestartPreventExitStatus=`: systemd
/// then leaves the unit `failed`, with the message in `systemctl status`, instead of restarting it every `RestartSec=`
/// with the same error. `--check-config` and `--once` report the configuration's problems with status 1, as every
/// other failure of theirs.
public enum StartExitStatus {
    /// sysexits(3) `EX_CONFIG`: "something was found in an unconfigured or misconfigured state".
    public static let configurationError: Int32 = 78

    /// How syncd was asked to run.
    public enum Mode: Sendable {
        /// The daemon (no `--once`, no `--check-config`): run by systemd, restarted on failure.
        case daemon
        /// `--once`: refresh every source once and exit.
        case once
        /// `--check-config`: validate and exit.
        case checkConfig
    }

    /// The status for a configuration that cannot be used (syncd.conf rejected, or the directory named with
    /// `--config-dir` missing or not a directory) in `mode`.
    public static func forConfigurationError(_ mode: Mode) -> Int32 {
        switch mode {
        case .daemon: configurationError
        case .once, .checkConfig: 1
        }
    }
}
