import Testing
@testable import SyncCore

@Suite("Redaction")
struct RedactionTests {
    static let token = "s3cr3t-T0ken/with+chars="
    static let location = SourceLocation(file: "posts.source", line: 1)

    static func source(url: String = "https://api.example.com/posts", headers: [HTTPHeader] = []) -> SourceConfiguration {
        SourceConfiguration(name: "posts", url: url, headers: headers, location: location)
    }

    @Test func tokenInABodyIsReplacedWhereverItOccurs() {
        let redaction = Redaction(source: Self.source(), token: Self.token)
        let body = #"{"detail": "invalid token \#(Self.token)", "echo": "Authorization: Bearer \#(Self.token)"}"#
        #expect(redaction.redacting(body)
            == #"{"detail": "invalid token [redacted]", "echo": "Authorization: Bearer [redacted]"}"#)
    }

    @Test(arguments: [
        // Percent-encoded, both hex cases; form-encoded; JSON-escaped ("/" as "\/"); base64.
        "s3cr3t-T0ken%2Fwith%2Bchars%3D", "s3cr3t-T0ken%2fwith%2bchars%3d", #"s3cr3t-T0ken\/with+chars="#,
        String(Base64.encode(Array(token.utf8)).prefix { $0 != "=" }),
    ])
    func encodedFormsOfTheTokenAreReplaced(_ form: String) {
        let redaction = Redaction(source: Self.source(), token: Self.token)
        let text = "the server said: \(form) (end)"
        #expect(redaction.redacting(text) == "the server said: [redacted] (end)")
    }

    @Test func aTokenCutAtTheEndOfAnExcerptIsHiddenToo() {
        let redaction = Redaction(source: Self.source(), token: Self.token)
        #expect(redaction.redactingCut("invalid token s3cr3t-T0k") == "invalid token [redacted]")
        // Fewer than four characters of it say nothing: left alone.
        #expect(redaction.redactingCut("invalid token s3c") == "invalid token s3c")
        // A whole text is not cut: nothing to guess.
        #expect(redaction.redacting("invalid token s3cr3t-T0k") == "invalid token s3cr3t-T0k")
    }

    @Test func userinfoOfAnyURLIsHidden() {
        let text = #"invalid URL "https://deploy:PASSWORD@example.com/items?x=1": credentials are not allowed"#
        #expect(Redaction.scrubbingURLs(in: text)
            == #"invalid URL "https://[redacted]@example.com/items?x=1": credentials are not allowed"#)
        // The source's own userinfo is a secret wherever it appears, not only inside the URL.
        let redaction = Redaction(source: Self.source(url: "https://deploy:PASSWORD@example.com/items"), token: nil)
        #expect(redaction.redacting("login for deploy failed (PASSWORD)") == "login for deploy failed ([redacted])")
    }

    @Test func credentialQueryValuesAreHiddenFromEveryoneAndAllQueryValuesFromUnprivilegedCallers() {
        let url = "https://example.com/posts?api_key=K3yValue&page=2#top"
        #expect(Redaction.scrubbingURLs(in: "HTTP 500 from \(url): oops", for: .privileged)
            == "HTTP 500 from https://example.com/posts?api_key=[redacted]&page=2#top: oops")
        #expect(Redaction.scrubbingURLs(in: "HTTP 500 from \(url): oops", for: .everyone)
            == "HTTP 500 from https://example.com/posts?api_key=[redacted]&page=[redacted]#top: oops")
        // The key's value is one of the source's secrets: also hidden where the server repeats it, decoded too.
        let redaction = Redaction(source: Self.source(url: "https://example.com/posts?access_token=ab%2Bcd12"), token: nil)
        #expect(redaction.redacting("unknown key ab+cd12") == "unknown key [redacted]")
    }

    @Test(arguments: [
        ("api_key", true), ("apikey", true), ("X-Api-Key", true), ("access_token", true), ("Authorization", true),
        ("Cookie", true), ("client_secret", true), ("password", true), ("sig", true), ("page", false), ("limit", false),
        ("Accept", false), ("cursor", false), ("author", false), ("authors", false), ("X-Auth-Token", true), ("oauth_nonce", true),
        ("Proxy-Authorization", true),
    ])
    func credentialNames(_ name: String, _ isCredential: Bool) {
        #expect(Redaction.isCredentialName(name) == isCredential)
    }

    @Test func credentialHeadersAreSecretsAndOthersAreNot() {
        let headers = [HTTPHeader(name: "X-Api-Key", value: "hdr-key-1234"), HTTPHeader(name: "Accept-Language", value: "en-GB"),
                       HTTPHeader(name: "Authorization", value: "Basic " + Base64.encode(Array("deploy:pw-5678".utf8)))]
        let redaction = Redaction(source: Self.source(headers: headers), token: nil)
        #expect(redaction.redacting("X-Api-Key: hdr-key-1234; Accept-Language: en-GB") == "X-Api-Key: [redacted]; Accept-Language: en-GB")
        #expect(redaction.redacting("password pw-5678 rejected") == "password [redacted] rejected")
    }

    @Test func shortSecretsAreNotReplacedInPlainText() {
        let redaction = Redaction(secrets: ["abc"])
        #expect(redaction.forms.isEmpty)
        #expect(redaction.redacting("abc abc") == "abc abc")
    }

    @Test func textWithoutSecretsOrURLsIsUnchanged() {
        let redaction = Redaction(source: Self.source(), token: Self.token)
        let text = "HTTP 404 from file:///srv/posts.json: check URL= (mailto:a@b)"
        #expect(redaction.redacting(text) == text)
        #expect(redaction.redacting(text, for: .everyone) == text)
    }

    @Test func redactingTwiceChangesNothingMore() {
        let redaction = Redaction(source: Self.source(url: "https://u:p4ss@example.com/x?token=abcd1234"), token: Self.token)
        let once = redaction.redacting("https://u:p4ss@example.com/x?token=abcd1234 said \(Self.token)", for: .everyone)
        #expect(once == "https://[redacted]@example.com/x?token=[redacted] said [redacted]")
        #expect(redaction.redacting(once, for: .everyone) == once)
    }

    @Test func base64RoundTrips() {
        for text in ["", "a", "ab", "abc", "deploy:pw-5678"] {
            #expect(Base64.decode(Base64.encode(Array(text.utf8))) == text)
        }
        #expect(Base64.encode(Array("Man".utf8)) == "TWFu")
        #expect(Base64.encode(Array("Ma".utf8)) == "TWE=")
    }
}

@Suite("Redaction in configuration problems")
struct ConfigurationProblemRedactionTests {
    @Test func aProblemQuotingAURLShowsNoPassword() {
        let text = "[Source]\nName=posts\nURL=https://deploy:PASSWORD@example.com/posts?api_key=K3yValue\n"
        #expect(ConfigurationFixture.problems(main: nil, sources: [("posts.source", text)]) == [
            "posts.source:3: URL: invalid URL \"https://[redacted]@example.com/posts?api_key=[redacted]\": credentials "
                + "(\"user:password@\") are not allowed in URLs; put a token in a credential and set BearerTokenCredential=",
        ])
    }
}
