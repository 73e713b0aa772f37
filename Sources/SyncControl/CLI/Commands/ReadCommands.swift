import SyncCore

/// `syncctl status`.
public struct StatusCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "status", abstract: "Show the daemon's and every source's state, or one source in full",
        discussion: "With --json prints the GetStatus object (see syncctl(1) for its fields). With SOURCE shows that source "
            + "in full (state, URL, counts, last success and attempt, error, next try, mode, warnings, cache file, outbox), "
            + "each named source in turn; with --json its object (an array of them for several names). An unknown name "
            + "is named on standard error with the nearest configured one, and the exit status is 1.",
        positionals: [PositionalSpec("SOURCE", optional: true, repeating: true, help: "Source name (default: the overview of all)")],
        printsJSON: true)

    let sources: [String]

    public init(arguments: ParsedArguments) {
        sources = arguments.positionals
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        if !sources.isEmpty { return try SourceStatusView(names: sources).run(context) }
        if context.globals.json == .short {
            // As received, after checking the reply's frame: no JSON tree of every source (docs/architecture.md,
            // "Status at scale"). Text on several lines (not syncd's) is parsed and printed on one.
            let (text, oneLine) = try context.callReturningText(.getStatus)
            if oneLine {
                // One copy into the string, the newline included: a reply of 10,000 sources is 2.7 MB.
                return context.output.write(String(unsafeUninitializedCapacity: text.count + 1) { buffer in
                    _ = buffer.initialize(fromContentsOf: text)
                    buffer[text.count] = UInt8(ascii: "\n")
                    return text.count + 1
                })
            }
            let value: JSONValue
            do { value = try JSONValue(parsing: Array(text)) } catch { throw .failed("Failed to read syncd's reply: \(error)") }
            return context.printJSON(value)
        }
        if context.globals.json != nil {
            let (reply, text) = try context.callKeepingText(.getStatus)
            return context.printJSON(.object(reply), received: text)
        }
        // The table is written in one pass over the reply's bytes (StatusTable, docs/architecture.md "Status at
        // scale"); a reply it does not read is parsed as a tree, which says what is wrong with it.
        let formatter = StatusFormatter(now: HumanFormat.now(), color: context.output.color, noLegend: context.globals.noLegend,
                                        unicode: context.output.unicode)
        let client = try context.connect()
        let message: [UInt8]
        do { message = try client.callReturningMessage(ManagerRequest.getStatus.call()) } catch { throw .client(error) }
        if let table = StatusTable.format(message[...], envelope: true, with: formatter) { return context.output.write(table) }
        let text: ArraySlice<UInt8>
        do { text = try client.parametersText(of: message).text } catch { throw .client(error) }
        if let table = StatusTable.format(text, with: formatter) { return context.output.write(table) }
        let value: JSONValue
        do { value = try JSONValue(parsing: text) } catch { throw .failed("Failed to read syncd's reply: \(error)") }
        guard let reply = value.objectValue else { throw .failed("Failed to read syncd's reply: its parameters are not an object") }
        let status = try context.decode { () throws(ReplyShapeError) in try ManagerStatus(json: reply) }
        context.output.write(formatter.format(status))
    }
}

/// `syncctl list SOURCE`.
public struct ListCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "list", abstract: "List a source's cached records",
        discussion: "Prints one line per record: its ID and a short preview. With --json prints the records as one JSON array.",
        positionals: [PositionalSpec("SOURCE", help: "Source name")],
        printsJSON: true)

    let source: String

    public init(arguments: ParsedArguments) {
        source = arguments.positionals[0]
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        let client = try context.connect()
        var records: [JSONValue] = []
        var offset = 0
        var behind: (cached: Int64, unwritten: Int64)?
        var fetched = true
        while true {
            let page: JSONObject
            do {
                page = try client.call(ManagerRequest.list(source: source, offset: offset, limit: ManagerInterface.maxPageSize).call())
            } catch { throw context.failure(error) }
            guard let pageRecords = page["records"]?.arrayValue else { throw .failed("unexpected reply from syncd: no records") }
            records += pageRecords
            if let unwritten = page["unwritten"]?.integerValue { behind = (page["cached"]?.integerValue ?? 0, unwritten) }
            if page["fetched"]?.boolValue == false { fetched = false }
            guard let next = page["next"]?.integerValue else { break }
            guard next > offset else { throw .failed("unexpected reply from syncd: next page does not advance") }
            offset = Int(next)
        }
        if !fetched {
            // Not an empty listing: none is held yet (a first sync, or a damaged cache file being fetched again).
            context.output.writeError("syncctl: warning: \(noListingHeld(source)); "
                                      + "\(records.isEmpty ? "nothing" : "only its pending local changes are") listed "
                                      + "(see 'syncctl status')\n")
        }
        if let behind {
            // The records come from syncd's store; a failed write left the file apps read behind it.
            context.output.writeError("syncctl: warning: the cache file of \(source) holds \(counted(Int(behind.cached), "record")); "
                                      + "\(counted(Int(behind.unwritten), "record")) listed here \(behind.unwritten == 1 ? "is" : "are") "
                                      + "not yet written to the cache file (see 'syncctl status')\n")
        }
        if context.globals.json != nil {
            return context.printJSON(.array(records))
        }
        context.output.write(ListCommand.table(records, legend: !context.globals.noLegend))
    }

    /// The table: one line per record, its ID (escaped, a line break too, so no ID makes up a line) and its preview.
    static func table(_ records: [JSONValue], legend: Bool) -> String {
        let ids = records.map { HumanFormat.printable(ListCommand.id(of: $0)) }
        let width = max(2, ids.map(\.count).max() ?? 0)
        var text = legend ? "ID" + String(repeating: " ", count: width - 2) + "  RECORD\n" : ""
        for (id, record) in zip(ids, records) {
            text += id + String(repeating: " ", count: max(0, width - id.count)) + "  " + ListCommand.preview(record) + "\n"
        }
        if legend {
            text += "\n\(HumanFormat.count(Int64(records.count))) \(records.count == 1 ? "record" : "records") listed.\n"
        }
        return text
    }

    /// The record's `id` member as text ("-" when it has none; sources with another
    /// IDField show the value in the preview).
    static func id(of record: JSONValue) -> String {
        guard let id = record["id"] else { return "-" }
        return id.stringValue ?? id.serialized()
    }

    /// Compact JSON cut to 100 characters, safe for a terminal (`HumanFormat.printableJSON`).
    static func preview(_ record: JSONValue) -> String {
        let text = record.serialized()
        return HumanFormat.printableJSON(text.count <= 100 ? text : String(text.prefix(99)) + "…")
    }
}

