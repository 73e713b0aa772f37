import Testing
@testable import SyncControl

@Suite("ManagerRequest")
struct ManagerRequestTests {
    @Test func decodesEveryMethod() throws {
        #expect(try ManagerRequest(member: "GetStatus", parameters: [:]) == .getStatus)
        #expect(try ManagerRequest(member: "Refresh", parameters: ["source": "posts", "wait": true]) == .refresh(source: "posts", wait: true))
        #expect(try ManagerRequest(member: "Refresh", parameters: ["source": nil]) == .refresh(source: nil, wait: false))
        #expect(try ManagerRequest(member: "Refresh", parameters: ["source": "posts", "full": true]) == .refresh(source: "posts", wait: false, full: true))
        #expect(try ManagerRequest(member: "List", parameters: ["source": "p"]) == .list(source: "p", offset: 0, limit: 1000))
        #expect(try ManagerRequest(member: "List", parameters: ["source": "p", "offset": 5, "limit": 5000]) == .list(source: "p", offset: 5, limit: 1000))
        #expect(try ManagerRequest(member: "List", parameters: ["source": "p", "limit": 10.0]) == .list(source: "p", offset: 0, limit: 10))
        #expect(try ManagerRequest(member: "Get", parameters: ["source": "p", "id": "1"]) == .get(source: "p", id: "1"))
        #expect(try ManagerRequest(member: "Watch", parameters: [:], more: true) == .watch)
        #expect(try ManagerRequest(member: "Changes", parameters: ["source": "p", "since": 3]) == .changes(source: "p", since: 3, limit: 10_000))
        #expect(try ManagerRequest(member: "Changes", parameters: ["source": "p", "since": 0, "limit": 50_000]) == .changes(source: "p", since: 0, limit: 10_000))
        #expect(try ManagerRequest(member: "Logout", parameters: ["discardPending": true]) == .logout(discardPending: true))
        #expect(try ManagerRequest(member: "Reload", parameters: [:]) == .reload)
        #expect(try ManagerRequest(member: "Put", parameters: ["source": "p", "record": ["id": 1]]) == .put(source: "p", record: ["id": 1]))
        #expect(try ManagerRequest(member: "Delete", parameters: ["source": "p", "id": "1"]) == .delete(source: "p", id: "1"))
        #expect(try ManagerRequest(member: "ListOutbox", parameters: [:]) == .listOutbox(source: nil))
        #expect(try ManagerRequest(member: "RetryOutbox", parameters: ["seq": 3]) == .retryOutbox(seq: 3))
        #expect(try ManagerRequest(member: "DropOutbox", parameters: ["seq": 3]) == .dropOutbox(seq: 3))
        #expect(try ManagerRequest(member: "ListConflicts", parameters: ["source": "p"]) == .listConflicts(source: "p"))
        #expect(try ManagerRequest(member: "Resolve", parameters: ["source": "p", "id": "1", "keep": "remote"]) == .resolve(source: "p", id: "1", keep: .remote))
    }

    @Test(arguments: [
        ("Refresh", ["source": 1] as JSONObject, "source"),
        ("Refresh", ["wait": "yes"], "wait"),
        ("List", [:], "source"),
        ("List", ["source": "p", "offset": -1], "offset"),
        ("List", ["source": "p", "limit": 0], "limit"),
        ("List", ["source": "p", "limit": 1.5], "limit"),
        ("Get", ["source": "p", "id": 12], "id"),
        ("Put", ["source": "p", "record": [1]], "record"),
        ("Resolve", ["source": "p", "id": "1", "keep": "both"], "keep"),
        ("GetStatus", ["extra": true], "extra"),
        ("RetryOutbox", [:], "seq"),
        ("Changes", ["source": "p"], "since"),
        ("Changes", ["source": "p", "since": -1], "since"),
        ("Changes", ["source": "p", "since": 0, "limit": 0], "limit"),
    ] as [(String, JSONObject, String)])
    func refusesBadParameters(member: String, parameters: JSONObject, parameter: String) {
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: parameter)) {
            try ManagerRequest(member: member, parameters: parameters)
        }
    }

    @Test func refusesUnknownMethodAndWatchWithoutMore() {
        #expect(throws: VarlinkServiceError.methodNotFound(method: "io.syncd.Manager.Explode")) {
            try ManagerRequest(member: "Explode", parameters: [:])
        }
        #expect(throws: VarlinkServiceError.expectedMore) { try ManagerRequest(member: "Watch", parameters: [:]) }
    }

    @Test func clientParametersDecodeBack() throws {
        let requests: [ManagerRequest] = [.getStatus, .refresh(source: "a", wait: true), .refresh(source: nil, wait: false, full: true),
                                          .list(source: "a", offset: 3, limit: 7),
                                          .put(source: "a", record: ["x": 1]), .resolve(source: "a", id: "1", keep: .local),
                                          .logout(discardPending: false), .listOutbox(source: nil), .dropOutbox(seq: 9)]
        for request in requests {
            let call = request.call()
            #expect(try ManagerRequest(member: call.memberName, parameters: call.parameters) == request)
        }
    }

    @Test func callMessagesRoundTrip() throws {
        let call = VarlinkCall(method: "io.syncd.Manager.List", parameters: ["source": "a"], more: true)
        let parsed = try VarlinkCall(message: try JSONValue(parsing: call.wireBytes.dropLast()))
        #expect(parsed == call)
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "method")) {
            try VarlinkCall(message: ["method": "nodots"])
        }
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "parameters")) {
            try VarlinkCall(message: ["method": "a.b.C", "parameters": [1]])
        }
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "more")) {
            try VarlinkCall(message: ["method": "a.b.C", "more": "yes"])
        }
        #expect(throws: VarlinkServiceError.invalidParameter(parameter: "message")) { try VarlinkCall(message: [1]) }
    }
}
