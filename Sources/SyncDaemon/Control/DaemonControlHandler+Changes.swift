import SyncControl
import SyncCore
import SyncStore
import SyncEngine

/// `Changes` and the records `Watch` events name (docs/control-api.md, "Changes"), read from the change log on
/// the handler's read connection.
extension DaemonControlHandler {
    /// Answers `Changes(source, since, limit)`.
    func answerChanges(source: String, since: Int64, limit: Int, reply: ReplySink) async {
        let path = databasePath
        let folder = cacheFolder
        let answer: Result<Result<ChangePage, ChangeFeed.Expired>, ManagerError> = await read(source: source) {
            try StateStore(readingFrom: path, cacheFolder: folder).changes(source: source, since: since, limit: limit)
        }
        switch answer {
        case .failure(let error): _ = reply.fail(error)
        case .success(.failure(let expired)): _ = reply.fail(ManagerError.changesExpired(source: source, oldest: expired.oldest))
        case .success(.success(let page)): _ = reply.finish(page.json)
        }
    }

    /// `event` with the records it names: a `saved` or `local` event lists what changed since its source's
    /// previous `current`, `saved`, `local` or `logout` event (`seen`, this watcher's), or says `truncated`.
    func namingRecords(_ event: WatchEvent, after seen: inout [String: Int64]) async -> WatchEvent {
        guard let seq = event.seq else { return event }
        // A source this watch has no baseline for (added by a reload) is counted from its beginning.
        let previous = seen[event.source] ?? 0
        switch event.event {
        case WatchEvent.Kind.current.rawValue, WatchEvent.Kind.logout.rawValue:
            seen[event.source] = seq
            return event
        case WatchEvent.Kind.saved.rawValue, WatchEvent.Kind.local.rawValue:
            break
        default:
            return event
        }
        seen[event.source] = seq
        var named = event
        guard previous != seq else {
            named.changes = ([], [])
            return named
        }
        let path = databasePath
        let folder = cacheFolder
        let source = event.source
        let log: Result<(rows: [ChangeLogRow], seq: Int64, floor: Int64), ManagerError> = await read(source: source) {
            try StateStore(readingFrom: path, cacheFolder: folder).changeRows(source: source, since: previous)
        }
        if case .success(let log) = log,
           let lists = ChangeFeed.eventLists(rows: log.rows.filter { $0.seq <= seq }, since: previous, current: seq, floor: log.floor) {
            named.changes = lists
        } else {
            named.truncated = true
        }
        return named
    }
}
