
extension ControlIOLoop {
    /// Handles one complete message: answers `org.varlink.service` itself, checks and
    /// decodes `io.syncd.Manager` calls and hands them to the handler. Protocol violations
    /// (bad JSON, not a call, unknown interface or method, ill-typed parameters) are
    /// answered with an error and the connection is closed.
    func handle(_ message: [UInt8], on connection: ControlConnection) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: message, limits: JSONParseLimits(maxDepth: 64, maxBytes: server.limits.maxMessageSize))
        } catch {
            refuse(connection, ManagerError.invalidParameter(parameter: "message", reason: "not valid JSON: \(error)"))
            return
        }
        let call: VarlinkCall
        do {
            call = try VarlinkCall(message: value)
        } catch {
            refuse(connection, error)
            return
        }
        guard !call.upgrade else {
            refuse(connection, VarlinkServiceError.invalidParameter(parameter: "upgrade"))
            return
        }
        switch call.interface {
        case "org.varlink.service":
            handleServiceCall(call, on: connection)
        case ManagerInterface.name:
            handleManagerCall(call, on: connection)
        default:
            refuse(connection, VarlinkServiceError.interfaceNotFound(interface: call.interface))
        }
    }

    /// `org.varlink.service`, answered here (https://varlink.org/Service).
    private func handleServiceCall(_ call: VarlinkCall, on connection: ControlConnection) {
        var reader = ServiceParameters(call.parameters)
        switch call.memberName {
        case "GetInfo":
            guard reader.isEmpty else { return refuse(connection, VarlinkServiceError.invalidParameter(parameter: reader.firstKey)) }
            let info = server.info
            reply(call, on: connection, VarlinkReply(parameters: [
                "vendor": .string(info.vendor), "product": .string(info.product), "version": .string(info.version),
                "url": .string(info.url), "interfaces": ["org.varlink.service", .string(ManagerInterface.name)],
            ]))
        case "GetInterfaceDescription":
            guard let interface = reader.string("interface"), reader.isEmpty else {
                return refuse(connection, VarlinkServiceError.invalidParameter(parameter: reader.firstKey.isEmpty ? "interface" : reader.firstKey))
            }
            if let description = ManagerInterface.description(of: interface) {
                reply(call, on: connection, VarlinkReply(parameters: ["description": .string(description)]))
            } else {
                // A well-formed question with a negative answer: the connection stays.
                reply(call, on: connection, VarlinkReply(error: VarlinkServiceError.interfaceNotFound(interface: interface)))
            }
        default:
            refuse(connection, VarlinkServiceError.methodNotFound(method: call.method))
        }
    }

    private func handleManagerCall(_ call: VarlinkCall, on connection: ControlConnection) {
        let member = call.memberName
        guard ManagerInterface.methods.contains(member) else {
            return refuse(connection, VarlinkServiceError.methodNotFound(method: call.method))
        }
        // Permission before parameters: a caller without the right learns nothing from decoding errors.
        let needed = AccessPolicy.requiredLevel(for: call.method)
        guard connection.level >= needed else {
            return reply(call, on: connection, VarlinkReply(error: ManagerError.permissionDenied(needs: server.policy.whoMay(needed))))
        }
        let request: ManagerRequest
        do {
            request = try ManagerRequest(member: member, parameters: call.parameters, more: call.more)
        } catch .expectedMore {
            return reply(call, on: connection, VarlinkReply(error: VarlinkServiceError.expectedMore))
        } catch {
            return refuse(connection, error)
        }
        let callID = connection.withState { state in
            defer { state.nextCallID += 1 }
            state.callInFlight = state.nextCallID
            return state.nextCallID
        }
        let context = ControlCallContext(peer: connection.peer, level: connection.level, more: call.more, oneway: call.oneway)
        let sink = ReplySink(connection: connection, callID: callID, server: server, more: call.more, oneway: call.oneway)
        calls.yield(PendingCall(connection: connection, request: request, context: context, sink: sink))
    }

    /// Queues a reply the server produced itself (none for `oneway`).
    private func reply(_ call: VarlinkCall, on connection: ControlConnection, _ reply: VarlinkReply) {
        guard !call.oneway else { return }
        _ = connection.enqueue(reply.wireBytes, at: server.now())
    }
}

/// Reads the parameters of `org.varlink.service` methods, refusing unknown ones.
private struct ServiceParameters {
    private var remaining: JSONObject

    init(_ parameters: JSONObject) { remaining = parameters }

    var isEmpty: Bool { remaining.isEmpty }
    var firstKey: String { remaining.keys.first ?? "" }

    mutating func string(_ name: String) -> String? {
        defer { remaining[name] = nil }
        return remaining[name]?.stringValue
    }
}
