import Testing
@testable import SyncCore

/// Numbers are text (docs/local-changes.md, "Records as written"): what is parsed is written back byte for byte, and
/// numbers compare by their exact decimal value, never through a `Double`.
@Suite("JSONNumber")
struct JSONNumberTests {
    @Test(arguments: [
        "12345678901234567890", "18446744073709551616", "-99999999999999999999999", "0.123456789012345678",
        "1e-400", "1e400", "-1E+400", "-0", "-0.0", "0.10", "1.50", "1E2", "1e+2", "2.5e-07", "9223372036854775808",
        "-9223372036854775809", "123456789.123456789e-5",
    ])
    func parseThenSerialiseKeepsTheText(literal: String) throws {
        let text = #"{"n":\#(literal),"a":[\#(literal),{"m":\#(literal)}]}"#
        let value = try JSONValue(parsing: text)
        #expect(value.serialized() == text)
        #expect(value.serialized(.pretty).contains(": \(literal),"))
        #expect(value["n"] == .number(try #require(JSONNumber(literal: literal))))
    }

    @Test func integersInInt64StayIntegers() throws {
        #expect(try JSONValue(parsing: "9223372036854775807") == .integer(.max))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .integer(.min))
        #expect(try JSONValue(parsing: "9223372036854775808") == .number(try #require(JSONNumber(literal: "9223372036854775808"))))
        #expect(try JSONValue(parsing: "-0").serialized() == "-0", "-0 is not written back as 0")
    }

    @Test func equalValuesWrittenDifferentlyAreEqualAndHashAlike() throws {
        let groups = [["1", "1.0", "10e-1", "0.1e1", "100E-2"], ["-0", "0", "0.000", "0e5"],
                      ["12345678901234567890", "1.234567890123456789e19"], ["1e400", "10e399", "0.1E401"], ["1e-400", "0.1e-399"]]
        for group in groups {
            let values = try group.map { try JSONValue(parsing: $0) }
            for value in values {
                #expect(value == values[0], "\(value) equals \(values[0])")
                #expect(value.hashValue == values[0].hashValue)
            }
        }
    }

    @Test func numbersADoubleCannotTellApartStayApart() throws {
        #expect(try JSONValue(parsing: "12345678901234567890") != JSONValue(parsing: "12345678901234567891"))
        #expect(try JSONValue(parsing: "0.123456789012345678") != JSONValue(parsing: "0.12345678901234568"))
        #expect(try JSONValue(parsing: "1e-400") != JSONValue(parsing: "0"))
        #expect(try JSONValue(parsing: "1e400") != JSONValue(parsing: "1e401"))
        #expect(try JSONValue(parsing: "-1") != JSONValue(parsing: "1"))
    }

    /// An exponent of more than 15 digits: equal only to the same text.
    @Test func aNumberWithAHugeExponentEqualsOnlyItsOwnText() throws {
        let huge = try JSONValue(parsing: "1e1234567890123456")
        #expect(huge == (try JSONValue(parsing: "1e1234567890123456")))
        #expect(huge != (try JSONValue(parsing: "10e1234567890123455")))
        #expect(huge.serialized() == "1e1234567890123456")
        #expect(try JSONValue(parsing: "1e000000000000000000002") == JSONValue(parsing: "100"), "leading zeros of an exponent do not count")
    }

    @Test func integerAccessors() throws {
        #expect(try JSONValue(parsing: "1e3").integerValue == 1000)
        #expect(try JSONValue(parsing: "-0").integerValue == 0)
        #expect(try JSONValue(parsing: "2.50e1").integerValue == 25)
        #expect(try JSONValue(parsing: "12345678901234567890").integerValue == nil)
        #expect(try JSONValue(parsing: "1e400").integerValue == nil)
        #expect(try JSONValue(parsing: "1.5").integerValue == nil)
        #expect(try JSONValue(parsing: "12345678901234567890").integerText == "12345678901234567890")
        #expect(try JSONValue(parsing: "7").integerText == "7")
        #expect(try JSONValue(parsing: "7.0").integerText == nil)
        #expect(try JSONValue(parsing: "1e400").doubleValue == .infinity)
    }

    @Test func literalsAreChecked() {
        for bad in ["", "+1", "01", ".5", "1.", "1e", "1e+", "NaN", "Infinity", "- 1", "1 ", "0x10", "--1"] {
            #expect(JSONNumber(literal: bad) == nil, "\(bad) is not a JSON number")
        }
        #expect(JSONNumber(literal: "-0.5E-3")?.literal == "-0.5E-3")
    }

    @Test func numbersMadeFromADouble() {
        #expect(JSONValue.number(2.5).serialized() == "2.5")
        #expect(JSONValue.number(9_223_372_036_854_775_808).serialized() == "9223372036854775808")
        #expect(JSONValue.number(-3.0).serialized() == "-3")
        #expect(JSONValue.number(1e300).serialized() == "1e+300")
        #expect(JSONValue.number(.infinity) == .null)
        #expect(JSONValue.number(.nan) == .null)
    }
}
