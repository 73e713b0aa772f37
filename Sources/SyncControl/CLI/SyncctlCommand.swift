/// A `syncctl` subcommand: one small type per command, as with swift-argument-parser.
public protocol SyncctlCommand {
    /// Name, help and accepted arguments.
    static var configuration: CommandConfiguration { get }
    /// Builds the command from its checked arguments; semantic mistakes are usage errors.
    init(arguments: ParsedArguments) throws(UsageError)
    /// Runs the command.
    func run(_ context: CommandContext) throws(CommandFailure)
}

/// Why a command failed after parsing (exit status 1, or 3 when the daemon is unreachable).
public enum CommandFailure: Error, Sendable, Equatable {
    /// Talking to the daemon failed, or it answered with an error.
    case client(VarlinkClientError)
    /// Something else failed; the message is printed after `syncctl: `.
    case failed(String)
    /// The daemon's socket cannot be found (exit status 3, like a daemon that does not answer).
    case unreachable(String)
    /// Several things failed (e.g. the refresh of several sources); each message is printed on its own
    /// line after `syncctl: `.
    case failures([String])
}

extension CommandFailure {
    /// Whether the daemon answered with `RefreshFailed`.
    var isRefreshFailed: Bool {
        if case .client(.remote(let name, let parameters)) = self,
           case .refreshFailed? = ManagerError(name: name, parameters: parameters) { return true }
        return false
    }

    /// The failure of a streaming call whose reply handler decodes reply shapes.
    init(_ error: StreamingError<ReplyShapeError>) {
        switch error {
        case .client(let error): self = .client(error)
        case .body(let error): self = .failed(error.description)
        }
    }
}

/// What a running command may use.
public struct CommandContext {
    /// The global options.
    public let globals: GlobalOptions
    /// Standard output settings.
    public let output: TerminalOutput
    /// The socket path (already resolved).
    public let socketPath: String
    /// Reads a whole file (`-` is standard input); used by `put`.
    public let readFile: (String) throws(CommandFailure) -> [UInt8]

    /// Connects to the daemon. Calls give up after `--timeout` (default 25 s), except, without `--timeout`,
    /// those that `waitAsLongAsNeeded` (`refresh --wait`, `watch`).
    public func connect(waitAsLongAsNeeded: Bool = false) throws(CommandFailure) -> VarlinkClient {
        do {
            return try VarlinkClient(path: socketPath, timeout: globals.callTimeout(waitsAsLongAsNeeded: waitAsLongAsNeeded))
        } catch { throw .client(error) }
    }

    /// Connects and makes one call.
    public func call(_ request: ManagerRequest) throws(CommandFailure) -> JSONObject {
        let client = try connect()
        do { return try client.call(request.call()) } catch { throw failure(error) }
    }

    /// Like `call`, also returning the reply's parameters as the daemon wrote them (for `printJSON(_:received:)`).
    public func callKeepingText(_ request: ManagerRequest) throws(CommandFailure) -> (parameters: JSONObject, text: ArraySlice<UInt8>?) {
        let client = try connect()
        do { return try client.callKeepingText(request.call()) } catch { throw failure(error) }
    }

    /// Connects, makes one call and returns its parameters object as the daemon wrote it, unparsed
    /// (`VarlinkClient.callReturningParametersText`).
    public func callReturningText(_ request: ManagerRequest) throws(CommandFailure) -> (text: ArraySlice<UInt8>, oneLine: Bool) {
        let client = try connect()
        do { return try client.callReturningParametersText(request.call()) } catch { throw failure(error) }
    }

    /// A call's failure; a source the daemon does not know is named with the nearest configured one, as
    /// `syncctl status NAME` does (`no such source: postz; did you mean 'posts'?`), from one more `GetStatus`.
    func failure(_ error: VarlinkClientError) -> CommandFailure {
        guard case .remote(let name, let parameters) = error, name == ManagerError.noSuchSource(source: "").varlinkName,
              let source = parameters["source"]?.stringValue,
              let reply = try? connect().call(ManagerRequest.getStatus.call()),
              let status = try? ManagerStatus(json: reply) else { return .client(error) }
        guard case .unknown(let suggestion) = SourceStatusView.find(source, in: status) else { return .client(error) }
        return .failed(SourceStatusView.unknownMessage(HumanFormat.printable(source), suggestion: suggestion))
    }

    /// Prints a JSON value in the requested `--json` mode (pretty when only `pretty` is asked
    /// for, or when `prettyOnTerminal` and stdout is a terminal). `received` is the value's text as the daemon
    /// sent it: compact output prints it as is when it is one line (a newline outside a string can only be
    /// whitespace, since JSON strings hold none raw), which spares serialising a reply of megabytes again.
    /// `printable`: without `--json` the text is for a person (`get`), with DEL and C1 controls as `\u00XX`
    /// (`HumanFormat.printableJSON`); with `--json` it is as JSON writes it, for programs.
    public func printJSON(_ value: JSONValue, prettyOnTerminal: Bool = false, received: ArraySlice<UInt8>? = nil,
                          printable: Bool = false) {
        let pretty = globals.json == .pretty || (globals.json == nil && prettyOnTerminal && output.isTerminal)
        if !pretty, let received {
            let oneLine = received.withUnsafeBufferPointer { !$0.contains { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") } }
            if oneLine {
                output.write(String(decoding: received, as: UTF8.self))
                return output.write("\n")
            }
        }
        // Bytes with the newline appended, then one string: a status of 10,000 sources is 2.7 MB, copied once.
        var bytes = value.serializedBytes(pretty ? .pretty : .compact)
        bytes.append(UInt8(ascii: "\n"))
        let text = String(decoding: bytes, as: UTF8.self)
        output.write(printable && globals.json == nil ? HumanFormat.printableJSON(text) : text)
    }

    /// Decodes a reply shape, turning a mismatch into a failure.
    public func decode<T>(_ decode: () throws(ReplyShapeError) -> T) throws(CommandFailure) -> T {
        do { return try decode() } catch { throw .failed(error.description) }
    }
}

/// Every `syncctl` command, in help order.
public var syncctlCommands: [any SyncctlCommand.Type] {
    [StatusCommand.self, RefreshCommand.self, ListCommand.self, GetCommand.self, ChangesCommand.self, PutCommand.self, DeleteCommand.self,
     OutboxCommand.self, ConflictsCommand.self, ResolveCommand.self, WatchCommand.self, LogoutCommand.self, ReloadCommand.self,
     HelpCommand.self]
}
