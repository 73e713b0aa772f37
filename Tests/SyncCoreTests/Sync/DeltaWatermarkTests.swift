import Testing
@testable import SyncCore

/// `DeltaWatermark` (syncd.conf(5), "Incremental pull", `DeltaField=`): the highest change stamp seen, numbers
/// compared exactly as numbers, strings byte by byte, and the checkpoint's text kept as it was stored.
@Suite("DeltaWatermark: the highest change stamp")
struct DeltaWatermarkTests {
    /// The watermark after seeing each stamp (JSON texts) in turn, from `checkpoint`.
    func highest(_ stamps: [String], from checkpoint: String? = nil) throws -> String? {
        var watermark = DeltaWatermark(checkpoint: checkpoint)
        for stamp in stamps { try watermark.see(try JSONValue(parsing: stamp)) }
        return watermark.checkpoint
    }

    func problem(_ stamps: [String], from checkpoint: String? = nil) throws -> DeltaWatermark.Problem? {
        var watermark = DeltaWatermark(checkpoint: checkpoint)
        do {
            for stamp in stamps { try watermark.see(try JSONValue(parsing: stamp)) }
        } catch let error as DeltaWatermark.Problem {
            return error
        }
        return nil
    }

    @Test("nothing seen, no checkpoint")
    func empty() {
        #expect(DeltaWatermark().checkpoint == nil && DeltaWatermark().highest == nil)
    }

    @Test("integers compare as numbers, not as text", arguments: [
        (["9", "10"], "10"), (["10", "9"], "10"), (["1796200917394", "999999999999"], "1796200917394"),
        (["-5", "-12", "-3"], "-3"), (["-1", "0"], "0"), (["0", "-0"], "0"), (["7", "7"], "7"),
    ])
    func integers(stamps: [String], expected: String) throws {
        #expect(try highest(stamps) == expected)
    }

    @Test("integers beyond Int64 compare exactly, digit by digit")
    func bigIntegers() throws {
        #expect(try highest(["18446744073709551617", "18446744073709551616"]) == "18446744073709551617")
        #expect(try highest(["9223372036854775807", "9223372036854775808"]) == "9223372036854775808")
        #expect(try highest(["-18446744073709551617", "-18446744073709551616"]) == "-18446744073709551616")
        // Doubles would call these two equal.
        #expect(try highest(["123456789012345678901234567890", "123456789012345678901234567891"]) == "123456789012345678901234567891")
    }

    @Test("decimals and exponents compare by their exact values, the literal kept as received")
    func decimals() throws {
        #expect(try highest(["1.5", "1.25", "1.499"]) == "1.5")
        #expect(try highest(["2", "1.999999999999999999999"]) == "2")
        #expect(try highest(["1.999999999999999999999", "1.9999999999999999999991"]) == "1.9999999999999999999991")
        #expect(try highest(["1e3", "999"]) == "1e3")
        #expect(try highest(["1e3", "1001"]) == "1001")
        #expect(try highest(["-0.5", "-0.25"]) == "-0.25")
        // Equal values: the first one received stays.
        #expect(try highest(["1.0", "1"]) == "1.0")
    }

    @Test("strings compare byte by byte: ISO 8601 times of one format in time order")
    func strings() throws {
        #expect(try highest(["2026-12-02T08:03:00Z", "2026-12-02T10:00:00Z", "2026-12-01T23:59:59Z"].map { "\"\($0)\"" })
                == "2026-12-02T10:00:00Z")
        #expect(try highest(["\"b\"", "\"ab\"", "\"B\""]) == "b")
        #expect(try highest(["10", "9"].map { "\"\($0)\"" }) == "9")
        #expect(try highest(["\"é\"", "\"z\""]) == "é")
    }

    @Test("stamps of two kinds, or of a kind without order, are refused")
    func refused() throws {
        #expect(try problem(["1", "\"2\""]) == .mixed("a number and a string"))
        #expect(try problem(["\"2026-12-02\"", "5"]) == .mixed("a string and a number"))
        #expect(try problem(["true"]) == .notComparable("a boolean"))
        #expect(try problem(["1", "false"]) == .notComparable("a boolean"))
        #expect(try problem(["{\"ms\": 1}"]) == .notComparable("an object"))
        #expect(try problem(["[1]"]) == .notComparable("an array"))
        #expect(try problem(["null"]) == .missing)
        var watermark = DeltaWatermark()
        #expect(throws: DeltaWatermark.Problem.missing) { try watermark.see(nil) }
    }

    @Test("a refused stamp leaves the watermark as it was")
    func refusedKeeps() throws {
        var watermark = DeltaWatermark()
        try watermark.see(.integer(5))
        #expect(throws: DeltaWatermark.Problem.mixed("a number and a string")) { try watermark.see(.string("9")) }
        #expect(throws: DeltaWatermark.Problem.missing) { try watermark.see(.null) }
        #expect(watermark.checkpoint == "5" && watermark.highest == .integer(5))
    }

    @Test("from a stored number: only a higher stamp moves it")
    func fromNumber() throws {
        #expect(try highest([], from: "1796200917394") == "1796200917394")
        #expect(try highest(["1796200917000"], from: "1796200917394") == "1796200917394")
        #expect(try highest(["1796200917395"], from: "1796200917394") == "1796200917395")
        #expect(try highest(["18446744073709551616"], from: "1796200917394") == "18446744073709551616")
        #expect(try highest(["99"], from: "18446744073709551616") == "18446744073709551616")
        #expect(try highest(["2.5"], from: "2.25") == "2.5")
        #expect(DeltaWatermark(checkpoint: "17").highest == .integer(17))
    }

    @Test("from a stored string: compared as a string")
    func fromString() throws {
        #expect(try highest(["\"2026-12-02T08:00:00Z\""], from: "2026-12-02T09:00:00Z") == "2026-12-02T09:00:00Z")
        #expect(try highest(["\"2026-12-02T10:00:00Z\""], from: "2026-12-02T09:00:00Z") == "2026-12-02T10:00:00Z")
        #expect(try problem(["5"], from: "2026-12-02T09:00:00Z") == .mixed("a string and a number"))
    }

    @Test("a stored checkpoint that reads as a number is a string when the stamps are strings, and keeps its text")
    func storedTextKept() throws {
        // String stamps "0123" and "0200": as text "0123" < "0200" < "123"; as numbers 123 < 200.
        #expect(try highest(["\"0100\""], from: "0123") == "0123")
        #expect(try highest(["\"0200\""], from: "0123") == "0200")
        #expect(try highest(["\"9\""], from: "10") == "9")
        // Nothing above it: the text stays exactly as stored, not rewritten as a number.
        #expect(try highest([], from: "1e3") == "1e3")
        #expect(try highest(["999"], from: "1e3") == "1e3")
        #expect(try highest(["1.50"], from: "1.5") == "1.5")
    }

    @Test("once a stamp fixed the kind, a stamp of the other kind is refused, also from a stored checkpoint")
    func kindFixedByFirstStamp() throws {
        #expect(try problem(["5", "\"6\""], from: "7") == .mixed("a number and a string"))
        #expect(try problem(["\"5\"", "6"], from: "7") == .mixed("a string and a number"))
    }
}
