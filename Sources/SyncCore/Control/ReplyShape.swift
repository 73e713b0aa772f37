/// Reading typed reply objects (docs/control-api.md), shared by the `io.syncd.Manager` reply types.

/// A reply field was missing or of the wrong type.
public struct ReplyShapeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field, e.g. `sources[0].state`.
    public let field: String

    /// Names the field that was missing or of the wrong type.
    package init(field: String) {
        self.field = field
    }

    /// The message syncctl prints.
    public var description: String { "unexpected reply from syncd: field '\(field)' missing or of the wrong type" }
}

/// Reads typed fields of a reply object, naming the field on failure.
package struct FieldReader {
    package let object: JSONObject
    package let path: String

    package init(object: JSONObject, path: String) {
        self.object = object
        self.path = path
    }

    private func failure(_ name: String) -> ReplyShapeError {
        ReplyShapeError(field: path.isEmpty ? name : path + "." + name)
    }

    private func present(_ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    package func string(_ name: String) throws(ReplyShapeError) -> String {
        guard let value = present(name)?.stringValue else { throw failure(name) }
        return value
    }

    package func optionalString(_ name: String) throws(ReplyShapeError) -> String? {
        guard let value = present(name) else { return nil }
        guard let text = value.stringValue else { throw failure(name) }
        return text
    }

    package func bool(_ name: String) throws(ReplyShapeError) -> Bool {
        guard let value = present(name)?.boolValue else { throw failure(name) }
        return value
    }

    package func optionalBool(_ name: String) throws(ReplyShapeError) -> Bool? {
        guard let value = present(name) else { return nil }
        guard let flag = value.boolValue else { throw failure(name) }
        return flag
    }

    package func integer(_ name: String) throws(ReplyShapeError) -> Int64 {
        guard let value = present(name)?.integerValue else { throw failure(name) }
        return value
    }

    package func optionalInteger(_ name: String) throws(ReplyShapeError) -> Int64? {
        guard let value = present(name) else { return nil }
        guard let number = value.integerValue else { throw failure(name) }
        return number
    }

    package func optionalStrings(_ name: String) throws(ReplyShapeError) -> [String]? {
        guard let value = present(name) else { return nil }
        guard let items = value.arrayValue else { throw failure(name) }
        var strings: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw failure(name) }
            strings.append(text)
        }
        return strings
    }

    package func strings(_ name: String) throws(ReplyShapeError) -> [String] {
        guard let strings = try optionalStrings(name) else { throw failure(name) }
        return strings
    }

    package func optionalObject(_ name: String) throws(ReplyShapeError) -> JSONObject? {
        guard let value = present(name) else { return nil }
        guard let object = value.objectValue else { throw failure(name) }
        return object
    }
}
