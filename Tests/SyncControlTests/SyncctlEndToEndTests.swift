import Foundation
import Testing
import SyncControl

/// Runs the built `syncctl` binary against a ControlServer with the fake handler.
@Suite("syncctl end to end", .serialized, .system)
struct SyncctlEndToEndTests {
    /// `syncctl` next to the test bundle in the build directory.
    static let binary: String? = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("syncctl").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    func syncctl(_ fixture: ControlServerFixture, _ arguments: [String], stdin: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = try #require(SyncctlEndToEndTests.binary, "build syncctl first (swift build)")
        return try await onThread {
            try runProcess(binary, ["--socket", fixture.path] + arguments, environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC"], stdin: stdin)
        }
    }

    @Test("outbox --drop says what the cache file shows of the record now", arguments: [
        (1, "Dropped outbox entry 1; the cache shows the server's version of its record again.\n"),
        (2, "Dropped outbox entry 2; the cache shows the newer local change of its record.\n"),
        (3, "Dropped outbox entry 3; its record is removed from the local view, as the server's listing does not have it.\n"),
        (4, "Dropped outbox entry 4; the cache shows the server's version of its record again.\n"),  // an older daemon
    ])
    func drop(seq: Int, expected: String) async throws {
        let fixture = try ControlServerFixture()
        let dropped = try await syncctl(fixture, ["outbox", "--drop", String(seq)])
        #expect(dropped.status == 0 && dropped.stdout == expected && dropped.stderr == "")
    }

    @Test func commandsAgainstTheServer() async throws {
        let fixture = try ControlServerFixture()
        let status = try await syncctl(fixture, ["status", "--json"])
        #expect(status.status == 0)
        #expect(try JSONValue(parsing: status.stdout) == .object(FakeControlHandler.status.json))
        #expect(status.stdout == JSONValue.object(FakeControlHandler.status.json).serialized() + "\n")
        let pretty = try await syncctl(fixture, ["status", "--json=pretty"])
        #expect(pretty.stdout.hasPrefix("{\n  \"daemon\": {\n    \"version\": \"1.0.0\","))
        let human = try await syncctl(fixture, ["status"])
        #expect(human.stdout.hasPrefix("● syncd — online (links: routable, reachable: yes), account default, up 12s\n"))
        #expect(!human.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")

        let list = try await syncctl(fixture, ["list", "posts", "--json"])
        #expect(list.status == 0)
        let records = try JSONValue(parsing: list.stdout).arrayValue ?? []
        #expect(records.count == FakeControlHandler.recordCount)
        #expect(records.last?["id"] == .integer(12_345_678_900_000 + Int64(FakeControlHandler.recordCount - 1)))
        let table = try await syncctl(fixture, ["list", "posts", "--no-legend"])
        #expect(table.stdout.split(separator: "\n").first == #"12345678900000  {"id":12345678900000,"title":"Post 0"}"#)

        let get = try await syncctl(fixture, ["get", "posts", "12345678900007"])
        #expect(get.stdout == #"{"id":12345678900007,"title":"Post 7"}"# + "\n")
        let missing = try await syncctl(fixture, ["get", "posts", "nope"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "syncctl: no record with ID nope in source posts\n")

        let refresh = try await syncctl(fixture, ["refresh", "posts", "--wait"])
        #expect(refresh.status == 0)
        #expect(refresh.stdout == "posts: updated, 12,000 records\n")
        let broken = try await syncctl(fixture, ["refresh", "broken", "--wait"])
        #expect(broken.status == 1)
        #expect(broken.stderr == "syncctl: refresh of broken failed: HTTP 503\n")
        // Every source: each outcome printed, each failure named on stderr, exit 1.
        let all = try await syncctl(fixture, ["refresh", "--wait"])
        #expect(all.status == 1)
        #expect(all.stdout == "posts: updated, 12,000 records\n")
        #expect(all.stderr == "syncctl: refresh of broken failed: HTTP 503\nsyncctl: refresh of users failed: timed out\n")
        let allJSON = try await syncctl(fixture, ["refresh", "--wait", "--json"])
        #expect(allJSON.status == 1)
        #expect(try JSONValue(parsing: allJSON.stdout) == [
            ["source": "broken", "records": 4, "result": "failed", "error": "HTTP 503"],
            ["source": "posts", "state": "idle", "records": 12_000, "result": "updated"],
            ["source": "users", "records": 0, "result": "failed", "error": "timed out"]])
        #expect(allJSON.stderr == all.stderr)
        let oneJSON = try await syncctl(fixture, ["refresh", "posts", "--wait", "--json"])
        #expect(try JSONValue(parsing: oneJSON.stdout) == ["source": "posts", "state": "idle", "records": 12_000, "result": "updated"])

        let put = try await syncctl(fixture, ["put", "posts"], stdin: #"{"id": "abc", "title": "x"}"#)
        #expect(put.status == 0 && put.stdout == "abc\n")
        let badPut = try await syncctl(fixture, ["put", "posts", "-"], stdin: "[1]")
        #expect(badPut.status == 1 && badPut.stderr == "syncctl: standard input: expected one JSON object\n")

        let reload = try await syncctl(fixture, ["reload"])
        #expect(reload.status == 1)
        #expect(reload.stderr.contains("does not support io.syncd.Manager.Reload"))
        await fixture.stop()
    }

    /// `syncctl status SOURCE`: the source in full, its outbox from ListOutbox; a mistyped name and an outbox
    /// reply of the wrong shape fail with exit status 1 and say why.
    @Test func statusOfOneSource() async throws {
        let fixture = try ControlServerFixture()
        let posts = try await syncctl(fixture, ["status", "posts"])
        #expect(posts.status == 0 && posts.stderr.isEmpty, "\(posts.stderr)")
        let lines = posts.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 12)
        #expect(Array(lines.prefix(3)) == ["● posts — idle", "         URL: http://localhost:3000/posts",
                                           "     Records: 2,500 cached, 0 pending, 0 parked, 0 conflicts"])
        // The times are the daemon's, then their age by the real clock.
        #expect(lines[3].hasPrefix("Last success: 2026-11-29T10:00:00Z (") && lines[3].hasSuffix(" ago)"))
        #expect(lines[4].hasPrefix("Last attempt: 2026-11-29T10:00:00Z (") && lines[4].hasSuffix(" ago)"))
        #expect(Array(lines[5...]) == [
            "       Error: none",
            "    Next try: at the next periodic refresh",
            "        Mode: writable (ConflictPolicy=server-wins), Pagination=link",
            "  Cache file: /var/cache/syncd/default/posts.json",
            "      Outbox: 1 change (1 parked); 'syncctl outbox posts' lists them",
            "              parked update of 7 (outbox 3): HTTP 422 from PUT http://localhost:3000/posts/7: title is required",
            "",
        ])
        let json = try await syncctl(fixture, ["status", "posts", "--json"])
        #expect(try JSONValue(parsing: json.stdout) == .object(FakeControlHandler.status.sources[0].json))

        let mistyped = try await syncctl(fixture, ["status", "post"])
        #expect(mistyped.status == 1 && mistyped.stdout.isEmpty)
        #expect(mistyped.stderr == "syncctl: no such source: post; did you mean 'posts'?\n")

        let damaged = try await syncctl(fixture, ["status", "damaged"])
        #expect(damaged.status == 1 && damaged.stdout.isEmpty)
        #expect(damaged.stderr == "syncctl: unexpected reply from syncd: field 'entries[0].seq' missing or of the wrong type\n")
        await fixture.stop()
    }
}

