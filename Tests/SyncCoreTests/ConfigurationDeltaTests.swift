import Testing
@testable import SyncCore

/// `Delta=` and its keys (syncd.conf(5), "Incremental pull"): each key's values and errors, the rules between
/// them, and what `syncd --check-config --verbose` says.
@Suite("sources.d: Delta= and its keys")
struct ConfigurationDeltaTests {
    let base = "[Source]\nURL=https://h/items?_sort=id\n"
    let watermark = "[Source]\nURL=https://h/items?_sort=id\nDelta=watermark\nDeltaField=/last_modified\nDeltaQuery=_since={checkpoint}\n"
    let token = "[Source]\nURL=https://h/items\nDelta=token\nDeltaTokenPath=/nextSyncToken\n"

    @Test("the defaults: Delta=none, DeletedValue=true, DeltaExpired=410, FullResyncIntervalSec=1d")
    func defaults() throws {
        let delta = try #require(ConfigurationSourceTests.source(base)).delta
        #expect(delta == DeltaSettings())
        #expect(delta.mode == .none && !delta.isEnabled)
        #expect(delta.field.isEmpty && delta.fieldText.isEmpty && delta.query.isEmpty)
        #expect(delta.tokenPath.isEmpty && delta.tokenPathText.isEmpty && delta.deletedPath.isEmpty && delta.deletedPathText.isEmpty)
        #expect(delta.deletedValue == .bool(true) && delta.deletedValueText == "true")
        #expect(delta.expiredStatuses == [410] && delta.fullResyncInterval == .seconds(86_400))
    }

    @Test("Delta=watermark with every key")
    func watermarkKeys() throws {
        let text = watermark + "DeltaQuery=?_since={checkpoint}&_sort=last_modified\nDeletedPath=/meta/deleted\nDeletedValue=1\n"
            + "DeltaExpired=410 400 410\nFullResyncIntervalSec=6h\n"
        let delta = try #require(ConfigurationSourceTests.source(text)).delta
        #expect(delta.mode == .watermark && delta.isEnabled)
        #expect(delta.field == ["last_modified"] && delta.fieldText == "/last_modified")
        #expect(delta.query == "_since={checkpoint}&_sort=last_modified")
        #expect(delta.deletedPath == ["meta", "deleted"] && delta.deletedPathText == "/meta/deleted")
        #expect(delta.deletedValue == .integer(1) && delta.deletedValueText == "1")
        #expect(delta.expiredStatuses == [410, 400])
        #expect(delta.fullResyncInterval == .seconds(6 * 3_600))
    }

