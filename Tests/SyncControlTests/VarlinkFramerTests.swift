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

    /// A reply of megabytes in 64 KiB reads (as `VarlinkClient` receives one), followed by the start of the next:
    /// every byte arrives in order, and the limit still holds past the room reserved after the first 64 KiB.
    @Test func largeMessageInChunks() throws {
        var framer = VarlinkFramer(maxMessageSize: 3 << 20)
        let message = (0..<(3 << 20) - 1).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        var stream = message + [0] + Array("{}".utf8)
        var offset = 0
        var received: [[UInt8]] = []
        while offset < stream.count {
            let end = min(stream.count, offset + (64 << 10))
            framer.append(stream[offset..<end])
            offset = end
            while let next = try framer.nextMessage() { received.append(next) }
        }
        #expect(received == [message])
        #expect(framer.bufferedByteCount == 2)
        stream = [UInt8](repeating: 0x20, count: 3 << 20)
        framer.append(stream)
        #expect(throws: VarlinkFramer.MessageTooLarge(limit: 3 << 20)) { try framer.nextMessage() }
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
