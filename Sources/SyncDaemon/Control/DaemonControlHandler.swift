import Dispatch
import Synchronization
import SyncControl
import SyncCore
import SyncStore
import SyncEngine

/// Answers `io.syncd.Manager` calls (already permission-checked by the control server). State questions
/// and commands go to the daemon loop as events; record reads open their own SQLite connection on a
/// separate queue, so a long refresh never blocks `List` or `Get`.
struct DaemonControlHandler: ControlHandler {
    let input: AsyncStream<DaemonEvent>.Continuation
    /// Numbers the requests the core answers later (unique for the daemon's lifetime).
    let requestIDs = RequestCounter()
    /// `STATE/<account>/state.db`.
    let databasePath: String
    /// `CACHE/<account>`: the records' bodies are read from its files.
    let cacheFolder: CacheFolder
    // Serial: a concurrent queue would run on libdispatch's non-overcommit pool (see DaemonExecutor).
    let readQueue = DispatchQueue(label: "syncd.control.read")

    func handle(_ request: ManagerRequest, context: ControlCallContext, reply: ReplySink) async {
        switch request {
        case .getStatus:
            // Callers outside ControlGroup= get no server text and no query values (docs/control-api.md, "Secrets").
            let audience: Redaction.Audience = context.privileged ? .privileged : .everyone
            guard let parameters = await ask(refused: nil, { .status(audience, $0) }) else {
                _ = reply.fail(ManagerError.stopping)
                return
            }
            _ = reply.finish(serializedParameters: parameters)
        case .refresh(let source, let wait, let full):
            // With `more`, progress (pages, bytes, records) streams while the refresh runs.
            let (updates, sink) = AsyncStream.makeStream(of: RefreshProgress.self, bufferingPolicy: .bufferingNewest(8))
            async let streamed: Void = {
                for await update in updates where context.more {
                    if !reply.progress(update.json) { break }
                }
            }()
            let id = requestIDs.next()
            let result = await waiting(for: id) { .refresh(id, source: source, wait: wait, full: full, progress: wait && context.more ? sink : nil, $0) }
            sink.finish()
            await streamed
            switch result {
            case .failed(let failure): _ = reply.fail(failure)
            case .refreshed(let reports): answer(reports, source: source, wait: wait, reply: reply, more: context.more)
            case .done: answer([], source: source, wait: false, reply: reply, more: context.more)
            }
        case .list(let source, let offset, let limit):
            guard await sourceExists(source, reply: reply) else { return }
            let path = databasePath
            let folder = cacheFolder
            let page: Result<(records: [[UInt8]], total: Int, file: SourceState), ManagerError> = await read(source: source) {
                let store = try StateStore(readingFrom: path, cacheFolder: folder)
                var records: [[UInt8]] = []
                // The local view, as in the cache file: the server's rows with the outbox applied, as stored.
                let total = try store.localRecords(source: source, offset: offset, limit: limit) { _, json in
                    records.append(Array(json))
                }
                var file = try store.state(of: source)
                file.localRecordCount = total
                return (records, total, file)
            }
            switch page {
            case .failure(let error): _ = reply.fail(error)
            case .success(let page):
                let next = offset + page.records.count < page.total ? JSONValue.int(offset + page.records.count) : .null
                // After a failed write the file apps read is behind this view: say so (the cache truth rule,
                // docs/architecture.md).
                let unwritten = page.file.unwrittenRecordCount
                // No listing held (never fetched, or set aside as damaged and being fetched again): the view is
                // only the local changes, not an empty listing.
                _ = reply.finish(serializedParameters: RecordsReply.bytes("records", records: page.records, asArray: true, others: [
                    "total": .int(page.total), "next": next, "cached": unwritten == nil ? .null : .int(page.file.cachedRecordCount),
                    "unwritten": unwritten.map { JSONValue.int($0) } ?? .null, "fetched": .bool(page.file.savedAt != nil)]))
            }
        case .get(let source, let id):
            guard await sourceExists(source, reply: reply) else { return }
            let path = databasePath
            let folder = cacheFolder
            let found: Result<[UInt8]?, ManagerError> = await read(source: source) {
                let store = try StateStore(readingFrom: path, cacheFolder: folder)
                var value: [UInt8]?
                _ = try store.localRecord(source: source, id: id) { value = Array($0) }
                // A stored record that is not one JSON value (never written by syncd) is not found, as it always was.
                return value.flatMap { (try? JSONValue(parsing: $0)) == nil ? nil : $0 }
            }
            switch found {
            case .failure(let error): _ = reply.fail(error)
            case .success(nil): _ = reply.fail(ManagerError.noSuchRecord(source: source, id: id))
            case .success(let record?): _ = reply.finish(serializedParameters: RecordsReply.bytes("record", records: [record], asArray: false))
            }
        case .changes(let source, let since, let limit):
            guard await sourceExists(source, reply: reply) else { return }
            await answerChanges(source: source, since: since, limit: limit, reply: reply)
        case .watch:
            // Unbounded: the loop yields one `current` event per source before this task starts draining, and a
            // bounded buffer would drop the first ones with many sources. Draining never blocks (`progress` only
            // queues), and the connection's output queue has its own bound (a client that does not read is dropped).
            let (events, sink) = AsyncStream.makeStream(of: WatchEvent.self, bufferingPolicy: .unbounded)
            let token = await ask(refused: 0) { .watch(sink, $0) }
            guard token != 0 else {
                _ = reply.fail(ManagerError.stopping)
                return
            }
            defer { input.yield(.request(.unwatch(token))) }
            // Callers outside ControlGroup= get the public words (docs/control-api.md, "Secrets").
            var seen: [String: Int64] = [:]
            for await event in events {
                let event = await namingRecords(event, after: &seen)
                guard reply.progress((context.privileged ? event : event.publicForm).json) else { return }
            }
            // The stream ends only when the daemon stops (the loop finishes it, or the server cancels this task);
            // a client that left gets nothing, the reply is dropped with its connection.
            _ = reply.fail(ManagerError.stopping)
        case .logout(let discardPending):
            let id = requestIDs.next()
            switch await waiting(for: id, { .logout(id, discardPending: discardPending, $0) }) {
            case .failed(let failure): _ = reply.fail(failure)
            case .done, .refreshed: _ = reply.finish()
            }
        case .reload:
            switch await ask(refused: .failure(.stopping), { .reload($0) }) {
            case .success: _ = reply.finish()
            case .failure(let failure): _ = reply.fail(failure)
            }
        case .put(let source, let record):
            switch await change(.put(source: source, record: record)) {
            case .success(let answer):
                var parameters = answer.unwrittenParameters
                parameters["id"] = .string(answer.text)
                _ = reply.finish(parameters)
            case .failure(let error): _ = reply.fail(error)
            }
        case .delete(let source, let id):
            await finish(change(.delete(source: source, id: id)), reply, unwritten: true)
        case .retryOutbox(let seq):
            await finish(change(.retry(seq: seq)), reply)
        case .dropOutbox(let seq):
            switch await change(.drop(seq: seq)) {
            case .success(let answer): _ = reply.finish(["shows": .string(answer.text)])
            case .failure(let error): _ = reply.fail(error)
            }
        case .restoreDiscarded(let seq):
            switch await change(.restore(seq: seq)) {
            case .success(let answer):
                var parameters = answer.reply
                parameters["unwritten"] = answer.unwritten.map { JSONValue.int($0) } ?? .null
                _ = reply.finish(parameters)
            case .failure(let error): _ = reply.fail(error)
            }
        case .resolve(let source, let id, let keep):
            await finish(change(.resolve(source: source, id: id, keepLocal: keep == .local)), reply, unwritten: true)
        case .listOutbox(let source), .listDiscarded(let source):
            if let source { guard await sourceExists(source, reply: reply) else { return } }
            let path = databasePath
            let folder = cacheFolder
            let withDiscarded = if case .listDiscarded = request { true } else { false }
            let lists: Result<JSONObject, ManagerError> = await read {
                let store = try StateStore(readingFrom: path, cacheFolder: folder)
                let entries: [JSONValue] = try store.outbox(source: source).map { entry in
                    .object(OutboxEntry(seq: entry.seq, source: entry.source, id: entry.recordID, operation: entry.operation.rawValue,
                                        createdAt: entry.createdAt, state: entry.state.rawValue, attempts: Int64(entry.attempts),
                                        lastStatus: entry.lastStatus.map(Int64.init), lastError: entry.shownError,
                                        superseded: entry.isSuperseded).json)
                }
                guard withDiscarded else { return ["entries": .array(entries)] }
                let discarded: [JSONValue] = try store.discarded(source: source).map { .object(DaemonControlHandler.entry($0).json) }
                return ["entries": .array(entries), "discarded": .array(discarded)]
            }
            switch lists {
            case .success(let parameters): _ = reply.finish(parameters)
            case .failure(let error): _ = reply.fail(error)
            }
        case .listConflicts(let source):
            if let source { guard await sourceExists(source, reply: reply) else { return } }
            let path = databasePath
            let folder = cacheFolder
            let conflicts: Result<[JSONValue], ManagerError> = await read {
                let store = try StateStore(readingFrom: path, cacheFolder: folder)
                let local = try store.outbox(source: source).filter { $0.state == .conflict }
                return try store.conflicts(source: source).map { conflict in
                    let mine = local.last { $0.source == conflict.source && $0.recordID.isSameID(as: conflict.recordID) }
                    return .object(ConflictEntry(
                        source: conflict.source, id: conflict.recordID,
                        local: mine?.body.flatMap { try? JSONValue(parsing: $0) }?.objectValue,
                        remote: conflict.remoteBody.flatMap { try? JSONValue(parsing: $0) }?.objectValue,
                        localVersion: mine?.baseVersion, remoteVersion: conflict.remoteVersion, detectedAt: conflict.detectedAt).json)
                }
            }
            switch conflicts {
            case .success(let list): _ = reply.finish(["conflicts": .array(list)])
            case .failure(let error): _ = reply.fail(error)
            }
        }
    }

