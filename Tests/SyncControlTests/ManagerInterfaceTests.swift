import Testing
import SyncCore
@testable import SyncControl

@Suite("ManagerInterface")
struct ManagerInterfaceTests {
    @Test(arguments: [ManagerInterface.description, ManagerInterface.serviceDescription])
    func descriptionIsPlainLFWithoutAny(text: String) {
        #expect(!text.utf8.contains(13))
        #expect(!text.contains(": any"))
        #expect(!text.contains("[]any"))
        #expect(!text.contains("\t"))
    }

    @Test func everyMethodTypeAndErrorIsDeclaredAndDocumented() {
        let lines = ManagerInterface.description.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var declared: [String] = []
        for (index, line) in lines.enumerated() {
            for keyword in ["method ", "type ", "error "] where line.hasPrefix(keyword) {
                let name = line.dropFirst(keyword.count).prefix { $0.isLetter || $0.isNumber }
                declared.append(keyword + name)
                #expect(index > 0 && lines[index - 1].hasPrefix("#"), "\(line) has no # comment")
            }
        }
        for method in ManagerInterface.methods { #expect(declared.contains("method " + method)) }
        #expect(declared.filter { $0.hasPrefix("method ") }.count == ManagerInterface.methods.count)
        for type in ["DaemonStatus", "SourceStatus", "OutboxEntry", "Conflict"] { #expect(declared.contains("type " + type)) }
        for error in ["PermissionDenied", "NoSuchSource", "NoSuchRecord", "NotWritable", "InvalidParameter", "RefreshFailed",
                      "ReloadFailed", "PendingChanges", "StorageFailure", "TooManyConnections"] {
            #expect(declared.contains("error " + error))
        }
        #expect(ManagerInterface.description.contains("interface io.syncd.Manager\n"))
    }

    @Test("the links field's comment names exactly the values the daemon sends")
    func linksCommentNamesTheLinkStates() throws {
        let line = try #require(ManagerInterface.description.split(separator: "\n").first { $0.contains("Link state summary") })
        for state in LinkState.allCases { #expect(line.contains("\"\(state.rawValue)\"")) }
        #expect(!line.contains("no-carrier"))
        #expect(!line.contains("unknown"))
    }

    @Test func statusFieldsMatchTheSpecExample() throws {
        // The GetStatus example of docs/control-api.md, field for field.
        let example = try JSONValue(parsing: """
            {"daemon": {"version": "1.0.0", "account": "default", "online": true,
                        "links": "routable", "reachable": true, "uptimeSec": 12},
             "sources": [{"name": "posts", "url": "http://localhost:3000/posts",
                          "state": "idle", "records": 2, "pending": 0, "parked": 0, "conflicts": 0, "warnings": [],
                          "lastSuccess": "2026-11-29T10:00:00Z", "lastAttempt": "2026-11-29T10:00:00Z",
                          "lastError": null, "stale": false, "attempt": 0, "nextAttempt": null}]}
            """)
        let status = try ManagerStatus(json: #require(example.objectValue))
        // The SPEC's fields, plus the ones syncd adds ("at least"): no rejected reload, no failed source.
        let extended = try JSONValue(parsing: """
            {"daemon": {"version": "1.0.0", "account": "default", "online": true,
                        "links": "routable", "reachable": true, "uptimeSec": 12, "reloadRejected": null},
             "sources": [{"name": "posts", "url": "http://localhost:3000/posts",
                          "state": "idle", "records": 2, "pending": 0, "parked": 0, "conflicts": 0, "warnings": [],
                          "lastSuccess": "2026-11-29T10:00:00Z", "lastAttempt": "2026-11-29T10:00:00Z",
                          "lastError": null, "stale": false, "attempt": 0, "nextAttempt": null}],
             "failed": []}
            """)
        #expect(JSONValue.object(status.json) == extended)
        let failed = FailedSourceStatus(name: "bad", file: "/etc/syncd/sources.d/bad.source",
                                        problem: "/etc/syncd/sources.d/bad.source:2: URL: missing")
        let withFailure = ManagerStatus(daemon: status.daemon, sources: [], failed: [failed])
        #expect(try ManagerStatus(json: withFailure.json) == withFailure)
        for key in failed.json.keys { #expect(ManagerInterface.description.contains("  \(key): ")) }
        for key in status.daemon.json.keys { #expect(ManagerInterface.description.contains("  \(key): ")) }
        for key in status.sources[0].json.keys { #expect(ManagerInterface.description.contains("  \(key): ")) }
    }

    /// `GetStatus` is sent from parameters the daemon serialised itself: the wire bytes are those of the
    /// ordinary reply with the same parameters, and read back as that reply.
    @Test(arguments: [#"{}"#, #"{"daemon":{"online":true},"sources":[{"name":"a\"b","warnings":["é"]}],"failed":[]}"#])
    func preserialisedParametersGoOutAsTheOrdinaryReply(parameters: String) throws {
        let object = try #require(JSONValue(parsing: parameters).objectValue)
        let bytes = VarlinkReply.wireBytes(serializedParameters: JSONValue.object(object).serializedBytes())
        #expect(bytes == VarlinkReply(parameters: object).wireBytes)
        #expect(bytes.last == 0)
        let reply = try #require(VarlinkReply(message: JSONValue(parsing: bytes.dropLast())))
        #expect(reply == VarlinkReply(parameters: object))
    }

    /// Each source names its cache file and its mode (docs/control-api.md); the interface declares every field,
    /// a read-only source's `conflictPolicy` is null, and a reply from a daemon older than the fields reads as nil.
    @Test func sourceStatusCarriesItsCacheFileAndMode() throws {
        let source = FakeControlHandler.status.sources[0]
        let object = source.json
        #expect(object["cacheFile"] == "/var/cache/syncd/default/posts.json")
        #expect(object["writable"] == true && object["pagination"] == "link" && object["conflictPolicy"] == "server-wins")
        // After the fields of docs/control-api.md's example, in this order.
        let added = ["cacheFile", "writable", "pagination", "conflictPolicy"]
        #expect(object.keys.filter(added.contains) == added)
        #expect(try #require(object.keys.firstIndex(of: "cacheFile")) > #require(object.keys.firstIndex(of: "nextAttempt")))
        for key in object.keys { #expect(ManagerInterface.description.contains("  \(key): ")) }
        #expect(try SourceStatus(json: object) == source)
        var readOnly = source
        readOnly.mode = SourceMode(writable: false, pagination: "none", conflictPolicy: nil)
        #expect(readOnly.json["conflictPolicy"] == .null)
        #expect(try SourceStatus(json: readOnly.json) == readOnly)
        var older = object
        for key in ["cacheFile", "writable", "pagination", "conflictPolicy"] { older[key] = nil }
        let read = try SourceStatus(json: older)
        #expect(read.cacheFile == nil && read.mode == nil)
        // A mode of the wrong type is refused with its field, not shown as some mode.
        var wrong = object
        wrong["pagination"] = 3
        #expect(throws: ReplyShapeError.self) { try SourceStatus(json: wrong, path: "sources[0]") }
    }

    /// A source's state travels as the name of a `SourceStateName`; a reply with another name is refused
    /// with the field that holds it, not shown as if it were a state syncctl knows.
    @Test func sourceStateIsOneOfTheNamedStates() throws {
        let source = FakeControlHandler.status.sources[0]
        for state in SourceStateName.allCases {
            var named = source
            named.state = state
            #expect(named.json["state"] == .string(state.rawValue))
            #expect(try SourceStatus(json: named.json) == named)
        }
        var unknown = source.json
        unknown["state"] = .string("sleeping")
        #expect(throws: ReplyShapeError(field: "sources[0].state")) { try SourceStatus(json: unknown, path: "sources[0]") }
    }

    /// The Watch description, `syncctl watch --help` and the daemon (which sends only `WatchEvent.Kind`s)
    /// name the same events.
    @Test func watchEventsAreTheDocumentedOnes() throws {
        let text = ManagerInterface.description
        let start = try #require(text.range(of: "# Streams cache changes"))
        let end = try #require(text.range(of: "method Watch("))
        let comment = String(text[start.lowerBound..<end.lowerBound])
        let help = WatchCommand.configuration.discussion
        for kind in WatchEvent.Kind.allCases {
            #expect(comment.contains("\"\(kind.rawValue)\""), "\(kind) missing from the interface description")
            #expect(help.contains("\(kind.rawValue) ("), "\(kind) missing from syncctl watch --help")
        }
        for stale in ["updated", "local-change", "erased", "status"] { #expect(!comment.contains("\"\(stale)\"")) }
        let event = WatchEvent(source: "posts", records: 12, pending: 1, conflicts: 0, savedAt: nil, event: WatchEvent.Kind.saved.rawValue)
        #expect(try WatchEvent(json: event.json) == event)
        #expect(WatchCommand.line(for: event, now: Timestamp(secondsSinceEpoch: 0)).hasSuffix(" posts saved: 12 records, 1 pending, 0 conflicts\n"))
        var oneConflict = event
        oneConflict.conflicts = 1
        #expect(WatchCommand.line(for: oneConflict, now: Timestamp(secondsSinceEpoch: 0)).hasSuffix(" posts saved: 12 records, 1 pending, 1 conflict\n"))
        #expect(event.json["reason"] == nil, "an event without a reason does not send one")
        let stale = WatchEvent(source: "posts", records: 12, pending: 0, conflicts: 0, savedAt: nil, event: "stale",
                               reason: "HTTP 503 from http://example.org\u{1b}[2J")
        #expect(try WatchEvent(json: stale.json) == stale)
        #expect(WatchCommand.line(for: stale, now: Timestamp(secondsSinceEpoch: 0))
                    .hasSuffix(" posts stale: HTTP 503 from http://example.org\\x1b[2J\n"))
    }

    @Test func savedAndLocalEventsCarryTheirSeqAndNameTheirRecordsOrSayTruncated() throws {
        var saved = WatchEvent(source: "posts", records: 3, pending: 0, conflicts: 0, savedAt: nil, event: "saved")
        saved.seq = 42
        saved.changes = (["1", "caf\u{E9}"], ["7"])
        #expect(saved.json["seq"] == .int(42) && saved.json["changed"] == ["1", "caf\u{E9}"] && saved.json["removed"] == ["7"])
        #expect(saved.json["truncated"] == nil)
        #expect(try WatchEvent(json: saved.json) == saved)
        var truncated = WatchEvent(source: "posts", records: 3, pending: 0, conflicts: 0, savedAt: nil, event: "local")
        truncated.seq = 43
        truncated.truncated = true
        #expect(truncated.json["changed"] == nil && truncated.json["truncated"] == true)
        #expect(try WatchEvent(json: truncated.json) == truncated)
        let described = ManagerInterface.description
        for member in ["seq: ?int", "changed: ?[]string", "removed: ?[]string", "truncated: ?bool", "error ChangesExpired (source: string, oldest: int)"] {
            #expect(described.contains(member), "\(member) missing from the interface description")
        }
    }

    @Test func anOutcomeEventCarriesItsChangeAndHidesTheServersWordsFromThePublic() throws {
        var parked = WatchEvent(source: "posts", records: 3, pending: 1, conflicts: 0, savedAt: nil, event: "parked")
        parked.outcome = .init(id: "n1", outboxSeq: 12, httpStatus: 422, message: "HTTP 422 from POST http://h/posts: title is required",
                               publicMessage: "the server did not take the create (HTTP 422); it waits in the outbox")
        parked.publicReason = nil
        let wire = parked.json
        #expect(wire["id"] == "n1" && wire["outboxSeq"] == .int(12) && wire["httpStatus"] == .int(422))
        #expect(wire["message"] == "HTTP 422 from POST http://h/posts: title is required")
        var decoded = try WatchEvent(json: wire)
        decoded.outcome?.publicMessage = parked.outcome?.publicMessage
        #expect(decoded == parked)
        #expect(parked.publicForm.json["message"] == "the server did not take the create (HTTP 422); it waits in the outbox")
        #expect(WatchCommand.line(for: parked, now: Timestamp(secondsSinceEpoch: 0))
                    .hasSuffix(" posts parked: n1 (outbox 12): HTTP 422 from POST http://h/posts: title is required\n"))
        var stale = WatchEvent(source: "posts", records: 3, pending: 0, conflicts: 0, savedAt: nil, event: "stale", reason: "HTTP 503 from http://h/posts: down")
        stale.publicReason = "HTTP 503 from http://h/posts"
        #expect(stale.publicForm.json["reason"] == "HTTP 503 from http://h/posts" && stale.json["reason"] == "HTTP 503 from http://h/posts: down")
    }

    @Test func errorsRoundTripThroughNames() {
        let errors: [ManagerError] = [.permissionDenied(needs: "root"), .permissionDenied(needs: ""), .noSuchSource(source: "a"), .noSuchRecord(source: "a", id: "1"),
                                      .notWritable(source: "a"), .noSuchOutboxEntry(seq: 4), .invalidParameter(parameter: "p", reason: "r"),
                                      .refreshFailed(source: "a", reason: "r"), .reloadFailed(reason: "r"), .pendingChanges(count: 3),
                                      .storageFailure(reason: "r"), .tooManyConnections(reason: "r"), .stopping, .cancelled(reason: "r"),
                                      .changesExpired(source: "a", oldest: 7)]
        for error in errors {
            #expect(ManagerError(name: error.varlinkName, parameters: error.varlinkParameters) == error)
            #expect(ManagerInterface.description.contains("error " + error.varlinkName.split(separator: ".").last! + " ("))
        }
        #expect(ManagerError.stopping.varlinkName == "io.syncd.Manager.Stopping")
        #expect(ManagerError.cancelled(reason: "r").varlinkName == "io.syncd.Manager.Cancelled")
    }

    /// `superseded` is sent only for a superseded change (a client written before it sees nothing new
    /// elsewhere), and an entry without it reads as not superseded.
    @Test func anOutboxEntrySaysSupersededOnlyWhenItIs() throws {
        let superseded = OutboxEntry(seq: 7, source: "posts", id: "a", operation: "update", createdAt: "2026-12-01T10:00:00Z",
                                     state: "parked", attempts: 1, lastStatus: 400,
                                     lastError: "superseded by a newer change; was: HTTP 400", superseded: true)
        #expect(superseded.json["superseded"] == .bool(true))
        #expect(try OutboxEntry(json: superseded.json) == superseded)
        var parked = superseded
        parked.superseded = false
        #expect(parked.json["superseded"] == nil)
        #expect(try OutboxEntry(json: parked.json) == parked)
        #expect(ManagerInterface.description.contains("  superseded: ?bool\n"))
    }
}
