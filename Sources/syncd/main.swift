// syncd: parse the command line and hand over to SyncDaemon. Nothing else lives here.
import Glibc
import SyncCore
import SyncDaemon
import SyncRemote

let usage = """
    Usage: syncd [OPTIONS]

    Keep an offline-first local cache of remote JSON collections.

    Options:
      --once              Refresh every source once, push the outbox, exit 0 only if all succeeded
      --check-config      Validate the configuration, print problems as FILE:LINE: message
      --verbose           With --check-config: also show what each source will do (pages, item URLs)
      --probe SOURCE      Fetch the first page of SOURCE, print the signs of more pages it shows and
                          the Pagination= settings that fetch them all; nothing is stored
      --config-dir DIR    Read configuration from DIR (default /etc/syncd; with --user
                          $XDG_CONFIG_HOME/syncd)
      --user              User mode: XDG directories instead of system ones
      --version           Print the version and exit
      -h, --help          Print this help and exit

    See syncd(8) and syncd.conf(5).
    """

func fail(usage message: String) -> Never {
    writeStderr("syncd: \(message)\nTry 'syncd --help' for more information.\n")
    exit(2)
}

func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

// Everything syncd creates is private unless it says otherwise: cache files, folders and the control
// socket get their modes explicitly (0640, 0750, 0666 with peer-credential checks).
umask(0o077)
// Tokens live in this process's memory: a crash must not write them to a core file, nor may another user read
// them through ptrace or /proc (syncd(8), SECURITY, "Core dumps").
do { try CoreDumps.disable() } catch { writeStderr("syncd: warning: \(error); a crash may leave a core dump\n") }

var once = false, checkConfig = false, userMode = false, verbose = false
var configDirectory: String?
var probe: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--once": once = true
    case "--check-config": checkConfig = true
    case "--user": userMode = true
    case "--verbose": verbose = true
    case "--probe":
        guard let value = arguments.popFirst(), !value.isEmpty else { fail(usage: "option '--probe' needs a source name") }
        probe = value
    case _ where argument.hasPrefix("--probe="):
        probe = String(argument.dropFirst("--probe=".count))
    case "--config-dir":
        guard let value = arguments.popFirst(), !value.isEmpty else { fail(usage: "option '--config-dir' needs a directory") }
        configDirectory = value
    case _ where argument.hasPrefix("--config-dir="):
        configDirectory = String(argument.dropFirst("--config-dir=".count))
    case "--version":
        print("syncd \(syncdVersion)")
        exit(0)
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        fail(usage: argument.hasPrefix("-") ? "unknown option '\(argument)'" : "unexpected argument '\(argument)' (syncd takes options only)")
    }
}
if once && checkConfig { fail(usage: "--once and --check-config cannot be combined") }
if probe != nil && (once || checkConfig) { fail(usage: "--probe cannot be combined with --once or --check-config") }
if !once && !checkConfig && probe == nil {
    // From here on SIGTERM, SIGINT and SIGHUP wait for the daemon's loop (which takes them once the configuration
    // is read and the store open) instead of ending the process with exit status 143, no "Stopped" and no retry
    // state saved. Should that fail, the loop tries again and says so.
    try? SignalWatcher.install()
}
if verbose && !checkConfig { fail(usage: "--verbose goes with --check-config") }