@Suite("syncctl packaging")
struct SyncctlPackagingTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test  // scdoc comes from make deps
    func manPageBuilds() throws {
        let result = try runProcess("/bin/sh", ["-c", "scdoc < '\(Self.root)/docs/syncctl.1.md' > /dev/null"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// syncctl(1) lists every command with the same arguments as its `--help` usage line.
    @Test func manPageListsEveryCommandAsItsHelpDoes() throws {
        let page = try String(contentsOfFile: Self.root + "/docs/syncctl.1.md", encoding: .utf8)
        // scdoc markup off: *bold* and _underline_.
        let headers = Set(page.split(separator: "\n").map { $0.replacingOccurrences(of: "*", with: "").replacingOccurrences(of: "_", with: "") })
        for command in syncctlCommands {
            let usage = String(command.configuration.usage.dropFirst("syncctl ".count))
            #expect(headers.contains(usage), "syncctl(1) has no entry '\(usage)'")
            #expect(page.contains(command.configuration.name), "syncctl(1) does not describe \(command.configuration.name)")
        }
    }

    @Test func completionParsesAndNamesEveryCommand() throws {
        let path = Self.root + "/packaging/completion/syncctl.bash"
        let result = try runProcess("/bin/bash", ["-n", path])
        #expect(result.status == 0, "\(result.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for command in syncctlCommands { #expect(text.contains(command.configuration.name)) }
    }
}