    /// Answers a `Refresh` whose sources are done. With `more`, every source's outcome is its own reply
    /// (`result` set; `error` too when it failed), all but the last with `continues`; when some source failed,
    /// every outcome is sent that way and the final reply is the error `RefreshFailed`. Without `more`, one
    /// reply: one source's outcome, or for every source (source null) a summary, or `RefreshFailed` naming
    /// every failed source.
    private func answer(_ reports: [SourceRefreshReport], source: String?, wait: Bool, reply: ReplySink, more: Bool) {
        guard wait else {
            _ = reply.finish(RefreshProgress(source: source, state: "queued", result: "queued").json)
            return
        }
        let outcomes = reports.map(\.outcome)
        let failures = reports.filter { !$0.succeeded }
        if more {
            for outcome in failures.isEmpty ? outcomes.dropLast() : outcomes[...] {
                guard reply.progress(outcome.json) else { return }
            }
        }
        if let first = failures.first {
            let others = failures.dropFirst().map { "\($0.source) failed too: \($0.reason)" }
            _ = reply.fail(ManagerError.refreshFailed(source: first.source, reason: ([first.reason] + others).joined(separator: "; ")))
        } else if more || source != nil, let last = outcomes.last {
            _ = reply.finish(last.json)
        } else {
            let updated = reports.contains { $0.result == .updated }
            _ = reply.finish(RefreshProgress(source: nil, state: "idle", records: Int64(reports.reduce(0) { $0 + $1.records }),
                                             result: updated ? "updated" : "unchanged").json)
        }
    }

