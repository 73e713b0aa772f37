import Testing
@testable import SyncCore

@Suite("OriginPolicy: where requests and the token may go")
struct OriginPolicyTests {
    @Test("origins compare scheme, host and port, with default ports", arguments: [
        ("http://Example.com/a", "http://example.com:80/b", true),
        ("https://example.com/a", "https://example.com:443/", true),
        ("https://example.com/a", "http://example.com/a", false),
        ("http://127.0.0.1:8000/a", "http://127.0.0.2:8000/a", false),
        ("http://127.0.0.1:8000/a", "http://127.0.0.1:8001/a", false),
        ("http://[::1]:80/a", "http://[::1]/b", true),
    ])
    func sameOrigin(first: String, second: String, same: Bool) {
        #expect((URLOrigin(url: first) == URLOrigin(url: second)) == same)
    }

    @Test("URL='s origin gets the token; nothing else does")
    func token() {
        let policy = OriginPolicy(configuredURL: "https://api.example.com/v1/items?page=1")
        #expect(policy.decide("https://api.example.com/v1/items?page=2") == .allowed(sendToken: true))
        #expect(policy.decide("https://API.example.com:443/other") == .allowed(sendToken: true))
        guard case .refused(let reason) = policy.decide("https://evil.example.net/page2") else {
            Issue.record("another host was allowed")
            return
        }
        #expect(reason.contains("AllowedOrigins="))
        guard case .refused = policy.decide("http://api.example.com/v1/items") else {
            Issue.record("a downgrade to http was allowed")
            return
        }
    }

    @Test("AllowedOrigins= lets pages go there, without the token")
    func allowed() {
        let cdn = URLOrigin(scheme: "https", host: "cdn.example.com", port: 443)
        let policy = OriginPolicy(configuredURL: "https://api.example.com/items", extraOrigins: [cdn])
        #expect(policy.decide("https://cdn.example.com/items?page=2") == .allowed(sendToken: false))
        #expect(policy.decide("https://api.example.com/items?page=2") == .allowed(sendToken: true))
    }

    @Test("file: only the one URL= names; other schemes never", arguments: [
        "file:///etc/passwd", "file:///var/lib/data/posts.json.bak", "ftp://api.example.com/x", "gopher://h/", "javascript:alert(1)",
        "http://user:pw@api.example.com/items",
    ])
    func refused(url: String) {
        let file = OriginPolicy(configuredURL: "file:///var/lib/data/posts.json")
        let web = OriginPolicy(configuredURL: "http://api.example.com/items")
        #expect(file.decide(url) != .allowed(sendToken: false) && file.decide(url) != .allowed(sendToken: true))
        #expect(web.decide(url) != .allowed(sendToken: false) && web.decide(url) != .allowed(sendToken: true))
        #expect(file.decide("file:///var/lib/data/posts.json") == .allowed(sendToken: false))
    }
}