var environment: [String: String] = [:]
for (key, value) in ProcessEnvironment.all() { environment[key] = value }
let directory = configDirectory ?? ConfigurationDirectory.defaultDirectory(userMode: userMode, environment: environment)
let logger = Logger(environment: environment)
// A configuration that cannot be used ends the daemon with EX_CONFIG, which the units do not restart on
// (RestartPreventExitStatus=); --check-config and --once exit 1 (syncd.8, EXIT STATUS).
let configurationErrorStatus = StartExitStatus.forConfigurationError(checkConfig || probe != nil ? .checkConfig : once ? .once : .daemon)
// A directory named with --config-dir must be there: a typo would otherwise run (or check) the defaults.
// Only the default directory may be missing (syncd.8, OPTIONS).
if let named = configDirectory {
    var info = stat()
    if stat(named, &info) != 0 && (errno == ENOENT || errno == ENOTDIR) {
        writeStderr("syncd: configuration directory \(named) does not exist\n")
        exit(configurationErrorStatus)
    }
    if stat(named, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR {
        writeStderr("syncd: configuration directory \(named) is not a directory\n")
        exit(configurationErrorStatus)
    }
}

let configuration: Configuration
let failedSources: [FailedSource]
switch ConfigurationDirectory.loadSkippingFailedSources(directory: directory) {
case .success(let loaded) where probe != nil:
    // The source probed must have loaded; the others' problems are not this command's business.
    guard let name = probe, let source = loaded.configuration.source(named: name) else {
        for problem in loaded.problems { writeStderr("\(problem)\n") }
        writeStderr("syncd: no source named \"\(probe ?? "")\" is configured in \(directory)"
                    + (loaded.configuration.sources.isEmpty ? "" : " (sources: \(loaded.configuration.sources.map(\.name).joined(separator: ", ")))") + "\n")
        exit(1)
    }
    exit(PaginationProbe(source: source, environment: environment).run(print: { print($0) }))
case .success(let loaded) where checkConfig:
    // Every problem, on stderr as FILE:LINE: message; a broken source would be skipped, but it is still wrong.
    guard loaded.failedSources.isEmpty else {
        for problem in loaded.problems { writeStderr("\(problem)\n") }
        exit(1)
    }
    configuration = loaded.configuration
    failedSources = []
case .success(let loaded):
    configuration = loaded.configuration
    failedSources = loaded.failedSources
    // Each broken source is left out, at error priority (journalctl -p err shows it); the others run.
    for failed in failedSources { logger.sourceFailed(failed) }
case .failure(let errors):
    if checkConfig || probe != nil {
        for problem in errors.problems { writeStderr("\(problem)\n") }
    } else {
        // syncd.conf (or a drop-in) is wrong: refuse to start, at error priority.
        logger.configurationRejected(errors.problems)
        logger.error("Failed to load the configuration from \(directory); fix it (see 'syncd --check-config'), then start syncd again")
    }
    exit(configurationErrorStatus)
}
if checkConfig {
    // Valid, but likely not what was meant: say so on stderr (stdout stays the one-line verdict).
    var info = stat()
    if stat(directory, &info) != 0 {
        writeStderr("syncd: note: \(directory) does not exist; the defaults apply\n")
    }
    if configuration.sources.isEmpty {
        writeStderr("syncd: note: no sources are configured; add \(directory)/sources.d/NAME.source (see syncd.conf(5))\n")
    }
    // A token is read from $CREDENTIALS_DIRECTORY, which only the service gets: checked where it can be.
    let credentials = Credentials.check(configuration.sources, environment: environment)
    for warning in credentials.warnings { writeStderr("\(warning)\n") }
    if !credentials.errors.isEmpty {
        for problem in credentials.errors { writeStderr("\(problem)\n") }
        exit(1)
    }
    if verbose {
        for source in configuration.sources {
            // URLs as everywhere else: no credential query values (syncd(8), SECURITY, "Secrets").
            for line in source.explanation { print("\(source.name): \(Redaction.scrubbingURLs(in: line))") }
        }
    }
    print("configuration OK")
    exit(0)
}

let directories = Directories(configuration.daemon, userMode: userMode, environment: environment)
if once {
    // A source that was not loaded did not succeed either. The run ends the process with its store still open
    // (`OnceRun.run(report:exit:)`): only stdio is left to flush. exit(3) would also run the atexit handlers of
    // the libraries libcurl brought (OpenSSL's cleanup frees its global state), which the process no longer
    // needs: ~0.2 ms of a 304 (docs/benchmarks.md, "First sync against the transfer floor"). The daemon ends
    // the same way, below.
    let end: (Int32) -> Never = { status in
        fflush(nil)
        _exit(failedSources.isEmpty ? status : 1)
    }
    end(OnceRun(configuration: configuration, directories: directories, userMode: userMode, logger: logger, environment: environment)
        .run(report: { writeStderr($0 + "\n") }, exit: end))
}
let run = DaemonRun(configuration: configuration, configurationDirectory: directory, directories: directories,
                    userMode: userMode, logger: logger, environment: environment, failedSources: failedSources)
// All of the daemon's tasks run on one serial queue (see DaemonExecutor for why).
let status = await withTaskExecutorPreference(DaemonExecutor.shared) { await run.run() }
// The stop is done: every request answered, the retry states saved, "Stopped" logged. Other threads may still
// run: the control socket's and the link monitor's (their wait is bounded), the Swift runtime's pool, a refresh
// lane the core stopped waiting for after its grace (still inside libcurl or SQLite). exit(3) would run the
// atexit handlers and destructors of every library loaded so far under them: OpenSSL, loaded with libcurl, pins
// itself in memory when libcurl is unloaded (/proc/PID/maps still lists libcrypto and libssl) and has registered
// OPENSSL_cleanup with atexit, which frees its global state while a thread may still load or use libcurl. A stop
// in CI once ended with SIGABRT instead of status 0 while two refreshes were being cancelled (its message was not
// kept). Nothing is left to flush but stdio: end the process without them.
fflush(nil)
_exit(status)