    private func change(_ request: LocalChangeRequest) async -> Result<ChangeAnswer, ManagerError> {
        await ask(refused: .failure(.stopping)) { .change(request, $0) }
    }

    /// Hands a request to the loop and waits for its answer; `refused` when the loop no longer reads
    /// (stopping: the request is answered at once, so no continuation is left behind).
    private func ask<T: Sendable>(refused: T, _ make: (CheckedContinuation<T, Never>) -> ControlRequest) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            if case .terminated = input.yield(.request(make(continuation))) { continuation.resume(returning: refused) }
        }
    }

    /// Like `ask` for a request the core answers later: a client that goes away cancels it (the core then
    /// answers it, and nobody waits for ever).
    private func waiting(for id: RequestID, _ make: (CheckedContinuation<DaemonReply, Never>) -> ControlRequest) async -> DaemonReply {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DaemonReply, Never>) in
                if case .terminated = input.yield(.request(make(continuation))) { continuation.resume(returning: .failed(.stopping)) }
            }
        } onCancel: {
            input.yield(.cancelled(id))
        }
    }

    /// Answers a local change; `unwritten` (Delete, Resolve) tells a cache file that could not be written.
    private func finish(_ result: Result<ChangeAnswer, ManagerError>, _ reply: ReplySink, unwritten: Bool = false) async {
        switch result {
        case .success(let answer):
            _ = reply.finish(unwritten ? answer.unwrittenParameters : [:])
        case .failure(let error): _ = reply.fail(error)
        }
    }

    private func sourceExists(_ source: String, reply: ReplySink) async -> Bool {
        guard let exists = await ask(refused: nil, { .sourceExists(source, $0) }) else {
            _ = reply.fail(ManagerError.stopping)
            return false
        }
        if exists { return true }
        _ = reply.fail(ManagerError.noSuchSource(source: source))
        return false
    }

    /// Runs `body` on the read queue. A cache file of `source` that does not match the store's index is
    /// not repaired here (this connection is read-only): the loop hands it to the engine that owns the writes,
    /// which sets it aside and fetches the listing again (docs/syncd.8.md, "FILES").
    func read<T: Sendable>(source: String? = nil, _ body: @escaping @Sendable () throws -> T) async -> Result<T, ManagerError> {
        let input = self.input
        return await withCheckedContinuation { continuation in
            readQueue.async {
                do {
                    continuation.resume(returning: .success(try body()))
                } catch StoreError.cacheFileMismatch(let path, let reason) where source != nil {
                    let name = source ?? ""
                    input.yield(.cacheFileDamaged(source: name))
                    continuation.resume(returning: .failure(.storageFailure(reason: DaemonControlHandler.damagedCacheFile(name, path: path, reason: reason))))
                } catch {
                    continuation.resume(returning: .failure(.storageFailure(reason: "Failed to read the state database: \(failureReason(error))")))
                }
            }
        }
    }

    /// A discarded change as `ListOutbox(discarded: true)` shows it: the record and the server's as JSON objects.
    static func entry(_ change: DiscardedChange) -> DiscardedEntry {
        DiscardedEntry(seq: change.seq, source: change.source, id: change.recordID, operation: change.operation.rawValue,
                       record: change.body.flatMap { try? JSONValue(parsing: $0) }?.objectValue, baseVersion: change.baseVersion,
                       createdAt: change.createdAt, discardedAt: change.discardedAt, reason: change.reason,
                       server: change.serverBody.flatMap { try? JSONValue(parsing: $0) }?.objectValue, serverVersion: change.serverVersion)
    }

    /// What `List` and `Get` answer when the cache file of `source` is not the one syncd wrote.
    static func damagedCacheFile(_ source: String, path: String, reason: String) -> String {
        "Failed to read the cached records of \(source): the cache file \(path) was changed or damaged outside syncd (\(reason)); "
            + "syncd moves it aside and fetches the listing again: retry in a moment"
    }
}

extension SourceRefreshReport {
    /// Why it failed, for `RefreshFailed` and the outcome's `error`.
    var reason: String { error ?? result.rawValue }

    /// The `Refresh` reply telling this source's outcome.
    var outcome: RefreshProgress {
        succeeded ? RefreshProgress(source: source, state: "idle", records: Int64(records), result: result.rawValue)
            : RefreshProgress(source: source, records: Int64(records), result: result.rawValue, error: reason)
    }
}

/// Numbers requests: a lock-free counter shared by the control handler's concurrent calls.
final class RequestCounter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> RequestID { RequestID(value.add(1, ordering: .relaxed).newValue) }
}
