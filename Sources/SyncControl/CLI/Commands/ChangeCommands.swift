/// `syncctl put SOURCE [FILE|-]`.
public struct PutCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "put", abstract: "Queue a new or changed record (writable sources)",
        discussion: "Reads one JSON object from FILE, or from standard input without FILE or with -. "
            + "A record without an ID gets a UUID. Prints the record's ID once the change is stored.",
        positionals: [PositionalSpec("SOURCE", help: "Source name"), PositionalSpec("FILE|-", optional: true, help: "JSON file, - for standard input")])

    let source: String, file: String

    public init(arguments: ParsedArguments) {
        source = arguments.positionals[0]
        file = arguments.positional(1) ?? "-"
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        let bytes = try context.readFile(file)
        let record: JSONObject
        do {
            guard let object = try JSONValue(parsing: bytes).objectValue else { throw CommandFailure.failed("\(file == "-" ? "standard input" : file): expected one JSON object") }
            record = object
        } catch let error as JSONParseError {
            throw .failed("\(file == "-" ? "standard input" : file): \(error)")
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw .failed("\(error)")
        }
        try checkFitsOneCall(record)
        let reply = try context.call(.put(source: source, record: record))
        context.output.write(HumanFormat.printable(reply["id"]?.stringValue ?? "") + "\n")
        warnUnwritten(reply, source: source, context)
    }
}

extension PutCommand {
    /// Refuses a record that cannot fit in one control call, which syncd would refuse as a bare protocol
    /// error (docs/control-api.md, "Bounds and protocol errors"); the call's own bytes are counted generously.
    func checkFitsOneCall(_ record: JSONObject) throws(CommandFailure) {
        let size = JSONValue.object(record).serializedBytes().count
        let limit = ControlServerLimits.defaultMaxMessageSize
        guard size + 256 + source.utf8.count > limit else { return }
        throw .failed("the record is \(size) bytes as JSON, but one call to syncd carries at most 1 MiB (\(limit) bytes, a limit "
                      + "that cannot be raised): make the record smaller than 1 MiB, or change a record this large on the "
                      + "server itself; nothing was queued")
    }
}

/// After a stored local change: when syncd could not write the cache file (a full disk), says so on standard
/// error; the change itself is stored and will be pushed (docs/syncctl.1.md, *put*).
func warnUnwritten(_ reply: JSONObject, source: String, _ context: CommandContext) {
    guard let unwritten = reply["unwritten"]?.integerValue, unwritten > 0 else { return }
    context.output.writeError("syncctl: warning: the change is stored, but syncd could not write the cache file of \(source): "
                              + "\(counted(Int(unwritten), "record")) \(unwritten == 1 ? "is" : "are") not yet written to it "
                              + "(see 'syncctl status'; free disk space, syncd retries)\n")
}

/// `syncctl delete SOURCE ID`.
public struct DeleteCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "delete", abstract: "Queue the removal of a record (writable sources)",
        positionals: [PositionalSpec("SOURCE", help: "Source name"), PositionalSpec("ID", help: "Record ID")])

    let source: String, id: String

    public init(arguments: ParsedArguments) {
        source = arguments.positionals[0]
        id = arguments.positionals[1]
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        warnUnwritten(try context.call(.delete(source: source, id: id)), source: source, context)
    }
}

