// JSONScanError: one-line messages for people.

import Testing
import SyncCore

@Suite("JSONScanError")
struct JSONScanErrorTests {
    @Test("description", arguments: [
        (JSONScanError.Kind.syntax("unexpected character '<'"), 17, "invalid JSON at byte 17: unexpected character '<'"),
        (.invalidUTF8, 9, "invalid UTF-8 at byte 9"),
        (.depthExceeded(64), 300, "JSON nested deeper than 64 levels at byte 300"),
        (.trailingBytes, 120, "trailing bytes after the JSON document at byte 120"),
        (.truncated, 4096, "JSON document is truncated (ended at byte 4096)"),
        (.notAnArray(path: ""), 0, "top level is not an array; if the records are inside an object, set RecordsPath= to them "
            + "(e.g. /data; 'syncd --probe SOURCE' says where they are)"),
        (.notAnArray(path: "/data"), 8, "value at /data is not an array"),
        (.pathNotFound(path: "/data"), 11, "no array at /data"),
        (.recordNotObject(index: 3), 40, "record 3 is not an object"),
        (.missingID(index: 3, field: "id"), 40, "record 3 has no ID field \"id\""),
        (.invalidID(index: 0, reason: "empty ID"), 7, "record 0 has an invalid ID: empty ID"),
        (.controlCharacterInString, 9, "invalid JSON at byte 9: unescaped control character in a string"),
    ] as [(JSONScanError.Kind, Int64, String)])
    func description(_ kind: JSONScanError.Kind, _ offset: Int64, _ expected: String) {
        #expect(JSONScanError(kind: kind, offset: offset).description == expected)
    }
}
