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
            == "HTTP 500 from https://example.com/posts?api_key=[redacted]&page=[redacted]#[redacted]: oops")
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

@Suite("Redaction of mistyped secrets in configuration problems (review of issue 23, finding 1)")
struct MalformedConfigurationRedactionTests {
    static func sourceProblems(_ line: String) -> [String] {
        ConfigurationFixture.problems(main: nil, sources: [("b2.source", "[Source]\nName=b2\n\(line)\n")])
    }

    @Test(arguments: [
        // The reviewer's values: a missing colon, one slash, a password with "/" (read as a port), a space.
        ("URL=https//deploy:PwSecret222@example.com/posts", "PwSecret222",
         "b2.source:3: URL: invalid URL \"https//[redacted]@example.com/posts\": missing scheme; write it in full, e.g. http://example.com/items"),
        ("URL=https:/deploy:PwSecret333@example.com/posts", "PwSecret333",
         "b2.source:3: URL: invalid URL \"https:/[redacted]@example.com/posts\": missing host; write https://HOST/PATH"),
        ("URL=https://deploy:Pw/Secret444@example.com/posts", "Secret444",
         "b2.source:3: URL: invalid URL \"https://[redacted]@example.com/posts\": invalid port; use a number from 1 to 65535 (the \"@\" later "
             + "in the URL suggests user information: credentials (\"user:password@\") are not allowed in URLs; put a token in a credential "
             + "and set BearerTokenCredential=)"),
        ("URL=https://deploy:Pw Secret121@example.com/posts", "Secret121",
         "b2.source:3: URL: invalid URL \"https://[redacted]@example.com/posts\": contains a space or control character; percent-encode it (a space is %20)"),
        ("URL=https://h/x\nItemURL=https:/deploy:PwSecretI1@example.com/posts/{id}", "PwSecretI1",
         "b2.source:4: ItemURL: invalid URL \"https:/[redacted]@example.com/posts/0\": missing host; write https://HOST/PATH"),
        ("URL=https://h/x\nAllowedOrigins=https://cdn.example.com/u:PwSecretO1@x", "PwSecretO1",
         "b2.source:4: AllowedOrigins: invalid origin \"https://[redacted]@x\"; write scheme://host or scheme://host:port, e.g. https://cdn.example.com"),
    ])
    func aMalformedURLShowsNoPassword(_ line: String, _ secret: String, _ problem: String) {
        let problems = Self.sourceProblems(line)
        #expect(problems == [problem])
        #expect(!problems.joined().contains(secret))
        #expect(!problems.joined().contains("Pw"))
    }

    @Test func aMalformedReachabilityURLShowsNoPassword() {
        let problems = ConfigurationFixture.problems(main: "[Network]\nReachabilityURL=https:/probe:PwSecretR1@example.com/\n")
        #expect(problems == ["syncd.conf:2: ReachabilityURL: invalid URL \"https:/[redacted]@example.com/\": missing host; write https://HOST/PATH"])
    }

    @Test(arguments: [
        ("Header=X-Api-Key HdrSecret555",
         "b2.source:4: Header: invalid header \"X-Api-Key …\": expected \"Name: value\" with a \":\" after the name, e.g. \"Accept: application/json\""),
        ("Header X-Api-Key: HdrSecret666",
         "b2.source:4: expected \"Key=Value\", a [Section] header or a comment, not a line starting \"Header\""),
        // One word may be the secret itself: not quoted at all.
        ("Header=HdrSecret777", "b2.source:4: Header: invalid header: expected \"Name: value\" with a \":\" after the name, e.g. \"Accept: application/json\""),
        ("HdrSecret888", "b2.source:4: expected \"Key=Value\", a [Section] header or a comment"),
        // A space in the name: only its first word.
        ("Header=X-Api-Key HdrSecret999: x", "b2.source:4: Header: invalid header name \"X-Api-Key …\": use letters, digits and \"-\" with no "
             + "space before the \":\", e.g. \"Accept: application/json\""),
        // A key with a space before "=" (base64 padding of a pasted token): the first word only.
        ("Authorization Bearer HdrSecret000==", "b2.source:4: invalid key \"Authorization …\": keys have no spaces"),
        // An unknown key's name is quoted, never its value.
        ("ApiKey=HdrSecretAAA", "b2.source:4: unknown key \"ApiKey\" in [Source]; known keys: "),
        // A token pasted as the credential's name is not quoted.
        ("BearerTokenCredential=tkn_S3cr3t/Ab+Cd=Ef9xyz", "b2.source:4: BearerTokenCredential: invalid credential name (not shown, "
             + "in case it is a pasted token): give the plain file name inside $CREDENTIALS_DIRECTORY (no \"/\"), as in LoadCredential="),
    ])
    func aMistypedLineQuotesOnlyItsName(_ line: String, _ problem: String) {
        // After a valid URL=, on line 4.
        let problems = Self.sourceProblems("URL=https://h/x\n" + line)
        #expect(problems.count == 1 && problems[0].hasPrefix(problem), "\(problems)")
        #expect(!problems.joined().contains("Secret"))
    }
}

@Suite("Redaction: encoded forms, cookies, URL parts (review of issue 23, findings 3, 4, 7)")
struct RedactionReviewTests {
    static let token = "tkn_S3cr3t/Ab+Cd=Ef9xyz"
    static let redaction = Redaction(source: SourceConfiguration(name: "p", url: "https://api.example.com/p", location: RedactionTests.location),
                                     token: token)

    static func base64(_ text: String) -> String { Base64.encode(Array(text.utf8)) }

