import Testing
@testable import SyncCore

@Suite("Configuration values")
struct ConfigurationValueTests {
    @Test("time spans", arguments: [
        ("30s", Duration.seconds(30)),
        ("30", .seconds(30)),
        ("500ms", .milliseconds(500)),
        ("2.5s", .milliseconds(2500)),
        ("5min", .seconds(300)),
        ("1m", .seconds(60)),
        ("1h 30min", .seconds(5400)),
        ("1h30min", .seconds(5400)),
        ("1 h 30 min", .seconds(5400)),
        ("2 hours", .seconds(7200)),
        ("1hr", .seconds(3600)),
        ("3 sec", .seconds(3)),
        ("1second", .seconds(1)),
        ("1d", .seconds(86_400)),
        ("2days", .seconds(172_800)),
        ("1w", .seconds(604_800)),
        ("1M", .seconds(2_629_800)),
        ("1month", .seconds(2_629_800)),
        ("1y", .seconds(31_557_600)),
        ("10us", .microseconds(10)),
        ("10usec", .microseconds(10)),
        ("10\u{00B5}s", .microseconds(10)),
        ("10\u{03BC}s", .microseconds(10)),
        ("7msec", .milliseconds(7)),
        ("0", .zero),
        ("0.5", .milliseconds(500)),
        (" 15min ", .seconds(900)),
        ("1.5h", .seconds(5400)),
    ])
    func timeSpan(text: String, expected: Duration) throws {
        #expect(try TimeSpan.parse(text) == expected)
    }

    @Test("bad time spans", arguments: [
        ("5 parsecs", "invalid time span \"5 parsecs\": unknown unit \"parsecs\"; use ns, us, ms, s, min, h, d, w, M or y"),
        ("", "invalid time span \"\": empty; use e.g. 30s or 5min"),
        ("-5s", "invalid time span \"-5s\": negative time spans are not allowed"),
        ("min", "invalid time span \"min\": expected a number at \"min\""),
        ("5 S", "invalid time span \"5 S\": unknown unit \"S\"; use ns, us, ms, s, min, h, d, w, M or y"),
        ("1.2.3s", "invalid time span \"1.2.3s\": unexpected \".3s\""),
        ("5s!", "invalid time span \"5s!\": expected a number at \"!\""),
        ("99999999999y", "invalid time span \"99999999999y\": too large"),
    ])
    func badTimeSpan(text: String, message: String) {
        #expect(throws: ValueError(message)) { try TimeSpan.parse(text) }
    }

    @Test("time spans format back", arguments: [
        (Duration.seconds(300), "5min"), (.seconds(5400), "1h 30min"), (.milliseconds(500), "500ms"),
        (.zero, "0"), (.seconds(86_401), "1d 1s"), (.seconds(900), "15min"),
    ])
    func formatTimeSpan(duration: Duration, text: String) throws {
        #expect(TimeSpan.format(duration) == text)
        #expect(try TimeSpan.parse(text) == duration)
    }

    static let sizes: [(String, Int64)] = [
        ("512", 512), ("512B", 512), ("512K", 512 * 1024), ("64M", 64 << 20), ("1G", 1 << 30),
        ("2T", 2 << 40), ("1KiB", 1024), ("256MiB", 256 << 20), ("1.5K", 1536), ("64 M", 64 << 20),
        ("0", 0), ("1E", 1 << 60),
    ]

    @Test("sizes", arguments: sizes)
    func size(text: String, expected: Int64) throws {
        #expect(try ByteSize.parse(text) == expected)
    }

    @Test("bad sizes", arguments: [
        ("64m", "invalid size \"64m\": unknown suffix \"m\"; use K, M, G or T (powers of 1024)"),
        ("1KB", "invalid size \"1KB\": unknown suffix \"KB\"; use K, M, G or T (powers of 1024)"),
        ("", "invalid size \"\": empty; use e.g. 512K or 64M"),
        ("-1K", "invalid size \"-1K\": negative sizes are not allowed"),
        ("M", "invalid size \"M\": expected a number, e.g. 512K or 64M"),
        ("8E", "invalid size \"8E\": too large"),
    ])
    func badSize(text: String, message: String) {
        #expect(throws: ValueError(message)) { try ByteSize.parse(text) }
    }