/// `syncctl outbox [SOURCE] [--discarded] [--retry SEQ] [--drop SEQ] [--restore SEQ]`.
public struct OutboxCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "outbox", abstract: "Show queued local changes; retry or drop one; see and restore discarded ones",
        discussion: "Lists the outbox (of SOURCE, or of every source). Parked changes were refused by the server; "
            + "--retry SEQ queues one again, --drop SEQ discards it. --discarded lists the changes a ConflictPolicy= "
            + "discarded (kept for DiscardedRetentionSec=); --restore SEQ queues one of them again.",
        positionals: [PositionalSpec("SOURCE", optional: true, help: "Source name")],
        options: [.option("retry", value: "SEQ", help: "Push the parked change SEQ again"),
                  .option("drop", value: "SEQ", help: "Discard the change SEQ without pushing it"),
                  .flag("discarded", help: "List the changes a ConflictPolicy= discarded"),
                  .option("restore", value: "SEQ", help: "Queue the discarded change SEQ again")],
        printsJSON: true)

    enum Action { case list(String?), listDiscarded(String?), retry(Int64), drop(Int64), restore(Int64) }
    let action: Action

    public init(arguments: ParsedArguments) throws(UsageError) {
        let actions = [("retry", arguments.values["retry"]), ("drop", arguments.values["drop"]), ("restore", arguments.values["restore"])]
            .compactMap { name, value in value.map { (name, $0) } }
        let discarded = arguments.flags.contains("discarded")
        if actions.count > 1 || (discarded && !actions.isEmpty) {
            let names = actions.map { "--\($0.0)" } + (discarded ? ["--discarded"] : [])
            throw UsageError("\(names.joined(separator: " and ")) cannot be combined", command: "outbox")
        }
        if let (name, text) = actions.first {
            let column = name == "restore" ? "the SEQ column of 'syncctl outbox --discarded'" : "the SEQ column"
            guard let seq = Int64(text), seq > 0 else { throw UsageError("invalid outbox entry '\(text)' (expected a number from \(column))", command: "outbox") }
            action = name == "retry" ? .retry(seq) : name == "drop" ? .drop(seq) : .restore(seq)
        } else {
            action = discarded ? .listDiscarded(arguments.positional(0)) : .list(arguments.positional(0))
        }
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        switch action {
        case .retry(let seq):
            _ = try context.call(.retryOutbox(seq: seq))
            context.output.write("Queued outbox entry \(seq) again; it is pushed at the next refresh.\n")
        case .drop(let seq):
            let reply = try context.call(.dropOutbox(seq: seq))
            // A daemon that does not say (older than `shows`) dropped a change of a record the server has.
            switch reply["shows"]?.stringValue.flatMap(DroppedRecordView.init(rawValue:)) ?? .server {
            case .server:
                context.output.write("Dropped outbox entry \(seq); the cache shows the server's version of its record again.\n")
            case .local:
                context.output.write("Dropped outbox entry \(seq); the cache shows the newer local change of its record.\n")
            case .nothing:
                context.output.write("Dropped outbox entry \(seq); its record is removed from the local view, as the server's listing does not have it.\n")
            }
        case .restore(let seq):
            let reply = try context.call(.restoreDiscarded(seq: seq))
            context.output.write(OutboxCommand.restored(seq, reply: reply))
            if let source = reply["source"]?.stringValue { warnUnwritten(reply, source: source, context) }
        case .list(let source):
            let reply = try context.call(.listOutbox(source: source))
            if context.globals.json != nil { return context.printJSON(reply["entries"] ?? []) }
            var entries: [OutboxEntry] = []
            for (index, value) in (reply["entries"]?.arrayValue ?? []).enumerated() {
                guard let object = value.objectValue else { throw .failed("unexpected reply from syncd: entries[\(index)]") }
                entries.append(try context.decode { () throws(ReplyShapeError) in try OutboxEntry(json: object, path: "entries[\(index)]") })
            }
            let rows = entries.map { entry in
                [String(entry.seq), entry.source, entry.id, entry.operation, entry.state, String(entry.attempts),
                 entry.lastError ?? entry.lastStatus.map { "HTTP \($0)" } ?? "-"]  // the error names its status
            }
            context.output.write(Table.render(header: ["SEQ", "SOURCE", "ID", "OPERATION", "STATE", "ATTEMPTS", "LAST ERROR"],
                                              rows: rows, legend: !context.globals.noLegend, noun: ("change", "changes")))
        case .listDiscarded(let source):
            let reply = try context.call(.listDiscarded(source: source))
            if context.globals.json != nil { return context.printJSON(reply["discarded"] ?? []) }
            var rows: [[String]] = []
            for (index, value) in (reply["discarded"]?.arrayValue ?? []).enumerated() {
                guard let object = value.objectValue else { throw .failed("unexpected reply from syncd: discarded[\(index)]") }
                let entry = try context.decode { () throws(ReplyShapeError) in try DiscardedEntry(json: object, path: "discarded[\(index)]") }
                rows.append([String(entry.seq), entry.source, entry.id, entry.operation, entry.discardedAt, entry.reason])
            }
            context.output.write(Table.render(header: ["SEQ", "SOURCE", "ID", "OPERATION", "DISCARDED", "REASON"],
                                              rows: rows, legend: !context.globals.noLegend, noun: ("discarded change", "discarded changes")))
        }
    }

    /// What `--restore SEQ` did, from the `RestoreDiscarded` reply.
    static func restored(_ seq: Int64, reply: JSONObject) -> String {
        let source = HumanFormat.printable(reply["source"]?.stringValue ?? "?")
        let id = HumanFormat.printable(reply["id"]?.stringValue ?? "?")
        let operation = reply["operation"]?.stringValue ?? "change"
        guard let entry = reply["seq"]?.integerValue else {
            return "Restored discarded change \(seq): the \(operation) of \(id) in \(source) cancelled a create not yet pushed; nothing to push.\n"
        }
        return "Restored discarded change \(seq) as outbox entry \(entry): the \(operation) of \(id) in \(source) is pushed at the next refresh.\n"
    }
}