    @Test(arguments: [
        // Python's urllib.parse.quote (keeps "/"), both hex cases; encodeURIComponent; a path's pchar set.
        "tkn_S3cr3t/Ab%2BCd%3DEf9xyz", "tkn_S3cr3t/Ab%2bCd%3dEf9xyz", "tkn_S3cr3t%2FAb%2BCd%3DEf9xyz", "tkn_S3cr3t%2FAb+Cd=Ef9xyz",
        // JSON escapes of "/".
        #"tkn_S3cr3t\/Ab+Cd=Ef9xyz"#, #"tkn_S3cr3t\u002fAb+Cd=Ef9xyz"#, #"tkn_S3cr3t\u002FAb+Cd=Ef9xyz"#,
    ])
    func moreEncodingsOfTheTokenAreReplaced(_ form: String) {
        #expect(Self.redaction.redacting("the server said: \(form) (end)") == "the server said: [redacted] (end)")
    }

    @Test(arguments: ["Bearer " + token, "Authorization: Bearer " + token, token, "x" + token + "yz", "ab" + token + "\r\nAccept: */*"])
    func base64OfTheTokenAtAnyOffsetIsHidden(_ text: String) {
        for encoded in [Self.base64(text), Self.base64(text).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.reduce("") { $0 + String($1) }] {
            let out = Self.redaction.redacting(#"{"detail": "bad credentials \#(encoded)"}"#)
            #expect(out.contains("[redacted]"), "\(text)")
            // What is left around the mark says nothing of the token: it does not decode to any piece of it.
            #expect(!out.contains(Self.base64(Self.token).prefix(8)))
            #expect(out.count < #"{"detail": "bad credentials "}"#.count + encoded.count)
        }
    }

    @Test func aNonASCIISecretIsHiddenInJSONEscapes() {
        let redaction = Redaction(secrets: ["pässwört/1"])
        #expect(redaction.redacting(#"{"echo": "p\u00e4ssw\u00f6rt\/1"}"#) == #"{"echo": "[redacted]"}"#)
        #expect(redaction.redacting(#"{"echo": "p\u00E4ssw\u00F6rt\u002f1"}"#) == #"{"echo": "[redacted]"}"#)
    }

    @Test func eachCookieValueIsASecretOfItsOwn() {
        let source = SourceConfiguration(name: "p", url: "https://h/p", headers: [HTTPHeader(name: "Cookie", value: "theme=dark1; sid=CookieVal98765")],
                                         location: RedactionTests.location)
        let redaction = Redaction(source: source, token: nil)
        #expect(redaction.redacting("invalid session CookieVal98765") == "invalid session [redacted]")
        #expect(redaction.redacting("theme dark1") == "theme [redacted]")
        // A credential header's name=value pairs too, quoted ones without their quotes.
        let signed = SourceConfiguration(name: "p", url: "https://h/p", headers: [HTTPHeader(name: "X-Signature", value: #"keyId="k1", sig="SigVal4321""#)],
                                         location: RedactionTests.location)
        #expect(Redaction(source: signed, token: nil).redacting("bad signature SigVal4321") == "bad signature [redacted]")
    }

    @Test func fragmentsHideCredentialValuesAndFromEveryoneEverything() {
        let text = "GET https://h/frag?x=1#access_token=FragSecret42&state=s1 failed"
        #expect(Redaction.scrubbingURLs(in: text) == "GET https://h/frag?x=1#access_token=[redacted]&state=s1 failed")
        #expect(Redaction.scrubbingURLs(in: text, for: .everyone) == "GET https://h/frag?x=[redacted]#[redacted] failed")
        let redaction = Redaction(source: SourceConfiguration(name: "p", url: "https://h/frag?x=1#access_token=FragSecret42",
                                                              location: RedactionTests.location), token: nil)
        #expect(redaction.redacting("token FragSecret42 expired") == "token [redacted] expired")
    }

    @Test func matrixParametersAreHiddenLikeQueryParameters() {
        let url = "https://h/k2;api_key=MatrixSecret42;v=3/items?pass=PassSecret42"
        #expect(Redaction.scrubbingURLs(in: "HTTP 500 from \(url): oops")
            == "HTTP 500 from https://h/k2;api_key=[redacted];v=3/items?pass=[redacted]: oops")
        #expect(Redaction.scrubbingURLs(in: "HTTP 500 from \(url): oops", for: .everyone)
            == "HTTP 500 from https://h/k2;api_key=[redacted];v=[redacted]/items?pass=[redacted]: oops")
        let redaction = Redaction(source: SourceConfiguration(name: "p", url: url, location: RedactionTests.location), token: nil)
        #expect(redaction.redacting("MatrixSecret42 PassSecret42") == "[redacted] [redacted]")
    }

    @Test(arguments: [("pass", true), ("pw", true), ("passwd", true), ("PW", true), ("compass", false), ("passage", false),
                      ("pwd", true), ("passes", false), ("bypass", false)])
    func exactCredentialNames(_ name: String, _ isCredential: Bool) {
        #expect(Redaction.isCredentialName(name) == isCredential)
    }

    @Test func aMalformedURLIsQuotedWithoutItsUserinfo() {
        #expect(Redaction.quotingMalformedURL("https//u:p4ss@h/x") == "https//[redacted]@h/x")
        #expect(Redaction.quotingMalformedURL("u:p4ss@h/x") == "u:[redacted]@h/x")
        #expect(Redaction.quotingMalformedURL("p4ss@h") == "[redacted]@h")
        #expect(Redaction.quotingMalformedURL("https:/h/x?api_key=K3y1&page=2") == "https:/h/x?api_key=[redacted]&page=2")
        #expect(Redaction.quotingMalformedURL("https//h/x") == "https//h/x")
    }
}
