import Synchronization
import SyncControl

/// A stand-in for the daemon's handler, for exercising ControlServer over a real socket.
final class FakeControlHandler: ControlHandler {
    /// Watch calls currently streaming.
    let activeWatches = Atomic<Int>(0)
    /// Watch calls that have ended.
    let finishedWatches = Atomic<Int>(0)

    static let status = ManagerStatus(
        daemon: DaemonStatus(version: "1.0.0", account: "default", online: true, links: "routable", reachable: true, uptimeSec: 12),
        sources: [SourceStatus(name: "posts", url: "http://localhost:3000/posts", state: .idle, records: 2500, pending: 0,
                               conflicts: 0, lastSuccess: "2026-11-29T10:00:00Z", lastAttempt: "2026-11-29T10:00:00Z",
                               lastError: nil, stale: false, attempt: 0, nextAttempt: nil,
                               cacheFile: "/var/cache/syncd/default/posts.json",
                               mode: SourceMode(writable: true, pagination: "link", conflictPolicy: "server-wins")),
                  // Its ListOutbox answer is of the wrong shape.
                  SourceStatus(name: "damaged", url: "http://localhost:3000/damaged", state: .idle, records: 0, pending: 1,
                               conflicts: 0, lastSuccess: nil, lastAttempt: nil, lastError: nil, stale: false, attempt: 0,
                               nextAttempt: nil)])

    /// The one change in posts' outbox: parked.
    static let parked = OutboxEntry(seq: 3, source: "posts", id: "7", operation: "update", createdAt: "2026-11-29T09:00:00Z",
                                    state: "parked", attempts: 1, lastStatus: 422,
                                    lastError: "HTTP 422 from PUT http://localhost:3000/posts/7: title is required")

    static let recordCount = 2500

    static func record(_ index: Int) -> JSONValue {
        ["id": .integer(12_345_678_900_000 + Int64(index)), "title": .string("Post \(index)")]
    }

    func handle(_ request: ManagerRequest, context: ControlCallContext, reply: ReplySink) async {
        switch request {
        case .getStatus:
            // Laid out over several lines, as another Varlink service might: syncctl --json must still print one line.
            reply.finish(serializedParameters: JSONValue.object(FakeControlHandler.status.json).serializedBytes(.pretty))
        case .list(let source, let offset, let limit):
            guard source == "posts" else { reply.fail(ManagerError.noSuchSource(source: source)); return }
            let end = min(offset + limit, FakeControlHandler.recordCount)
            let records = offset < end ? (offset..<end).map(FakeControlHandler.record) : []
            reply.finish(["records": .array(records), "total": .int(FakeControlHandler.recordCount),
                          "next": end < FakeControlHandler.recordCount ? .int(end) : .null])
        case .get(let source, let id):
            guard id == "12345678900007" else { reply.fail(ManagerError.noSuchRecord(source: source, id: id)); return }
            reply.finish(["record": FakeControlHandler.record(7)])
        case .refresh(let source, let wait, _):
            if wait {
                for page in 1...3 {
                    reply.progress(RefreshProgress(source: source ?? "posts", state: "syncing", pages: Int64(page),
                                                   bytes: Int64(page) * 400_000, records: Int64(page) * 4000).json)
                    try? await Task.sleep(for: .milliseconds(5))
                }
                if source == "broken" { reply.fail(ManagerError.refreshFailed(source: "broken", reason: "HTTP 503")); return }
                if source == nil {
                    // Every source, as the daemon answers with "more": one outcome per source, then the failure.
                    reply.progress(RefreshProgress(source: "broken", records: 4, result: "failed", error: "HTTP 503").json)
                    reply.progress(RefreshProgress(source: "posts", state: "idle", records: 12_000, result: "updated").json)
                    reply.progress(RefreshProgress(source: "users", records: 0, result: "failed", error: "timed out").json)
                    reply.fail(ManagerError.refreshFailed(source: "broken", reason: "HTTP 503; users failed too: timed out"))
                    return
                }
                reply.finish(RefreshProgress(source: source, state: "idle", records: 12_000, result: "updated").json)
            } else {
                reply.finish(RefreshProgress(source: source, result: "accepted").json)
            }
        case .watch:
            activeWatches.add(1, ordering: .sequentiallyConsistent)
            defer {
                activeWatches.subtract(1, ordering: .sequentiallyConsistent)
                finishedWatches.add(1, ordering: .sequentiallyConsistent)
            }
            var count: Int64 = 0
            // Streams as fast as the server takes events, so a client that does not read fills its queue.
            while !Task.isCancelled {
                count += 1
                let event = WatchEvent(source: "posts", records: count, pending: 0, conflicts: 0,
                                       savedAt: "2026-11-29T10:00:00Z", event: "saved")
                guard reply.progress(event.json) else { return }
                if count % 64 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            }
        case .listOutbox(let source):
            guard source != "damaged" else {
                reply.finish(["entries": [["seq": "three"]]])
                return
            }
            reply.finish(["entries": .array(source == nil || source == "posts" ? [.object(FakeControlHandler.parked.json)] : [])])
        case .put(_, let record):
            reply.finish(["id": .string(record["id"].map { $0.stringValue ?? $0.serialized() } ?? "generated")])
        case .dropOutbox(let seq):
            // Entry N's record shows the N-th view; past them, the empty reply of a daemon that does not say.
            let views = DroppedRecordView.allCases
            reply.finish(seq <= views.count ? ["shows": .string(views[Int(seq) - 1].rawValue)] : [:])
        case .changes(let source, let since, _):
            // A log of four changes, paged at change 2; the log starts after change 3 for a since above 9.
            guard since < 10 else { reply.fail(ManagerError.changesExpired(source: source, oldest: 3)); return }
            let page = switch since {
            case 0: ChangePage(changed: ["a", "b"], removed: ["c"], next: 2, seq: 4)
            case 2: ChangePage(changed: ["c"], removed: ["a"], next: nil, seq: 4)
            default: ChangePage(changed: [], removed: [], next: nil, seq: 4)
            }
            reply.finish(page.json)
        case .reload:
            // Deliberately no reply: the server must answer MethodNotImplemented.
            return
        default:
            reply.finish()
        }
    }
}
