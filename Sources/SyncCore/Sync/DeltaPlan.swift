/// The decisions of incremental pull (syncd.conf(5), "Incremental pull"; docs/architecture.md, "Incremental pull"):
/// whether a refresh asks for changes only or for the whole listing, the delta request's URL, what a record of a
/// delta means (a change or a tombstone, its stamp), and the next checkpoint. Pure: the engine performs.
public enum DeltaPlan {
    /// What the next refresh of a source fetches.
    public enum Fetch: Equatable, Sendable {
        /// The whole listing, and why.
        case full(FullListingReason)
        /// Changes only since `checkpoint`, at `url`.
        case delta(url: String, checkpoint: String)
    }

    /// Why a refresh of a source with `Delta=` fetches the whole listing.
    public enum FullListingReason: Equatable, Sendable {
        /// No listing is held yet (the first sync, or after a logout or a damaged cache file).
        case noListing
        /// A listing is held but no checkpoint for it (the source was under `Delta=none`, or its store predates it).
        case noCheckpoint
        /// The checkpoint was taken for another URL, query, paths or account.
        case settingsChanged
        /// The last full listing is `FullResyncIntervalSec=` old.
        case resyncDue
        /// The server said the checkpoint is too old (`DeltaExpired=`).
        case expired(status: Int)
        /// Someone asked for it (`syncctl refresh --full`).
        case asked
        /// A full listing was cut short and its pages are staged: it resumes rather than give way to a delta.
        case resuming

        /// How the log and the status say it.
        public var text: String {
            switch self {
            case .noListing: "no listing held yet"
            case .noCheckpoint: "no checkpoint yet"
            case .settingsChanged: "the source's settings changed since the checkpoint"
            case .resyncDue: "FullResyncIntervalSec= passed since the last full listing"
            case .expired(let status): "the server answered HTTP \(status): the checkpoint is too old"
            case .asked: "asked for (syncctl refresh --full)"
            case .resuming: "a full listing was cut short: it resumes"
            }
        }
    }

    /// What a checkpoint is bound to: the source's URL, delta settings, record paths and the account. Any change
    /// to them makes the next refresh a full listing. Opaque text, stored with the checkpoint.
    public static func binding(of source: SourceConfiguration, account: String) -> String {
        let delta = source.delta
        let parts = [
            "account=" + account, "url=" + source.url, "delta=" + delta.mode.rawValue, "query=" + delta.query,
            "field=" + delta.fieldText, "token=" + delta.tokenPathText, "deleted=" + delta.deletedPathText,
            "deletedValue=" + delta.deletedValueText, "records=" + source.recordsPathText, "id=" + source.idField,
            "envelope=" + source.recordEnvelopeText, "pagination=" + source.pagination.rawValue,
        ]
        let joined = Array(parts.joined(separator: "\u{0}").utf8)
        return "delta-binding-1:" + String(XXHash64.hash(joined), radix: 16)
    }

    /// What the next refresh fetches. `held`: a listing is stored; `stored`: its checkpoint (value, binding, when
    /// the full listing it started from was saved, as seconds of the wall clock); `now`: seconds of the wall clock.
    public static func fetch(_ source: SourceConfiguration, account: String, held: Bool,
                             stored: (value: String, binding: String, fullListingAt: Int64)?, now: Int64) -> Fetch? {
        guard source.delta.isEnabled else { return nil }
        guard held else { return .full(.noListing) }
        guard let stored else { return .full(.noCheckpoint) }
        guard stored.binding == binding(of: source, account: account) else { return .full(.settingsChanged) }
        let interval = source.delta.fullResyncInterval.components.seconds
        guard now - stored.fullListingAt < interval, now >= stored.fullListingAt else { return .full(.resyncDue) }
        return .delta(url: requestURL(source, checkpoint: stored.value), checkpoint: stored.value)
    }

    /// The URL of a delta request from `checkpoint`: `URL=` with `DeltaQuery=`'s parameters set (each replacing a
    /// parameter of the same name in `URL=`), `{checkpoint}` replaced by the checkpoint percent-encoded. With
    /// `Delta=token` and no `DeltaQuery=`, the token is the URL itself (a delta link).
    public static func requestURL(_ source: SourceConfiguration, checkpoint: String) -> String {
        source.delta.query.isEmpty ? checkpoint : requestURL(source, encodedCheckpoint: CursorURL.queryComponent(checkpoint))
    }

    /// `requestURL(_:checkpoint:)` with the checkpoint already percent-encoded (or a placeholder to show).
    static func requestURL(_ source: SourceConfiguration, encodedCheckpoint: String) -> String {
        var url = source.url
        for pair in source.delta.query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? String(parts[1]) : ""
            url = CursorURL.url(base: url, parameter: name, encodedValue: value.replacingEvery(DeltaSettings.placeholder, with: encodedCheckpoint))
        }
        return url
    }

    /// Whether `record` (a delta's or a listing's record) is a tombstone: `DeletedPath=` holds `DeletedValue=`.
    public static func isTombstone(_ record: JSONValue, _ delta: DeltaSettings) -> Bool {
        guard !delta.deletedPath.isEmpty else { return false }
        return marksDeleted(record.value(at: delta.deletedPath), delta)
    }

    /// Whether `value`, found at `DeletedPath=` in a record (nil: nothing there), is `DeletedValue=`. Numbers
    /// are equal by value (`1`, `1.0` and `1e0` alike), everything else exactly (`"true"` is not `true`).
    public static func marksDeleted(_ value: JSONValue?, _ delta: DeltaSettings) -> Bool {
        guard let value else { return false }
        if let equal = NumberOrder.equal(value, delta.deletedValue) { return equal }
        return value == delta.deletedValue
    }
}