/// `syncctl get SOURCE ID`.
public struct GetCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "get", abstract: "Print one cached record as JSON",
        discussion: "Pretty-printed on a terminal, compact otherwise (--json=short|pretty chooses).",
        positionals: [PositionalSpec("SOURCE", help: "Source name"), PositionalSpec("ID", help: "Record ID")],
        printsJSON: true)

    let source: String, id: String

    public init(arguments: ParsedArguments) {
        source = arguments.positionals[0]
        id = arguments.positionals[1]
    }

    public func run(_ context: CommandContext) throws(CommandFailure) {
        let reply: JSONObject
        do {
            reply = try context.call(.get(source: source, id: id))
        } catch .client(.remote(let name, let parameters)) where name == ManagerError.noSuchRecord(source: "", id: "").varlinkName {
            // Not found: say so, and when syncd holds no listing of the source, that the record may well exist.
            var message = Syncctl.describeRemoteError(name: name, parameters: parameters, command: "get")
            if let page = try? context.call(.list(source: source, offset: 0, limit: 1)), page["fetched"]?.boolValue == false {
                message += "; \(noListingHeld(source)) (see 'syncctl status')"
            }
            throw .failed(message)
        }
        guard let record = reply["record"] else { throw .failed("unexpected reply from syncd: no record") }
        context.printJSON(record, prettyOnTerminal: true, printable: true)
    }
}

/// `syncctl watch`.
public struct WatchCommand: SyncctlCommand {
    public static let configuration = CommandConfiguration(
        name: "watch", abstract: "Print one line per cache change until interrupted",
        discussion: "Starts with one line per source, current (the source as it is now), then one line per change: "
            + "saved (a refresh rewrote the cache file), local (a local change was queued or settled), "
            + "logout (the account's cache was erased), stale (a refresh failed after the last one succeeded, with the "
            + "reason; once until the source recovers), fresh (the first success after stale); parked (the server refused a "
            + "local change), discarded (ConflictPolicy= discarded one; syncctl outbox --restore), conflict (kept for "
            + "syncctl resolve), with the record's ID, its outbox number and why. With --json prints one JSON object per line.",
        printsJSON: true)

    public init(arguments: ParsedArguments) {}

    public func run(_ context: CommandContext) throws(CommandFailure) {
        let client = try context.connect(waitAsLongAsNeeded: true)
        do {
            try client.callStreaming(ManagerRequest.watch.call(more: true)) { (parameters, _) throws(ReplyShapeError) in
                if context.globals.json != nil {
                    // One object per line, whatever the mode: the output is a stream.
                    context.output.write(JSONValue.object(parameters).serialized() + "\n")
                    return
                }
                let event = try WatchEvent(json: parameters)
                context.output.write(WatchCommand.line(for: event, now: HumanFormat.now()))
            }
        } catch {
            throw CommandFailure(error)
        }
    }

    /// `10:02 posts saved: 12 records, 0 pending, 0 conflicts`; a `stale` event gives its reason instead:
    /// `10:02 posts stale: HTTP 503 from https://…`.
    /// A change that did not go out names its record and outbox entry:
    /// `10:02 posts parked: 7 (outbox 12): HTTP 422 from POST …: title is required`.
    static func line(for event: WatchEvent, now: Timestamp) -> String {
        let head = "\(HumanFormat.localClock(now)) \(HumanFormat.printable(event.source)) \(HumanFormat.printable(event.event)): "
        if let reason = event.reason { return head + HumanFormat.printable(reason) + "\n" }
        if let outcome = event.outcome {
            return head + "\(HumanFormat.printable(outcome.id)) (outbox \(outcome.outboxSeq)): \(HumanFormat.printable(outcome.message))\n"
        }
        return head + "\(HumanFormat.count(event.records)) \(event.records == 1 ? "record" : "records"), "
            + "\(HumanFormat.count(event.pending)) pending, \(HumanFormat.count(event.conflicts)) \(event.conflicts == 1 ? "conflict" : "conflicts")\n"
    }
}

/// What `list` and `get` say while syncd holds no listing of `source` (List's `fetched` is false).
func noListingHeld(_ source: String) -> String {
    "syncd holds no listing of \(source) yet: its first refresh has not succeeded, or its cache file was damaged "
        + "and the listing is being fetched again"
}
