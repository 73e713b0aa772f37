import Glibc
import Foundation
import Testing
@testable import SyncRemote

/// A file served through libcurl's file:// support: the same transfer, limits and callbacks as HTTP,
/// without a server. (HTTP itself is exercised end to end by Tests/integration against real servers.)
final class TemporaryFile {
    let path: String
    var url: String { "file://" + path }

    init(_ contents: String) throws {
        path = NSTemporaryDirectory() + "httpclient-" + UUID().uuidString + ".json"
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func get(_ client: HTTPClient, _ request: HTTPRequest) throws -> (HTTPResponseHead, String) {
    var body: [UInt8] = []
    let head = try client.perform(request) { body += $0 }
    return (head, String(decoding: body, as: UTF8.self))
}

@Suite("HTTPClient")
struct HTTPClientTests {
    @Test func streamsTheBodyThroughTheCallbacks() throws {
        let file = try TemporaryFile(#"[{"id":1,"title":"a"}]"#)
        let client = HTTPClient()
        var heads = 0
        var body: [UInt8] = []
        let head = try client.perform(HTTPRequest(url: file.url), onHead: { _ in heads += 1 }) { body += $0 }
        #expect(head.isSuccess && heads == 1)
        #expect(String(decoding: body, as: UTF8.self) == #"[{"id":1,"title":"a"}]"#)
    }

    @Test func abortsPastMaxBytes() throws {
        let file = try TemporaryFile(String(repeating: "x", count: 100_000))
        let client = HTTPClient()
        var request = HTTPRequest(url: file.url)
        request.maxBytes = 4096
        #expect { try get(client, request) } throws: { error in
            guard case HTTPError.tooLarge(4096) = error else { return false }
            return "\(error)" == "response larger than MaxBytes=4096 bytes"
        }
    }

    @Test func aConsumerErrorAbortsAndIsRethrown() throws {
        struct Stop: Error {}
        let file = try TemporaryFile("[1,2,3]")
        let client = HTTPClient()
        #expect { try client.perform(HTTPRequest(url: file.url)) { _ in throw Stop() } } throws: { error in
            guard case HTTPError.rejected(let inner) = error else { return false }
            return inner is Stop
        }
    }

    @Test func aMissingFileIsAClearError() throws {
        let client = HTTPClient()
        #expect { try get(client, HTTPRequest(url: "file:///nonexistent/syncd-test.json")) } throws: { error in
            "\(error)" == "Failed to open /nonexistent/syncd-test.json: No such file or directory"
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let path = "/tmp/syncd-test-fifo-\(getpid())"
        unlink(path)
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let client = HTTPClient()
        // open(2) of a FIFO without O_NONBLOCK would wait here for ever.
        #expect { try get(client, HTTPRequest(url: "file://" + path)) } throws: { error in
            "\(error)" == "\(path) is not a regular file; URL= must name a JSON file"
        }
    }

    @Test func refusesToSendATokenOverPlainHTTPToAnotherHost() throws {
        let client = HTTPClient()
        var request = HTTPRequest(url: "http://192.0.2.1/posts")
        request.bearerToken = "secret"
        #expect { try get(client, request) } throws: { error in
            "\(error)" == "refusing to send the bearer token over plain http to 192.0.2.1; use https"
        }
    }

    @Test func aRefusedConnectionIsTransient() throws {
        let client = HTTPClient()
        var request = HTTPRequest(url: "http://127.0.0.1:9/x")
        request.timeout = .seconds(2)
        #expect { try get(client, request) } throws: { error in
            guard let error = error as? HTTPError else { return false }
            return error.isTransient && "\(error)".hasPrefix("cannot reach http://127.0.0.1:9/x")
        }
    }

    /// A listening socket nobody accepts: the connection completes (backlog) and no answer ever comes.
    @Test(arguments: [("GET", "fetching"), ("POST", "sending POST to"), ("PUT", "sending PUT to"), ("DELETE", "sending DELETE to")])
    func aTimeoutSaysWhetherItWasFetchingOrSending(_ method: String, _ doing: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/x"
        var request = HTTPRequest(url: url)
        request.method = method
        request.body = method == "POST" || method == "PUT" ? Array("{}".utf8) : nil
        request.timeout = .milliseconds(500)
        #expect { try get(HTTPClient(), request) } throws: { error in
            "\(error)" == "timed out after 0.5 seconds (TimeoutSec=) \(doing) \(url)"
        }
    }

    @Test func aCancelledClientAbortsItsNextTransfer() throws {
        let file = try TemporaryFile("[]")
        let client = HTTPClient()
        client.cancellation.cancel()
        #expect { try get(client, HTTPRequest(url: file.url)) } throws: { error in
            guard case HTTPError.cancelled = error else { return false }
            return true
        }
        client.cancellation.reset()
        #expect(try get(client, HTTPRequest(url: file.url)).1 == "[]")
    }
}

@Suite("URL resolution")
struct URLResolutionTests {
    @Test(arguments: [
        ("/posts?page=2", "http://h:1/posts", "http://h:1/posts?page=2"),
        ("page3", "http://h/api/posts?page=2", "http://h/api/page3"),
        ("https://other.example/p", "http://h/posts", "https://other.example/p"),
        ("?page=4", "http://h/posts?page=3", "http://h/posts?page=4"),
    ])
    func relativeAndAbsoluteReferences(_ reference: String, _ base: String, _ expected: String) {
        #expect(resolveURL(reference, against: base) == expected)
    }

    @Test func loopbackHosts() throws {
        #expect(try URLParts("http://localhost:3000/x").isLoopback)
        #expect(try URLParts("http://127.0.0.5/x").isLoopback)
        #expect(try URLParts("http://[::1]:80/x").isLoopback)
        #expect(try !URLParts("http://example.org/x").isLoopback)
        #expect(throws: HTTPError.self) { try URLParts("not a url") }
    }
}