    @Test("sizes format back")
    func formatSize() {
        #expect(ByteSize.format(256 << 20) == "256M")
        #expect(ByteSize.format(1536) == "1536")
        #expect(ByteSize.format(3 << 10) == "3K")
        #expect(ByteSize.format(0) == "0")
    }

    @Test("booleans", arguments: [
        ("yes", true), ("YES", true), ("true", true), ("On", true), ("1", true),
        ("no", false), ("False", false), ("off", false), ("0", false),
    ])
    func boolean(text: String, expected: Bool) throws {
        #expect(try BooleanValue.parse(text) == expected)
    }

    @Test("bad booleans")
    func badBoolean() {
        #expect(throws: ValueError("invalid boolean \"maybe\"; use yes or no")) { try BooleanValue.parse("maybe") }
        #expect(throws: ValueError("invalid boolean \"y\"; use yes or no")) { try BooleanValue.parse("y") }
    }

    @Test("JSON pointers (RFC 6901)", arguments: [
        ("", [String]()), ("/data", ["data"]), ("/data/items", ["data", "items"]), ("/a~1b", ["a/b"]),
        ("/m~0n", ["m~n"]), ("/", [""]), ("/a//b", ["a", "", "b"]), ("/~01", ["~1"]), ("/0", ["0"]),
    ])
    func pointer(text: String, tokens: [String]) throws {
        #expect(try JSONPointerSyntax.parse(text) == tokens)
        #expect(JSONPointerSyntax.format(tokens) == text)
    }

    @Test("bad JSON pointers", arguments: [
        ("data", "invalid JSON pointer \"data\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("/a~2", "invalid JSON pointer \"/a~2\": invalid escape \"~2\"; use ~0 for \"~\" and ~1 for \"/\""),
        ("/a~", "invalid JSON pointer \"/a~\": invalid escape \"~\"; use ~0 for \"~\" and ~1 for \"/\""),
    ])
    func badPointer(text: String, message: String) {
        #expect(throws: ValueError(message)) { try JSONPointerSyntax.parse(text) }
    }

    @Test("URLs", arguments: [
        ("http://localhost:3000/posts", "http", "localhost", true),
        ("HTTPS://example.com/items?x=1#frag", "https", "example.com", false),
        ("http://[::1]:8080/", "http", "[::1]", true),
        ("http://127.0.0.1/", "http", "127.0.0.1", true),
        ("file:///var/lib/data/posts.json", "file", "", false),
        ("file://localhost/srv/x.json", "file", "", false),
        ("file:/srv/x.json", "file", "", false),
    ])
    func url(text: String, scheme: String, host: String, loopback: Bool) throws {
        let url = try URLSyntax.parse(text, schemes: ["http", "https", "file"])
        #expect(url.scheme == scheme)
        #expect(url.host == host)
        #expect(url.isLoopback == loopback)
    }

    @Test("bad URLs", arguments: [
        ("ftp://example.com/x", "unsupported URL scheme \"ftp\"; use http, https or file"),
        ("example.com/posts", "invalid URL \"example.com/posts\": missing scheme; write it in full, e.g. http://example.com/items"),
        ("http:///posts", "invalid URL \"http:///posts\": missing host; write http://HOST/PATH"),
        ("http:example.com", "invalid URL \"http:example.com\": missing host; write http://HOST/PATH"),
        ("https://user:secret@example.com/", "invalid URL \"https://[redacted]@example.com/\": credentials (\"user:password@\") are not allowed in URLs; put a token in a credential and set BearerTokenCredential="),
        ("http://example.com:99999/", "invalid URL \"http://example.com:99999/\": invalid port \"99999\"; use a number from 1 to 65535"),
        ("http://example.com:/", "invalid URL \"http://example.com:/\": empty port; remove the \":\" or give a port number"),
        ("http://exa mple.com/", "invalid URL \"http://exa mple.com/\": contains a space or control character; percent-encode it (a space is %20)"),
        ("http://[::1/", "invalid URL \"http://[::1/\": unterminated IPv6 address; add \"]\""),
        ("file://server/x.json", "invalid URL \"file://server/x.json\": file URLs must be local; write file:///PATH"),
        ("file:relative.json", "invalid URL \"file:relative.json\": a file URL needs an absolute path, e.g. file:///var/lib/data/posts.json"),
    ])
    func badURL(text: String, message: String) {
        #expect(throws: ValueError(message)) { try URLSyntax.parse(text, schemes: ["http", "https", "file"]) }
    }
}