    @Test("Delta=token: DeltaTokenPath=, a string DeletedValue=, and an empty DeltaQuery= (the token is the URL)")
    func tokenKeys() throws {
        let text = token + "DeltaQuery=syncToken={checkpoint}\nDeletedPath=/status\nDeletedValue=\"cancelled\"\n"
        let delta = try #require(ConfigurationSourceTests.source(text)).delta
        #expect(delta.mode == .token && delta.tokenPath == ["nextSyncToken"] && delta.tokenPathText == "/nextSyncToken")
        #expect(delta.query == "syncToken={checkpoint}")
        #expect(delta.deletedValue == .string("cancelled") && delta.deletedValueText == "\"cancelled\"")
        let link = try #require(ConfigurationSourceTests.source("[Source]\nURL=https://graph.example.com/v1.0/me/events/delta\n"
                                                                + "Delta=token\nDeltaTokenPath=/@odata.deltaLink\n"))
        #expect(link.delta.query.isEmpty && link.delta.tokenPath == ["@odata.deltaLink"])
    }

    @Test("DeletedValue= takes any JSON scalar", arguments: [
        ("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null), ("0", .integer(0)),
        ("\"cancelled\"", .string("cancelled")), ("\"\"", .string("")), ("1.5", .number(JSONNumber(literal: "1.5")!)),
    ])
    func deletedValues(text: String, value: JSONValue) throws {
        let delta = try #require(ConfigurationSourceTests.source(watermark + "DeletedPath=/deleted\nDeletedValue=\(text)\n")).delta
        #expect(delta.deletedValue == value && delta.deletedValueText == text)
    }

    @Test("an empty value restores each key's default")
    func emptyRestoresDefaults() throws {
        let text = watermark + "DeletedPath=/deleted\nDeletedValue=\"gone\"\nDeltaExpired=400\nFullResyncIntervalSec=1h\n"
            + "DeletedValue=\nDeltaExpired=\nFullResyncIntervalSec=\n"
        let delta = try #require(ConfigurationSourceTests.source(text)).delta
        #expect(delta.deletedValue == .bool(true) && delta.deletedValueText == "true")
        #expect(delta.expiredStatuses == [410] && delta.fullResyncInterval == .seconds(86_400))
        let none = try #require(ConfigurationSourceTests.source(base + "Delta=token\nDelta=\n"))
        #expect(none.delta.mode == .none)
    }

    @Test("a bad value is an error with FILE:LINE and the fix", arguments: [
        ("Delta=watermarks", "posts.source:3: Delta: invalid delta mode \"watermarks\"; use none, watermark or token"),
        ("Delta=Token", "posts.source:3: Delta: invalid delta mode \"Token\"; use none, watermark or token"),
        ("DeltaField=last_modified",
         "posts.source:3: DeltaField: invalid JSON pointer \"last_modified\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("DeltaTokenPath=nextSyncToken",
         "posts.source:3: DeltaTokenPath: invalid JSON pointer \"nextSyncToken\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("DeletedPath=deleted",
         "posts.source:3: DeletedPath: invalid JSON pointer \"deleted\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("DeletedPath=/a~2",
         "posts.source:3: DeletedPath: invalid JSON pointer \"/a~2\": invalid escape \"~2\"; use ~0 for \"~\" and ~1 for \"/\""),
        ("DeltaQuery=_since={checkpoint}#x",
         "posts.source:3: DeltaQuery: invalid query \"_since={checkpoint}#x\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}"),
        ("DeltaQuery=q=a\tb",
         "posts.source:3: DeltaQuery: invalid query \"q=a\\x09b\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}"),
        ("DeltaQuery=q={checkpoint}&=x",
         "posts.source:3: DeltaQuery: invalid query \"q={checkpoint}&=x\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}"),
        ("DeltaQuery=_since=5&{checkpoint}",
         "posts.source:3: DeltaQuery: invalid query \"_since=5&{checkpoint}\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}"),
        ("DeltaQuery=since=ä{checkpoint}",
         "posts.source:3: DeltaQuery: invalid query \"since=ä{checkpoint}\"; write name=value pairs joined by &, percent-encoded, e.g. _since={checkpoint}"),
        ("DeletedValue=cancelled",
         "posts.source:3: DeletedValue: invalid JSON value \"cancelled\"; write a JSON scalar: true, a number, null or a quoted string such as \"cancelled\""),
        ("DeletedValue={\"reason\": \"deleted\"}",
         "posts.source:3: DeletedValue: invalid JSON value \"{\"reason\": \"deleted\"}\"; write a JSON scalar: true, a number, null or a quoted string such as \"cancelled\""),
        ("DeletedValue=[true]",
         "posts.source:3: DeletedValue: invalid JSON value \"[true]\"; write a JSON scalar: true, a number, null or a quoted string such as \"cancelled\""),
        ("DeltaExpired=200",
         "posts.source:3: DeltaExpired: invalid HTTP status \"200\"; use error statuses from 400 to 599 separated by spaces, e.g. 410 400"),
        ("DeltaExpired=410,400",
         "posts.source:3: DeltaExpired: invalid HTTP status \"410,400\"; use error statuses from 400 to 599 separated by spaces, e.g. 410 400"),
        ("DeltaExpired=410 gone",
         "posts.source:3: DeltaExpired: invalid HTTP status \"gone\"; use error statuses from 400 to 599 separated by spaces, e.g. 410 400"),
        ("FullResyncIntervalSec=0", "posts.source:3: FullResyncIntervalSec: must be greater than 0, e.g. 30s"),
        ("FullResyncIntervalSec=daily", "posts.source:3: FullResyncIntervalSec: invalid time span \"daily\": expected a number at \"daily\""),
    ])
    func badValues(line: String, expected: String) {
        // Each value error is reported alone: the rules between keys are checked only on a section whose values parsed.
        let problems = ConfigurationSourceTests.problems(base + line + "\n")
        #expect(problems == [expected])
    }

    @Test("DeltaExpired= keeps each status once, in order")
    func statuses() throws {
        #expect(try DeltaSettings.statuses("410 400  404 410") == [410, 400, 404])
        #expect(throws: ValueError("needs at least one HTTP status, e.g. 410")) { try DeltaSettings.statuses("  ") }
    }

    // The rules between the keys, each reported at the line that breaks it.

    @Test("a key of Delta= without Delta= is reported at its own line, each one")
    func keysWithoutDelta() {
        let text = base + "DeltaField=/last_modified\nDeltaQuery=_since={checkpoint}\nDeltaTokenPath=/t\nDeletedPath=/deleted\n"
            + "DeletedValue=false\nDeltaExpired=400\nFullResyncIntervalSec=1h\n"
        #expect(ConfigurationSourceTests.problems(text) == [
            "posts.source:3: DeltaField= has no effect without Delta=watermark; set Delta= or remove it",
            "posts.source:4: DeltaQuery= has no effect without Delta=watermark or Delta=token; set Delta= or remove it",
            "posts.source:5: DeltaTokenPath= has no effect without Delta=token; set Delta= or remove it",
            "posts.source:6: DeletedPath= has no effect without Delta=watermark or Delta=token; set Delta= or remove it",
            "posts.source:7: DeletedValue= has no effect without Delta=watermark or Delta=token; set Delta= or remove it",
            "posts.source:8: DeltaExpired= has no effect without Delta=watermark or Delta=token; set Delta= or remove it",
            "posts.source:9: FullResyncIntervalSec= has no effect without Delta=watermark or Delta=token; set Delta= or remove it",
        ])
        #expect(ConfigurationSourceTests.problems(base + "Delta=none\nDeletedPath=/deleted\n")
                == ["posts.source:4: DeletedPath= has no effect without Delta=watermark or Delta=token; set Delta= or remove it"])
    }

    @Test("Delta=watermark needs DeltaField= and a DeltaQuery= holding {checkpoint}, at the Delta= line when unset")
    func watermarkNeeds() {
        #expect(ConfigurationSourceTests.problems(base + "Delta=watermark\n") == [
            "posts.source:3: Delta=watermark needs DeltaField=, the JSON pointer to each record's change stamp, e.g. DeltaField=/last_modified",
            "posts.source:3: Delta=watermark needs DeltaQuery= with {checkpoint} where the highest stamp goes, e.g. DeltaQuery=_since={checkpoint}",
        ])
        #expect(ConfigurationSourceTests.problems(base + "Delta=watermark\nDeltaField=/updated\nDeltaQuery=_sort=updated\n") == [
            "posts.source:5: Delta=watermark needs DeltaQuery= with {checkpoint} where the highest stamp goes, e.g. DeltaQuery=_since={checkpoint}",
        ])
        #expect(ConfigurationSourceTests.problems(watermark).isEmpty)
    }

    @Test("Delta=watermark refuses DeltaTokenPath=, Delta=token refuses DeltaField=")
    func wrongModeKeys() {
        #expect(ConfigurationSourceTests.problems(watermark + "DeltaTokenPath=/nextSyncToken\n")
                == ["posts.source:6: DeltaTokenPath= is for Delta=token; Delta=watermark reads DeltaField="])
        #expect(ConfigurationSourceTests.problems(token + "DeltaField=/updated\n")
                == ["posts.source:5: DeltaField= is for Delta=watermark; Delta=token reads DeltaTokenPath="])
    }

    @Test("Delta=token needs DeltaTokenPath=; a DeltaQuery= it has must hold {checkpoint}")
    func tokenNeeds() {
        #expect(ConfigurationSourceTests.problems(base + "Delta=token\n") == [
            "posts.source:3: Delta=token needs DeltaTokenPath=, the JSON pointer to the next checkpoint on a listing's last page, e.g. DeltaTokenPath=/nextSyncToken",
        ])
        #expect(ConfigurationSourceTests.problems(token + "DeltaQuery=syncToken=now\n") == [
            "posts.source:5: DeltaQuery= needs {checkpoint} where the token goes, e.g. DeltaQuery=syncToken={checkpoint}; "
                + "leave it empty when the token is the next request's URL",
        ])
        #expect(ConfigurationSourceTests.problems(token).isEmpty)
        #expect(ConfigurationSourceTests.problems(token + "DeltaQuery=syncToken={checkpoint}\n").isEmpty)
    }

    @Test("DeletedValue= needs DeletedPath=")
    func deletedValueNeedsPath() {
        #expect(ConfigurationSourceTests.problems(token + "DeletedValue=\"cancelled\"\n") == [
            "posts.source:5: DeletedValue= needs DeletedPath=, the JSON pointer inside a record that marks it deleted, e.g. DeletedPath=/deleted",
        ])
    }

    @Test("Delta= needs an http or https URL")
    func fileURL() {
        #expect(ConfigurationSourceTests.problems("[Source]\nURL=file:///srv/items.json\nDelta=token\nDeltaTokenPath=/t\n") == [
            "posts.source:3: Delta=token needs an http or https URL: a file: URL has no query to ask for changes",
        ])
    }

    @Test("every broken rule of a section is reported, in order")
    func severalRules() {
        #expect(ConfigurationSourceTests.problems("[Source]\nURL=file:///srv/items.json\nDelta=watermark\nDeltaTokenPath=/t\nDeletedValue=false\n") == [
            "posts.source:3: Delta=watermark needs an http or https URL: a file: URL has no query to ask for changes",
            "posts.source:3: Delta=watermark needs DeltaField=, the JSON pointer to each record's change stamp, e.g. DeltaField=/last_modified",
            "posts.source:3: Delta=watermark needs DeltaQuery= with {checkpoint} where the highest stamp goes, e.g. DeltaQuery=_since={checkpoint}",
            "posts.source:4: DeltaTokenPath= is for Delta=token; Delta=watermark reads DeltaField=",
            "posts.source:5: DeletedValue= needs DeletedPath=, the JSON pointer inside a record that marks it deleted, e.g. DeletedPath=/deleted",
        ])
    }

    // syncd --check-config --verbose

    @Test("--verbose: Delta=none says nothing of deltas")
    func explainNone() throws {
        let source = try #require(ConfigurationSourceTests.source(base))
        #expect(!source.explanation.contains { $0.hasPrefix("delta:") })
    }

    @Test("--verbose: a watermark source shows the delta URL with {checkpoint}, its tombstones and its full listings")
    func explainWatermark() throws {
        let text = "[Source]\nURL=https://h/v1/records?_sort=id\nRecordsPath=/data\nPagination=header\nDelta=watermark\n"
            + "DeltaField=/last_modified\nDeltaQuery=_since={checkpoint}&_sort=last_modified\nDeletedPath=/deleted\n"
        let source = try #require(ConfigurationSourceTests.source(text))
        #expect(Array(source.explanation[2...4]) == [
            "delta: GET https://h/v1/records?_sort=last_modified&_since={checkpoint}, {checkpoint} the highest /last_modified of the last delta or of a full listing's first page, "
                + "paged as the listing (Delta=watermark)",
            "delta: a record with true at /deleted is removed (DeletedPath=, DeletedValue=)",
            "delta: a full listing at least every 1d (FullResyncIntervalSec=) and after HTTP 410 (DeltaExpired=)",
        ])
    }

    @Test("--verbose: a token source, with a query or as the URL itself, without tombstones")
    func explainToken() throws {
        let query = try #require(ConfigurationSourceTests.source(token + "DeltaQuery=syncToken={checkpoint}\nDeltaExpired=410 400\n"
                                                                 + "FullResyncIntervalSec=12h\nDeletedPath=/status\nDeletedValue=\"cancelled\"\n"))
        #expect(Array(query.explanation[2...4]) == [
            "delta: GET https://h/items?syncToken={checkpoint}, {checkpoint} the token at /nextSyncToken on the last page received (Delta=token)",
            "delta: a record with \"cancelled\" at /status is removed (DeletedPath=, DeletedValue=)",
            "delta: a full listing at least every 12h (FullResyncIntervalSec=) and after HTTP 410 400 (DeltaExpired=)",
        ])
        let link = try #require(ConfigurationSourceTests.source("[Source]\nURL=https://h/me/events/delta\nPagination=body\n"
                                                                + "NextPath=/@odata.nextLink\nDelta=token\nDeltaTokenPath=/@odata.deltaLink\n"))
        #expect(Array(link.explanation[2...3]) == [
            "delta: GET the URL at /@odata.deltaLink on the last page received, paged as the listing (Delta=token)",
            "delta: no tombstones (DeletedPath=): records deleted on the server go at the next full listing",
        ])
    }
}
