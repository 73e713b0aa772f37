import Testing
@testable import SyncCore

@Suite("sources.d/*.source")
struct ConfigurationSourceTests {
    static func source(_ text: String, file: String = "sources.d/posts.source") -> SourceConfiguration? {
        ConfigurationFixture.configuration(main: nil, sources: [(file, text)])?.sources.first
    }

    static func problems(_ text: String, file: String = "posts.source") -> [String] {
        ConfigurationFixture.problems(main: nil, sources: [(file, text)])
    }

    @Test("a minimal source gets the defaults and the file stem as its name")
    func minimal() {
        let source = Self.source("# comment\n[Source]\nURL=http://localhost:3000/posts\n")
        #expect(source == SourceConfiguration(
            name: "posts", url: "http://localhost:3000/posts", idField: "id", versionField: nil, recordsPath: [],
            recordsPathText: "", pagination: .none, headers: [], bearerTokenCredential: nil, timeout: .seconds(30),
            maxBytes: 256 * 1024 * 1024, allowEmpty: false, writable: false, conflictPolicy: .serverWins,
            location: SourceLocation(file: "sources.d/posts.source", line: 2)))
    }

    @Test("every key is read")
    func everyKey() {
        let text = """
            [Source]
            Name=articles.v2
            URL=https://api.example.com/v2/articles?limit=100
            IDField=uuid
            VersionField=updatedAt
            RecordsPath=/data/a~1b
            Pagination=link
            Header=Accept: application/json
            Header=X-Client:   syncd  
            BearerTokenCredential=api-token
            TimeoutSec=1min
            MaxBytes=64M
            AllowEmpty=yes
            Writable=yes
            ConflictPolicy=last-write-wins
            """
        let source = Self.source(text)
        #expect(source == SourceConfiguration(
            name: "articles.v2", url: "https://api.example.com/v2/articles?limit=100", idField: "uuid",
            versionField: "updatedAt", recordsPath: ["data", "a/b"], recordsPathText: "/data/a~1b",
            pagination: .link,
            headers: [HTTPHeader(name: "Accept", value: "application/json"), HTTPHeader(name: "X-Client", value: "syncd")],
            bearerTokenCredential: "api-token", timeout: .seconds(60), maxBytes: 64 << 20, allowEmpty: true,
            writable: true, conflictPolicy: .lastWriteWins,
            location: SourceLocation(file: "sources.d/posts.source", line: 1)))
    }

    @Test("every conflict policy", arguments: ConflictPolicy.allCases)
    func policies(policy: ConflictPolicy) {
        #expect(Self.source("[Source]\nURL=http://h/\nConflictPolicy=\(policy.rawValue)\n")?.conflictPolicy == policy)
    }

    @Test("Header= accumulates; an empty Header= clears the list")
    func headers() {
        let text = "[Source]\nURL=http://h/\nHeader=A: 1\nHeader=B: 2\nHeader=\nHeader=C: 3\nHeader=D: x; y=z\n"
        #expect(Self.source(text)?.headers == [HTTPHeader(name: "C", value: "3"), HTTPHeader(name: "D", value: "x; y=z")])
    }

    @Test("empty values reset: Name= falls back to the file stem")
    func resets() {
        let text = "[Source]\nName=other\nName=\nURL=http://h/\nIDField=key\nIDField=\nRecordsPath=/x\nRecordsPath=\nMaxBytes=1K\nMaxBytes=\n"
        let source = Self.source(text)
        #expect(source?.name == "posts")
        #expect(source?.idField == "id")
        #expect(source?.recordsPath == [])
        #expect(source?.recordsPathText == "")
        #expect(source?.maxBytes == 256 << 20)
    }

    @Test("sources are sorted by name")
    func sorted() {
        let configuration = ConfigurationFixture.configuration(main: nil, sources: [
            ("b.source", "[Source]\nURL=http://h/b\n"),
            ("a.source", "[Source]\nName=zeta\nURL=http://h/z\n"),
            ("c.source", "[Source]\nURL=http://h/c\n"),
        ])
        #expect(configuration?.sources.map(\.name) == ["b", "c", "zeta"])
        #expect(configuration?.source(named: "zeta")?.url == "http://h/z")
    }

    @Test("source problems", arguments: [
        ("[Source]\n", "posts.source:1: missing URL=; set it to the collection's http, https or file URL"),
        ("# c\n[Source]\nIDField=id\n", "posts.source:2: missing URL=; set it to the collection's http, https or file URL"),
        ("", "posts.source:1: no [Source] section; a .source file describes one source: [Source] and at least URL="),
        ("# only comments\n", "posts.source:1: no [Source] section; a .source file describes one source: [Source] and at least URL="),
        ("URL=http://h/\n", "posts.source:1: key \"URL\" outside a section; put it below [Source]"),
        ("[Source]\nURL=ftp://h/x\n", "posts.source:2: URL: unsupported URL scheme \"ftp\"; use http, https or file"),
        ("[Source]\nURL=https://me:pw@h/x\n", "posts.source:2: URL: invalid URL \"https://[redacted]@h/x\": credentials (\"user:password@\") are not allowed in URLs; put a token in a credential and set BearerTokenCredential="),
        ("[Source]\nURL=http:///x\n", "posts.source:2: URL: invalid URL \"http:///x\": missing host; write http://HOST/PATH"),
        ("[Source]\nURL=http://h/\nName=a b\n", "posts.source:3: Name: invalid source name \"a b\": use 1 to 64 letters, digits, \"_\", \".\" or \"-\""),
        ("[Source]\nURL=http://h/\nName=..\n", "posts.source:3: Name: invalid source name \"..\": use 1 to 64 letters, digits, \"_\", \".\" or \"-\""),
        ("[Source]\nURL=http://h/\nIDfield=id\n", "posts.source:3: unknown key \"IDfield\" in [Source]; did you mean \"IDField\"? (keys are case-sensitive)"),
        ("[Source]\nURL=http://h/\nHeader=Authorization: Bearer x\n", "posts.source:3: Header: header \"Authorization\" is not allowed: secrets do not belong in configuration files; put the token in a credential and set BearerTokenCredential="),
        ("[Source]\nURL=http://h/\nHeader=host: example.com\n", "posts.source:3: Header: header \"Host\" is not allowed: it is taken from URL="),
        ("[Source]\nURL=http://h/\nHeader=NoColon\n", "posts.source:3: Header: invalid header: expected \"Name: value\" with a \":\" after the name, e.g. \"Accept: application/json\""),
        ("[Source]\nURL=http://h/\nHeader=Bad Name: x\n", "posts.source:3: Header: invalid header name \"Bad …\": use letters, digits and \"-\" with no space before the \":\", e.g. \"Accept: application/json\""),
        ("[Source]\nURL=http://h/\nHeader=X-Empty:\n", "posts.source:3: Header: header \"X-Empty\" has an empty value; give it a value or remove the line"),
        ("[Source]\nURL=http://h/\nHeader=X-Bad: a\rb\n", "posts.source:3: Header: header \"X-Bad\" must not contain line breaks"),
        ("[Source]\nURL=http://h/\nHeader=X-Bad: a\u{7}b\n", "posts.source:3: Header: header \"X-Bad\" contains a control character"),
        ("[Source]\nURL=http://h/\nBearerTokenCredential=../token\n", "posts.source:3: BearerTokenCredential: invalid credential name (not shown, in case it is a pasted token): give the plain file name inside $CREDENTIALS_DIRECTORY (no \"/\"), as in LoadCredential="),
        ("[Source]\nURL=http://h/\nBearerTokenCredential=..\n", "posts.source:3: BearerTokenCredential: invalid credential name (not shown, in case it is a pasted token): give the plain file name inside $CREDENTIALS_DIRECTORY (no \"/\"), as in LoadCredential="),
        ("[Source]\nURL=http://example.com/\nBearerTokenCredential=token\n", "posts.source:3: BearerTokenCredential= with a plain http URL to example.com would send the token unencrypted; use https"),
        ("[Source]\nURL=http://h/\nTimeoutSec=0\n", "posts.source:3: TimeoutSec: must be greater than 0, e.g. 30s"),
        ("[Source]\nURL=http://h/\nMaxBytes=0\n", "posts.source:3: MaxBytes: must be greater than 0, e.g. 64M"),
        ("[Source]\nURL=http://h/\nMaxBytes=lots\n", "posts.source:3: MaxBytes: invalid size \"lots\": expected a number, e.g. 512K or 64M"),
        ("[Source]\nURL=http://h/\nRecordsPath=data\n", "posts.source:3: RecordsPath: invalid JSON pointer \"data\": must be empty or start with \"/\" (RFC 6901), e.g. /data"),
        ("[Source]\nURL=http://h/\nRecordsPath=/a~2\n", "posts.source:3: RecordsPath: invalid JSON pointer \"/a~2\": invalid escape \"~2\"; use ~0 for \"~\" and ~1 for \"/\""),
        ("[Source]\nURL=http://h/\nConflictPolicy=newest\n", "posts.source:3: ConflictPolicy: invalid conflict policy \"newest\"; use server-wins, client-wins, last-write-wins or manual"),
        ("[Source]\nURL=http://h/\nPagination=next\n", "posts.source:3: Pagination: invalid pagination \"next\"; use none, link, body, cursor, page, offset or header"),
        ("[Source]\nURL=http://h/\nAllowEmpty=perhaps\n", "posts.source:3: AllowEmpty: invalid boolean \"perhaps\"; use yes or no"),
        ("[Source]\nURL=file:///srv/posts.json\nWritable=yes\n", "posts.source:3: Writable=yes is not possible with a file: URL; local changes can only be pushed over http or https"),
        ("[Source]\nURL=http://h/\n[Daemon]\nAccount=x\n", "posts.source:3: unknown section [Daemon]; [Daemon] belongs in syncd.conf"),
        ("[Source]\nURL=http://h/\n[Sauce]\nX=1\n", "posts.source:3: unknown section [Sauce]; a .source file has only [Source]"),
        ("[Source]\nURL=http://h/a\n[Source]\nURL=http://h/b\n", "posts.source:3: a second [Source] section; each .source file holds one source, put this one in its own file"),
    ])
    func problem(text: String, problem: String) {
        #expect(Self.problems(text) == [problem])
    }

    @Test("IDField= cannot be empty: an empty value restores id")
    func idFieldNeverEmpty() {
        #expect(Self.source("[Source]\nURL=http://h/\nIDField=\n")?.idField == "id")
    }

    @Test("tokens over plain http are fine to loopback", arguments: [
        "http://localhost:3000/posts", "http://127.0.0.1/x", "http://[::1]:3000/x", "https://example.com/x",
    ])
    func loopbackToken(url: String) {
        #expect(Self.problems("[Source]\nURL=\(url)\nBearerTokenCredential=token\n") == [])
    }

    @Test("an invalid file stem needs Name=")
    func invalidStem() {
        #expect(Self.problems("[Source]\nURL=http://h/\n", file: "sources.d/my posts.source") == [
            "sources.d/my posts.source:1: the file name gives the invalid source name \"my posts\"; rename the file or set Name= (1 to 64 letters, digits, \"_\", \".\" or \"-\")",
        ])
        #expect(Self.problems("[Source]\nName=posts\nURL=http://h/\n", file: "sources.d/my posts.source") == [])
    }

    @Test("a duplicate name is reported at the second definition, naming the first")
    func duplicates() {
        let problems = ConfigurationFixture.problems(main: nil, sources: [
            ("sources.d/a.source", "[Source]\nName=posts\nURL=http://h/a\n"),
            ("sources.d/posts.source", "# the real one\n[Source]\nURL=http://h/b\n"),
        ])
        #expect(problems == [
            "sources.d/posts.source:2: duplicate source name \"posts\" (first defined at sources.d/a.source:2); give one of them another Name=",
        ])
    }

    @Test("all problems of a source file are reported")
    func manyProblems() {
        #expect(Self.problems("[Source]\nURL=gopher://h/\nTimeoutSec=x\nWritable=maybe\n") == [
            "posts.source:2: URL: unsupported URL scheme \"gopher\"; use http, https or file",
            "posts.source:3: TimeoutSec: invalid time span \"x\": expected a number at \"x\"",
            "posts.source:4: Writable: invalid boolean \"maybe\"; use yes or no",
        ])
    }

    @Test("file stems", arguments: [
        ("posts.source", "posts"), ("/etc/syncd/sources.d/posts.source", "posts"), ("a.b.source", "a.b"),
        ("noext", "noext"),
    ])
    func stems(path: String, name: String) {
        #expect(SourceConfiguration.defaultName(forFile: path) == name)
    }
}