/// The highest change stamp (`DeltaField=`) seen: the watermark a `Delta=watermark` checkpoint keeps. Numbers
/// compare as numbers, exactly (integers at any length, decimals digit by digit), strings byte by byte (ISO 8601
/// times of one format and zone order that way); a listing that mixes the two, or a stamp of another type, is
/// refused.
public struct DeltaWatermark: Equatable, Sendable {
    /// The highest stamp so far, nil before the first.
    public private(set) var highest: JSONValue?
    /// The stored checkpoint's text while no stamp above it came: the checkpoint stays exactly that text (a
    /// string stamp such as `"0123"` must not come back as `123`). The stored text does not say whether it was
    /// a string or a number, so the first stamp seen decides how it is read (`kindSettled`).
    private var storedText: String?
    /// Whether a stamp was seen, fixing the kind of the stamps that may follow.
    private var kindSettled = false

    /// Starts from `checkpoint` (the stored text: a number's literal or a string), or from nothing.
    public init(checkpoint: String? = nil) {
        highest = checkpoint.map(DeltaWatermark.value(ofCheckpoint:))
        storedText = checkpoint
    }

    /// Why a stamp cannot be a watermark.
    public enum Problem: Error, Equatable, Sendable {
        /// The record has no stamp at `DeltaField=`, or it is null.
        case missing
        /// The stamp is a boolean, object or array.
        case notComparable(String)
        /// Stamps of two kinds (numbers and strings) in one source.
        case mixed(String)
    }

    /// Takes one record's stamp (nil when the record has none).
    public mutating func see(_ stamp: JSONValue?) throws(Problem) {
        guard let stamp, !stamp.isNull else { throw .missing }
        switch stamp {
        case .integer, .number, .string: break
        default: throw .notComparable(stamp.kindName)
        }
        guard var current = highest else {
            highest = stamp
            kindSettled = true
            return
        }
        if !kindSettled, let storedText, case .string = stamp { current = .string(storedText) }
        kindSettled = true
        switch DeltaWatermark.compare(stamp, current) {
        case .some(true):
            highest = stamp
            storedText = nil
        case .some(false):
            highest = current
        case .none:
            throw .mixed("\(current.kindName) and \(stamp.kindName)")
        }
    }

    /// The checkpoint's text: a number's literal or a string's value; nil before the first stamp.
    public var checkpoint: String? {
        if let storedText { return storedText }
        switch highest {
        case .integer(let value): return String(value)
        case .number(let value): return value.literal
        case .string(let value): return value
        default: return nil
        }
    }

    /// A stored checkpoint's value: a number when it reads as one, else a string.
    static func value(ofCheckpoint text: String) -> JSONValue {
        guard let number = JSONNumber(literal: text) else { return .string(text) }
        return number.isInteger ? number.integerValue.map(JSONValue.integer) ?? .number(number) : .number(number)
    }

    /// Whether stamp `a` is above stamp `b` in the watermark's order; nil when they are not of one kind (a number
    /// and a string, or either not a stamp).
    public static func compare(_ a: JSONValue, _ b: JSONValue) -> Bool? {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            return y.utf8.lexicographicallyPrecedes(x.utf8)
        case (.string, _), (_, .string):
            return nil
        default:
            return NumberOrder.above(a, b)
        }
    }
}

/// The order of two JSON numbers by their exact decimal values (`JSONNumber.Decimal`): integers of any length
/// and decimals digit by digit, never through a `Double` but for exponents beyond any real stamp.
enum NumberOrder {
    /// Whether `a` is above `b`; nil when either is not a number.
    static func above(_ a: JSONValue, _ b: JSONValue) -> Bool? {
        guard let x = number(a), let y = number(b) else { return nil }
        guard let dx = x.decimal, let dy = y.decimal else { return x.doubleValue > y.doubleValue }
        return above(dx, dy)
    }

    /// Whether `a` and `b` are the same number; nil when either is not a number.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool? {
        guard let x = number(a), let y = number(b) else { return nil }
        return x == y
    }

    private static func number(_ value: JSONValue) -> JSONNumber? {
        switch value {
        case .integer(let integer): JSONNumber(literal: String(integer))
        case .number(let number): number
        default: nil
        }
    }

    /// `digits × 10^scale` with the sign; zero has no digits.
    private static func above(_ x: JSONNumber.Decimal, _ y: JSONNumber.Decimal) -> Bool {
        let xSign = x.digits.isEmpty ? 0 : x.negative ? -1 : 1
        let ySign = y.digits.isEmpty ? 0 : y.negative ? -1 : 1
        guard xSign == ySign else { return xSign > ySign }
        guard xSign != 0 else { return false }
        let magnitude = compareMagnitudes(x, y)
        return xSign > 0 ? magnitude > 0 : magnitude < 0
    }

    /// -1, 0 or 1 as |x| is below, equal to or above |y|: first by the position of the leading digit, then
    /// digit by digit (the digits carry no leading or trailing zeros).
    private static func compareMagnitudes(_ x: JSONNumber.Decimal, _ y: JSONNumber.Decimal) -> Int {
        let xTop = x.digits.count + x.scale
        let yTop = y.digits.count + y.scale
        if xTop != yTop { return xTop > yTop ? 1 : -1 }
        for index in 0..<max(x.digits.count, y.digits.count) {
            let dx = index < x.digits.count ? x.digits[index] : UInt8(ascii: "0")
            let dy = index < y.digits.count ? y.digits[index] : UInt8(ascii: "0")
            if dx != dy { return dx > dy ? 1 : -1 }
        }
        return 0
    }
}

extension JSONValue {
    /// The kind of value, for messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
