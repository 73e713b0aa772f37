import Testing
@testable import SyncControl

@Suite("VarlinkFramer")
struct VarlinkFramerTests {
    private func drain(_ framer: inout VarlinkFramer) throws -> [String] {
        var messages: [String] = []
        while let message = try framer.nextMessage() { messages.append(String(decoding: message, as: UTF8.self)) }
        return messages
    }

    @Test func joinsSplitMessages() throws {
        var framer = VarlinkFramer()
        framer.append(Array(#"{"method":"#.utf8))
        #expect(try drain(&framer) == [])
        framer.append(Array(#""a.B"}"#.utf8) + [0])
        #expect(try drain(&framer) == [#"{"method":"a.B"}"#])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func splitsSeveralMessagesInOneRead() throws {
        var framer = VarlinkFramer()
        framer.append(Array("{}".utf8) + [0] + Array("[1]".utf8) + [0] + Array("{\"x\"".utf8))
        #expect(try drain(&framer) == ["{}", "[1]"])
        framer.append([0])
        #expect(try drain(&framer) == [#"{"x""#])
    }

    @Test func refusesOversizeMessageWithoutNUL() throws {
        var framer = VarlinkFramer(maxMessageSize: 16)
        framer.append([UInt8](repeating: 0x20, count: 16))
        #expect(try framer.nextMessage() == nil)
        framer.append([0x20])
        #expect(throws: VarlinkFramer.MessageTooLarge(limit: 16)) { try framer.nextMessage() }
    }

    @Test func refusesOversizeMessageArrivingWithItsNUL() {
        var framer = VarlinkFramer(maxMessageSize: 4)
        framer.append(Array("123456".utf8) + [0])
        #expect(throws: VarlinkFramer.MessageTooLarge(limit: 4)) { try framer.nextMessage() }
    }

    @Test func handlesManySmallMessages() throws {
        var framer = VarlinkFramer()
        var count = 0
        for index in 0..<50_000 {
            framer.append(Array("\(index)".utf8) + [0])
            while try framer.nextMessage() != nil { count += 1 }
        }
        #expect(count == 50_000)
        #expect(framer.bufferedByteCount == 0)
    }
}