/// `syncctl conflicts`.
public struct ConflictsCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "conflicts", abstract: "Show local changes that clash with the server's version",
        discussion: "Settle each with 'syncctl resolve SOURCE ID --keep local|remote'. --json shows both versions.",
        printsJSON: true)

    public init(arguments: ParsedArguments) {}

    public func run(_ context: CommandContext) throws(CommandFailure) {
        let reply = try context.call(.listConflicts(source: nil))
        if context.globals.json != nil { return context.printJSON(reply["conflicts"] ?? []) }
        var rows: [[String]] = []
        var details = ""
        for (index, value) in (reply["conflicts"]?.arrayValue ?? []).enumerated() {
            guard let object = value.objectValue else { throw .failed("unexpected reply from syncd: conflicts[\(index)]") }
            let conflict = try context.decode { () throws(ReplyShapeError) in try ConflictEntry(json: object, path: "conflicts[\(index)]") }
            rows.append([conflict.source, conflict.id, conflict.detectedAt, conflict.localVersion ?? (conflict.local == nil ? "deleted" : "-"),
                         conflict.remoteVersion ?? (conflict.remote == nil ? "deleted" : "-")])
            details += "\n" + ConflictsCommand.sideBySide(conflict)
        }
        context.output.write(Table.render(header: ["SOURCE", "ID", "DETECTED", "LOCAL", "REMOTE"], rows: rows,
                                          legend: !context.globals.noLegend, noun: ("conflict", "conflicts")))
        context.output.write(details)
    }

    /// Both versions of the record, field by field; `*` marks the fields that differ.
    static func sideBySide(_ conflict: ConflictEntry) -> String {
        var keys: [String] = []
        for key in (conflict.local?.keys ?? []) + (conflict.remote?.keys ?? []) where !keys.contains(key) { keys.append(key) }
        func text(_ object: JSONObject?, _ key: String) -> String {
            guard let object else { return "(deleted)" }
            guard let value = object[key] else { return "(absent)" }
            let compact = value.serialized(.compact)
            return HumanFormat.printableJSON(compact.count > 40 ? String(compact.prefix(39)) + "…" : compact)
        }
        let rows = keys.map { key -> [String] in
            let local = text(conflict.local, key), remote = text(conflict.remote, key)
            return [(local == remote ? "  " : "* ") + key, local, remote]
        }
        return "\(conflict.source) \(HumanFormat.printable(conflict.id)):\n"
            + Table.render(header: ["  FIELD", "LOCAL", "REMOTE"], rows: rows, legend: false, noun: ("field", "fields"))
    }
}

/// `syncctl resolve SOURCE ID --keep local|remote`.
public struct ResolveCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "resolve", abstract: "Settle a conflict",
        positionals: [PositionalSpec("SOURCE", help: "Source name"), PositionalSpec("ID", help: "Record ID")],
        options: [.option("keep", value: "local|remote", required: true, help: "Keep the local change (push it) or the server's version")])

    let source: String, id: String, keep: ConflictSide

    public init(arguments: ParsedArguments) throws(UsageError) {
        source = arguments.positionals[0]
        id = arguments.positionals[1]
        guard let text = arguments.values["keep"] else { throw UsageError("missing option --keep local|remote", command: "resolve") }
        guard let keep = ConflictSide(rawValue: text) else { throw UsageError("invalid --keep '\(text)' (expected local or remote)", command: "resolve") }
        self.keep = keep
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        warnUnwritten(try context.call(.resolve(source: source, id: id, keep: keep)), source: source, context)
        switch keep {
        case .local: context.output.write("Resolved \(id) of \(source) keeping the local version; it is pushed at the next refresh.\n")
        case .remote: context.output.write("Resolved \(id) of \(source) keeping the server's version; the local change is dropped.\n")
        }
    }
}

/// Column-aligned tables with a header and a count footer (left out with `--no-legend`).
enum Table {
    static func render(header: [String], rows: [[String]], legend: Bool, noun: (String, String)) -> String {
        let all = (legend ? [header] + rows : rows).map { $0.map(HumanFormat.printable) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
        var text = ""
        for row in all {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            text += cells.joined(separator: "  ") + "\n"
        }
        if legend {
            text += (rows.isEmpty ? "" : "\n") + "\(rows.count) \(rows.count == 1 ? noun.0 : noun.1) listed.\n"
        }
        return text
    }
}
