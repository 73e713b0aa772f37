import Foundation  // JSONEncoder/JSONDecoder: the format earlier releases wrote and read
import Testing
@testable import SyncCore

@Suite("PersistedRetryState JSON text")
struct PersistedRetryStateJSONTests {
    static let states = [
        PersistedRetryState(phase: .backoff, attempt: 3, nextAttemptInMilliseconds: 1_200, retryAfterRemainingMilliseconds: 50_000),
        PersistedRetryState(phase: .backoff, attempt: 0, nextAttemptInMilliseconds: 0, retryAfterRemainingMilliseconds: 9_000),
        PersistedRetryState(phase: .error, attempt: 1, nextAttemptInMilliseconds: nil, retryAfterRemainingMilliseconds: nil),
        PersistedRetryState(phase: .error, attempt: 7, nextAttemptInMilliseconds: nil, retryAfterRemainingMilliseconds: Int64.max),
    ]

    @Test("the text has the members earlier releases wrote, nil ones left out")
    func textIsTheEarlierFormat() {
        #expect(Self.states[0].jsonText
            == #"{"phase":"backoff","attempt":3,"nextAttemptInMilliseconds":1200,"retryAfterRemainingMilliseconds":50000}"#)
        #expect(Self.states[2].jsonText == #"{"phase":"error","attempt":1}"#)
    }

    @Test("round trip through the text", arguments: states)
    func roundTrip(state: PersistedRetryState) throws {
        #expect(try PersistedRetryState(jsonText: state.jsonText) == state)
    }

    @Test("a state written by an earlier release (JSONEncoder) loads", arguments: states)
    func earlierReleaseTextLoads(state: PersistedRetryState) throws {
        let written = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(try PersistedRetryState(jsonText: written) == state)
    }

    @Test("texts captured from an earlier release load, members in any order")
    func capturedTextsLoad() throws {
        // Printed by the previous release's JSONEncoder (its member order varies from run to run).
        #expect(try PersistedRetryState(jsonText:
            #"{"nextAttemptInMilliseconds":1200,"attempt":3,"retryAfterRemainingMilliseconds":50000,"phase":"backoff"}"#)
            == Self.states[0])
        #expect(try PersistedRetryState(jsonText: #"{"phase":"error","attempt":1}"#) == Self.states[2])
        // null for nil, as JSONDecoder accepted, and unknown members are ignored.
        #expect(try PersistedRetryState(jsonText: #"{"phase":"error","attempt":1,"nextAttemptInMilliseconds":null,"x":[1]}"#)
            == Self.states[2])
    }

    @Test("a state written by this release loads in an earlier one (JSONDecoder)", arguments: states)
    func earlierReleaseReadsTheText(state: PersistedRetryState) throws {
        #expect(try JSONDecoder().decode(PersistedRetryState.self, from: Data(state.jsonText.utf8)) == state)
    }

    @Test("damaged text is refused with a message that says what is wrong", arguments: [
        ("{\"phase\":\"backoff\",", "Failed to read the saved retry state: unexpected end of JSON text"),
        ("[1,2]", "Failed to read the saved retry state: not a JSON object"),
        ("{\"attempt\":1}", "Failed to read the saved retry state: member \"phase\" is missing or not a string"),
        ("{\"phase\":\"resting\",\"attempt\":1}",
         "Failed to read the saved retry state: unknown phase \"resting\" (expected \"backoff\" or \"error\")"),
        ("{\"phase\":\"error\",\"attempt\":\"1\"}", "Failed to read the saved retry state: member \"attempt\" is missing or not an integer"),
        ("{\"phase\":\"error\",\"attempt\":1.5}", "Failed to read the saved retry state: member \"attempt\" is missing or not an integer"),
        ("{\"phase\":\"backoff\",\"attempt\":1,\"nextAttemptInMilliseconds\":\"soon\"}",
         "Failed to read the saved retry state: member \"nextAttemptInMilliseconds\" is not an integer"),
    ])
    func damagedTextIsRefused(text: String, message: String) {
        #expect(throws: RetryStateFormatError.self) { try PersistedRetryState(jsonText: text) }
        do {
            _ = try PersistedRetryState(jsonText: text)
        } catch {
            #expect(error.description == message)
        }
    }
}
