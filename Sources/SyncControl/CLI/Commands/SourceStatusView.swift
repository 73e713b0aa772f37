import SyncCore

/// `syncctl status SOURCE…`: each named source in full, from `GetStatus` (and its outbox from `ListOutbox`).
struct SourceStatusView {
    let names: [String]

    /// What each name stands for in the status.
    enum Found: Equatable {
        case running(SourceStatus)
        case failed(FailedSourceStatus)
        /// Not configured; the nearest configured name, if one is near.
        case unknown(suggestion: String?)
    }

    func run(_ context: CommandContext) throws(CommandFailure) {
        let reply = try context.call(.getStatus)
        let status = try context.decode { () throws(ReplyShapeError) in try ManagerStatus(json: reply) }
        let found = names.map { SourceStatusView.find($0, in: status) }
        if context.globals.json != nil {
            var objects: [JSONValue] = []
            for item in found {
                switch item {
                case .running(let source): objects.append(.object(source.json))
                case .failed(let failed): objects.append(.object(failed.json))
                case .unknown: break
                }
            }
            if names.count == 1, let object = objects.first {
                context.printJSON(object)
            } else if !objects.isEmpty || names.count > 1 {
                context.printJSON(.array(objects))
            }
        } else {
            let formatter = SourceDetailFormatter(now: HumanFormat.now(), color: context.output.color, unicode: context.output.unicode)
            var first = true
            for item in found {
                let text: String
                switch item {
                case .running(let source): text = formatter.format(source, outbox: try SourceStatusView.outbox(of: source.name, context))
                case .failed(let failed): text = formatter.format(failed)
                case .unknown: continue
                }
                context.output.write((first ? "" : "\n") + text)
                first = false
            }
        }
        let unknown = zip(names, found).compactMap { name, item -> String? in
            guard case .unknown(let suggestion) = item else { return nil }
            return SourceStatusView.unknownMessage(name, suggestion: suggestion)
        }
        if !unknown.isEmpty { throw .failures(unknown) }
    }

    /// The source `name` names in `status`: a running one, one left out by a configuration error, or none.
    static func find(_ name: String, in status: ManagerStatus) -> Found {
        if let source = status.sources.first(where: { $0.name == name }) { return .running(source) }
        if let failed = status.failed.first(where: { $0.name == name }) { return .failed(failed) }
        return .unknown(suggestion: SourceNameSuggestion.nearest(to: name, in: status.sources.map(\.name) + status.failed.map(\.name)))
    }

    /// `no such source: postz; did you mean 'posts'?` (printed after `syncctl: `).
    static func unknownMessage(_ name: String, suggestion: String?) -> String {
        if let suggestion { return "no such source: \(name); did you mean '\(suggestion)'?" }
        return "no such source: \(name); 'syncctl status' lists the configured sources"
    }

    /// The source's outbox entries; nil when this caller may not list them (anyone may read the status, only root,
    /// the daemon's user and the control group the outbox): the status's counts then stand alone.
    static func outbox(of source: String, _ context: CommandContext) throws(CommandFailure) -> SourceDetailFormatter.Outbox {
        let reply: JSONObject
        do {
            reply = try context.call(.listOutbox(source: source))
        } catch .client(.remote(let name, _)) where name == ManagerError.permissionDenied(needs: "").varlinkName {
            return SourceDetailFormatter.Outbox(entries: nil)
        }
        var entries: [OutboxEntry] = []
        for (index, value) in (reply["entries"]?.arrayValue ?? []).enumerated() {
            guard let object = value.objectValue else { throw .failed("unexpected reply from syncd: entries[\(index)]") }
            entries.append(try context.decode { () throws(ReplyShapeError) in try OutboxEntry(json: object, path: "entries[\(index)]") })
        }
        return SourceDetailFormatter.Outbox(entries: entries)
    }
}
