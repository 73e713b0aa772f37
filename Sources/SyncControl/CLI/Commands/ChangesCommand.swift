import SyncCore

/// `syncctl changes SOURCE [--since SEQ] [--limit N]`: the records changed and removed after a change number
/// (docs/syncctl.1.md, "changes").
public struct ChangesCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "changes", abstract: "List the records changed since a change number",
        discussion: "Prints the IDs of the records of SOURCE changed or removed after change number SEQ (default 0: "
            + "as far back as syncd's log of the source reaches), each once in its latest state, then the source's "
            + "current change number: follow from it with --since next time. Pages of up to --limit IDs are fetched "
            + "until the current change. When the log no longer reaches SEQ, says so and exits 1: list the source "
            + "again. Without --since, starts where the log begins (after a logout or a long absence, a note on "
            + "standard error says so). With --json prints {\"changed\": [...], \"removed\": [...], \"seq\": N}.",
        positionals: [PositionalSpec("SOURCE", help: "Source name")],
        options: [.option("since", value: "SEQ", help: "Change number to start after (default 0)"),
                  .option("limit", value: "N", help: "IDs per page asked of syncd (default and at most 10000)")],
        printsJSON: true)

    let source: String
    let since: Int64
    let limit: Int
    /// Whether --since was given: without it, the log's start is where to begin.
    let sinceGiven: Bool

    public init(arguments: ParsedArguments) throws(UsageError) {
        source = arguments.positionals[0]
        let sinceText = arguments.values["since"] ?? "0"
        guard let since = Int64(sinceText), since >= 0 else {
            throw UsageError("invalid --since '\(sinceText)' (expected a change number: the seq of 'syncctl changes' or 'syncctl status')",
                             command: "changes")
        }
        let limitText = arguments.values["limit"] ?? String(ManagerInterface.maxChangesPage)
        guard let limit = Int(limitText), limit >= 1, limit <= ManagerInterface.maxChangesPage else {
            throw UsageError("invalid --limit '\(limitText)' (expected 1 to \(ManagerInterface.maxChangesPage))", command: "changes")
        }
        self.since = since
        self.limit = limit
        sinceGiven = arguments.values["since"] != nil
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        var since = self.since
        if !sinceGiven, let oldest = try logStart(context), oldest > since {
            context.output.writeError("syncctl: note: syncd's change log of \(HumanFormat.printable(source)) begins after change \(oldest) "
                                      + "(older changes are no longer kept); listing the changes after it\n")
            since = oldest
        }
        var merged = ChangePage(changed: [], removed: [], next: since, seq: since)
        var rows: [ChangeLogRow] = []
        while let from = merged.next {
            let reply = try context.call(.changes(source: source, since: from, limit: limit))
            let page = try context.decode { () throws(ReplyShapeError) in try ChangePage(json: reply) }
            // Later pages hold later changes: the pages merged as one log keep each ID once, in its latest state.
            let seq = page.next ?? page.seq
            rows += page.changed.map { ChangeLogRow(seq: seq, id: $0, removed: false) }
                + page.removed.map { ChangeLogRow(seq: seq, id: $0, removed: true) }
            merged.next = page.next.flatMap { $0 > from ? $0 : nil }
            merged.seq = page.seq
        }
        if case .success(let all) = ChangeFeed.page(rows: rows, since: since, limit: Int.max, current: max(merged.seq, rows.last?.seq ?? 0), floor: 0) {
            merged.changed = all.changed
            merged.removed = all.removed
        }
        if context.globals.json != nil {
            return context.printJSON(.object(["changed": .array(merged.changed.map { .string($0) }),
                                              "removed": .array(merged.removed.map { .string($0) }), "seq": .integer(merged.seq)]))
        }
        context.output.write(ChangesCommand.text(merged, since: since, legend: !context.globals.noLegend))
    }

    /// The oldest change number the log answers when it does not reach back to change 0; nil when it does.
    private func logStart(_ context: CommandContext) throws(CommandFailure) -> Int64? {
        do {
            _ = try context.call(.changes(source: source, since: since, limit: 1))
            return nil
        } catch .client(.remote(let name, let parameters)) where name == "io.syncd.Manager.ChangesExpired" {
            return parameters["oldest"]?.integerValue
        }
    }

    /// One line per record, `changed ID` or `removed ID` (escaped, so no ID makes up a line), then the summary.
    static func text(_ page: ChangePage, since: Int64, legend: Bool) -> String {
        var text = ""
        for id in page.changed { text += "changed " + HumanFormat.printable(id) + "\n" }
        for id in page.removed { text += "removed " + HumanFormat.printable(id) + "\n" }
        if legend {
            if !text.isEmpty { text += "\n" }
            text += "\(counted(page.changed.count, "record")) changed and \(page.removed.count) removed after change \(since); "
                + "the source is at change \(page.seq) (follow with --since \(page.seq)).\n"
        }
        return text
    }
}
