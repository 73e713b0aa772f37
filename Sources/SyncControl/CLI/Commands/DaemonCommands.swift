/// `syncctl refresh [SOURCE] [--wait] [--full]`.
public struct RefreshCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "refresh", abstract: "Ask for a refresh now",
        discussion: "Refreshes SOURCE, or every source. Returns once syncd accepted the request. With --wait shows "
            + "progress on a terminal, then prints one line per source (SOURCE: updated|unchanged, N records); a failed "
            + "source is named on standard error instead and the exit status is 1. With --json prints the outcome "
            + "as one object, or without SOURCE an array of one object per source (failed ones with \"error\"). With --full "
            + "a source with Delta= fetches its whole listing instead of the changes since its checkpoint (to repair a copy that "
            + "drifted from the server's); other sources always do.",
        positionals: [PositionalSpec("SOURCE", optional: true, help: "Source name (default: all sources)")],
        options: [.flag("wait", help: "Wait for the outcome and show progress"),
                  .flag("full", help: "Fetch the whole listing even where Delta= would ask for changes only")],
        printsJSON: true)

    let source: String?, wait: Bool, full: Bool

    public init(arguments: ParsedArguments) {
        source = arguments.positional(0)
        wait = arguments.flags.contains("wait")
        full = arguments.flags.contains("full")
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        guard wait else {
            _ = try context.call(.refresh(source: source, wait: false, full: full))
            return
        }
        let client = try context.connect(waitAsLongAsNeeded: true)
        let showProgress = context.output.isTerminal && context.globals.json == nil
        var drewProgress = false
        // Every reply that carries a result is one source's outcome; the others are progress.
        var outcomes: [RefreshProgress] = []
        var refusal: CommandFailure?
        do {
            try client.callStreaming(ManagerRequest.refresh(source: source, wait: true, full: full).call(more: true)) { (parameters, continues) throws(ReplyShapeError) in
                let progress = try RefreshProgress(json: parameters)
                if progress.result != nil || !continues {
                    outcomes.append(progress)
                } else if showProgress {
                    // Rewrite the line in place: carriage return, then erase to end of line.
                    context.output.write("\r\u{1B}[K" + HumanFormat.printable(RefreshCommand.progressLine(progress)))
                    drewProgress = true
                }
            }
        } catch .client(let error) {
            refusal = context.failure(error)
        } catch {
            refusal = CommandFailure(error)
        }
        if drewProgress { context.output.write("\r\u{1B}[K") }
        let failed = outcomes.filter { $0.error != nil }
        // RefreshFailed after the outcomes only repeats the failures they name; anything else is the answer.
        if let refusal, failed.isEmpty || !refusal.isRefreshFailed { throw refusal }
        if context.globals.json != nil {
            if source != nil, outcomes.count == 1 {
                context.printJSON(.object(outcomes[0].json))
            } else {
                context.printJSON(.array(outcomes.map { .object($0.json) }))
            }
        } else {
            for outcome in outcomes where outcome.error == nil {
                context.output.write(HumanFormat.printable(RefreshCommand.outcomeLine(outcome, requested: source)) + "\n")
            }
        }
        guard failed.isEmpty else {
            throw .failures(failed.map { "refresh of \($0.source ?? source ?? "all sources") failed: \($0.error ?? "unknown error")" })
        }
    }

    /// `posts: 3 pages, 1.2 MB, 12,000 records`.
    static func progressLine(_ progress: RefreshProgress) -> String {
        var parts: [String] = []
        if let pages = progress.pages { parts.append("\(HumanFormat.count(pages)) \(pages == 1 ? "page" : "pages")") }
        if let bytes = progress.bytes { parts.append(HumanFormat.bytes(bytes)) }
        if let records = progress.records { parts.append("\(HumanFormat.count(records)) \(records == 1 ? "record" : "records")") }
        if parts.isEmpty, let state = progress.state { parts.append(state) }
        return "\(progress.source ?? "all sources"): " + parts.joined(separator: ", ")
    }

    /// `posts: updated, 12,000 records` / `posts: unchanged, 2 records`: the daemon's result, as it names it.
    static func outcomeLine(_ outcome: RefreshProgress, requested: String?) -> String {
        var text = "\(outcome.source ?? requested ?? "all sources"): \(outcome.result ?? "done")"
        if let records = outcome.records { text += ", \(HumanFormat.count(records)) \(records == 1 ? "record" : "records")" }
        return text
    }
}

/// `syncctl logout [--discard-pending]`.
public struct LogoutCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "logout", abstract: "Cancel in-flight work and erase the current account's cache and state",
        discussion: "Refused while local changes wait in the outbox, unless --discard-pending.",
        options: [.flag("discard-pending", help: "Erase queued local changes too")])

    let discardPending: Bool

    public init(arguments: ParsedArguments) {
        discardPending = arguments.flags.contains("discard-pending")
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        // Logout answers with nothing: what it erases is read just before, so the person sees what went.
        let before = try? context.call(.getStatus)
        _ = try context.call(.logout(discardPending: discardPending))
        context.output.write(LogoutCommand.summary(of: before, discardPending: discardPending) + "\n")
    }

    /// "Logged out of account default: erased the cache and state of 2 sources (12 cached records)", from
    /// the status read just before the logout; without one, the account is not named.
    static func summary(of status: JSONObject?, discardPending: Bool) -> String {
        guard let status, let sources = status["sources"]?.arrayValue,
              let account = status["daemon"]?.objectValue?["account"]?.stringValue else {
            return "Logged out: erased the current account's cache and state"
        }
        var records: Int64 = 0, changed: Int64 = 0
        for source in sources.compactMap(\.objectValue) {
            records += source["records"]?.integerValue ?? 0
            // `pending` counts parked changes already (GetStatus); a record in conflict is apart.
            changed += (source["pending"]?.integerValue ?? 0) + (source["conflicts"]?.integerValue ?? 0)
        }
        var text = "Logged out of account \(account): erased the cache and state of \(counted(sources.count, "source")) "
            + "(\(counted(Int(records), "cached record")))"
        if discardPending && changed > 0 {
            text += ", and the local changes of \(counted(Int(changed), "record")) not confirmed by the server"
        }
        return text
    }
}

/// `syncctl reload`.
public struct ReloadCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "reload", abstract: "Re-read the configuration (like SIGHUP)",
        discussion: "Returns when the reload is done; a bad configuration is refused, the old one stays, and the exit status is 1.")

    public init(arguments: ParsedArguments) {}

    public func run(_ context: CommandContext) throws(CommandFailure) {
        _ = try context.call(.reload)
    }
}

/// `syncctl help [COMMAND]`: the usage, or one command's help (the same as `--help`).
public struct HelpCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "help", abstract: "Show this help, or a command's",
        positionals: [PositionalSpec("COMMAND", optional: true, help: "Command to explain (default: all)")])

    let command: String?

    public init(arguments: ParsedArguments) {
        command = arguments.positional(0)
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        _ = HelpCommand.printHelp(about: command, output: context.output)
    }

    /// Prints the help about `command` (all commands when nil); an unknown one is a usage error.
    static func printHelp(about command: String?, output: TerminalOutput) -> Syncctl.ExitStatus {
        guard let command else {
            output.write(Syncctl.help)
            return .success
        }
        guard let type = syncctlCommands.first(where: { $0.configuration.name == command }) else {
            output.writeError(UsageError("unknown command '\(command)'", command: "help").text)
            return .usage
        }
        output.write(type.configuration.help)
        return .success
    }
}
