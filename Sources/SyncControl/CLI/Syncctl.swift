internal import Glibc

/// The `syncctl` program: parse, resolve the socket, run a command, map failures to exit
/// statuses (0 success, 1 operation failed, 2 usage, 3 daemon not reachable).
public enum Syncctl {
    /// Version printed by `--version`: the one version constant of the build.
    public static let version = syncdVersion

    /// Exit statuses.
    public enum ExitStatus: Int32, Sendable {
        case success = 0, failure = 1, usage = 2, unreachable = 3
    }

    /// The top-level help text.
    public static var help: String {
        var text = "Usage: syncctl [OPTIONS] [COMMAND] [ARGS...]\n\nControl syncd, the offline-first cache of remote JSON collections.\n"
            + "Without COMMAND shows the status.\n\nCommands:\n"
        for command in syncctlCommands {
            text += helpLine(command.configuration.name, command.configuration.abstract)
        }
        text += "\n" + GlobalOptions.helpText
        text += "\nExit status: 0 success, 1 operation failed, 2 usage error, 3 daemon not reachable or not answering.\n"
        text += "See 'syncctl COMMAND --help' and syncctl(1).\n"
        return text
    }

    /// The socket: `--socket`, else `$SYNCD_SOCKET`, else (with `--user`)
    /// `$XDG_RUNTIME_DIR/syncd/io.syncd.Manager`, else `/run/syncd/io.syncd.Manager`.
    public static func socketPath(globals: GlobalOptions, environment: [String: String]) throws(CommandFailure) -> String {
        if let socket = globals.socket { return socket }
        if let socket = environment["SYNCD_SOCKET"], !socket.isEmpty { return socket }
        if globals.user {
            guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
                throw .unreachable("--user needs $XDG_RUNTIME_DIR to find the user daemon's socket (or pass --socket PATH)")
            }
            return AccountPaths.controlSocket(in: runtime + "/syncd")
        }
        return AccountPaths.controlSocket(in: "/run/syncd")
    }

    /// Runs `syncctl` with `arguments` (without the program name); returns the exit status.
    public static func run(arguments: [String], environment: [String: String], output: TerminalOutput,
                           readFile: @escaping (String) throws(CommandFailure) -> [UInt8]) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try parseCommandLine(arguments, commands: syncctlCommands.map { $0.configuration })
        } catch {
            output.writeError(error.text)
            return ExitStatus.usage.rawValue
        }
        if invocation.globals.version {
            output.write("syncctl \(version)\n")
            return ExitStatus.success.rawValue
        }
        if invocation.globals.jsonHelp {
            // systemctl --json=help: the modes, one per line.
            output.write("short\npretty\noff\n")
            return ExitStatus.success.rawValue
        }
        if invocation.globals.help && invocation.command == nil {
            output.write(help)
            return ExitStatus.success.rawValue
        }
        // `syncctl` alone shows the status, as timedatectl does.
        let name = invocation.command ?? StatusCommand.configuration.name
        guard let type = syncctlCommands.first(where: { $0.configuration.name == name }) else {
            output.writeError(UsageError("unknown command '\(name)'", command: nil).text)
            return ExitStatus.usage.rawValue
        }
        if invocation.globals.help {
            output.write(type.configuration.help)
            return ExitStatus.success.rawValue
        }
        if type == HelpCommand.self {
            // Needs no daemon, so no socket either.
            return HelpCommand.printHelp(about: invocation.arguments.positional(0), output: output).rawValue
        }
        do {
            let command = try type.init(arguments: invocation.arguments)
            let context = CommandContext(globals: invocation.globals, output: output,
                                         socketPath: try socketPath(globals: invocation.globals, environment: environment),
                                         readFile: readFile)
            try command.run(context)
            return ExitStatus.success.rawValue
        } catch let error as UsageError {
            output.writeError(error.text)
            return ExitStatus.usage.rawValue
        } catch let failure as CommandFailure {
            let (message, status) = describe(failure, command: name)
            // The reason may quote a server (a refresh's error): escaped, as on every human line.
            output.writeError(HumanFormat.printableLines(message))
            return status.rawValue
        } catch {
            output.writeError(HumanFormat.printableLines("syncctl: \(error)\n"))
            return ExitStatus.failure.rawValue
        }
    }

    /// The message and exit status for a failure.
    public static func describe(_ failure: CommandFailure, command: String) -> (String, ExitStatus) {
        switch failure {
        case .failed(let message):
            return ("syncctl: \(message)\n", .failure)
        case .unreachable(let message):
            return ("syncctl: \(message)\n", .unreachable)
        case .failures(let messages):
            // One line each (a refresh's reason quotes a server): a line break in one is escaped, not a new line.
            return (messages.map { "syncctl: \(HumanFormat.printable($0))\n" }.joined(), .failure)
        case .client(.connect(let path, let code)) where code == EACCES || code == EPERM:
            return ("syncctl: cannot connect to \(path): \(VarlinkClientError.text(of: code))\n"
                    + "The socket or a directory above it is closed to you; check their permissions (syncd makes the socket 0666).\n",
                    .unreachable)
        case .client(.connect(let path, let code)):
            return ("syncctl: cannot connect to \(path): \(VarlinkClientError.text(of: code))\n"
                    + "Is syncd running? Start it with 'systemctl start syncd' (or 'systemctl --user start syncd').\n", .unreachable)
        case .client(.timedOut(let path, let seconds)):
            return ("syncctl: syncd did not answer within \(VarlinkClientError.format(seconds: seconds)) (\(path)); it may be busy "
                    + "or hung. See 'journalctl -u syncd', or wait longer with --timeout=SEC (0 waits for ever).\n", .unreachable)
        case .client(.disconnected):
            return ("syncctl: syncd closed the connection before answering; did it stop or restart? See 'journalctl -u syncd'.\n",
                    .unreachable)
        case .client(.remote(let name, let parameters))
            where name == ManagerError.tooManyConnections(reason: "").varlinkName || name == ManagerError.stopping.varlinkName:
            return ("syncctl: \(describeRemoteError(name: name, parameters: parameters, command: command))\n", .unreachable)
        case .client(.remote(let name, let parameters)):
            return ("syncctl: \(describeRemoteError(name: name, parameters: parameters, command: command))\n", .failure)
        case .client(let error):
            return ("syncctl: \(error)\n", .failure)
        }
    }

    /// A one-line explanation of a Varlink error reply.
    public static func describeRemoteError(name: String, parameters: JSONObject, command: String) -> String {
        if let error = ManagerError(name: name, parameters: parameters) {
            switch error {
            case .permissionDenied(let needs) where !needs.isEmpty:
                return "permission denied: \(command) needs \(HumanFormat.printable(needs))"
            case .permissionDenied:
                // A daemon older than the ReadGroup= split does not say who may: its rule was the control group.
                return "permission denied: \(command) needs root or membership in the daemon's ControlGroup= (default \"syncd\")"
            case .noSuchSource(let source): return "no such source: \(source); 'syncctl status' lists the configured sources"
            // The ID on one line whatever it holds (the message's own lines are kept: `printableLines`).
            case .noSuchRecord(let source, let id): return "no record with ID \(HumanFormat.printable(id)) in source \(HumanFormat.printable(source))"
            case .notWritable(let source): return "source \(source) is read-only (it is not configured with Writable=yes)"
            case .noSuchOutboxEntry(let seq): return "no outbox entry \(seq)"
            case .noSuchDiscardedChange(let seq):
                return "no discarded change \(seq) (restored already, or kept no longer than DiscardedRetentionSec=); "
                    + "'syncctl outbox --discarded' lists them"
            case .invalidParameter(let parameter, let reason) where command == "resolve" && parameter == "id":
                // The record exists but has nothing to resolve: say where the conflicts are, not "invalid id".
                return "\(reason); 'syncctl conflicts' lists the records that are"
            case .invalidParameter(let parameter, let reason): return "invalid \(parameter): \(reason)"
            case .refreshFailed(let source, let reason): return "refresh of \(source) failed: \(HumanFormat.printable(reason))"
            case .reloadFailed(let reason): return "reload failed, the old configuration stays in force: \(reason)"
            case .pendingChanges(let count):
                return "logout refused: \(count) local \(count == 1 ? "change is" : "changes are") not pushed yet; "
                    + "'syncctl logout --discard-pending' erases them"
            case .storageFailure(let reason): return "syncd could not read or write its data: \(reason)"
            case .stopping:
                switch command {
                case "watch": return "syncd stopped; the watch ended"
                case "refresh": return "syncd is stopping; the refresh was not completed"
                default: return "syncd is stopping; ask again once it runs"
                }
            case .cancelled(let reason): return reason
            case .changesExpired(let source, let oldest):
                let name = HumanFormat.printable(source)
                return "the change log of \(name) starts after that change (the oldest --since it answers is \(oldest)); "
                    + "list the source again ('syncctl list \(name)') and follow from the change number 'syncctl status \(name)' shows"
            case .tooManyConnections(let reason):
                return "syncd refused the connection: \(reason). Try again when fewer are open (idle ones are closed within a minute)"
            }
        }
        if let error = VarlinkServiceError(name: name, parameters: parameters) {
            switch error {
            case .permissionDenied:
                return "permission denied: \(command) needs root or membership in the daemon's ControlGroup= (default \"syncd\")"
            case .methodNotFound(let method), .methodNotImplemented(let method):
                return "this syncd does not support \(method) (is it older than syncctl?)"
            default: break
            }
        }
        return "syncd answered \(VarlinkClientError.remote(name: name, parameters: parameters).description)"
    }
}
