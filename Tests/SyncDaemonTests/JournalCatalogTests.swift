import Foundation
import Testing
@testable import SyncSystem

/// packaging/systemd/syncd.catalog, what `journalctl -x` adds to syncd's messages (docs/syncd.8.md, LOGGING and FILES):
/// one entry for every `LogMessageID`, none for an ID syncd does not log.
@Suite("Journal message catalog")
struct JournalCatalogTests {
    /// One catalog entry: its `-- ID` line's ID, its header fields and its text.
    struct Entry {
        var id: String
        var headers: [String: String] = [:]
        var text: [String] = []
    }

    static func entries() throws -> [Entry] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let catalog = try String(contentsOf: root.appendingPathComponent("packaging/systemd/syncd.catalog"), encoding: .utf8)
        var entries: [Entry] = []
        var inHeader = false
        for line in catalog.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("-- ") {
                entries.append(Entry(id: String(line.dropFirst(3))))
                inHeader = true
            } else if entries.isEmpty {
                #expect(line.isEmpty || line.hasPrefix("#"), "only comments before the first entry: \(line)")
            } else if inHeader && line.isEmpty {
                inHeader = false
            } else if inHeader {
                let colon = try #require(line.firstIndex(of: ":"), "a header line is NAME: value: \(line)")
                entries[entries.count - 1].headers[String(line[..<colon])] =
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            } else {
                entries[entries.count - 1].text.append(line)
            }
        }
        return entries
    }

    @Test("every MESSAGE_ID syncd logs has exactly one entry, and the catalog has no other")
    func everyIDOnce() throws {
        let ids = try Self.entries().map(\.id)
        #expect(ids.sorted() == LogMessageID.allCases.map(\.rawValue).sorted())
        #expect(Set(ids).count == ids.count)
    }

    @Test("each entry says what happened (Subject=, text) and what to do (a command to run), defined by syncd")
    func entriesExplain() throws {
        for entry in try Self.entries() {
            #expect(entry.headers["Subject"]?.isEmpty == false, "\(entry.id)")
            #expect(entry.headers["Defined-By"] == "syncd", "\(entry.id)")
            #expect(entry.headers["Documentation"]?.hasPrefix("man:") == true, "\(entry.id)")
            let text = entry.text.joined(separator: "\n")
            #expect(text.split(separator: " ").count > 30, "\(entry.id): \(text)")
            #expect(["syncctl ", "systemctl ", "journalctl ", "syncd --check-config"].contains { text.contains($0) }, "\(entry.id)")
            // journalctl replaces @FIELD@ with the entry's fields: only ones syncd sets.
            let fields = text.split(separator: "@", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            #expect(fields.allSatisfy { ["SYNCD_SOURCE", "CONFIG_FILE", "CONFIG_LINE"].contains(String($0)) }, "\(entry.id): \(fields)")
        }
    }

    @Test("the refresh-failed entry's commands name the failed source (journalctl puts its SYNCD_SOURCE= in)")
    func refreshFailedNamesTheSource() throws {
        let entry = try #require(try Self.entries().first { $0.id == LogMessageID.refreshFailed.rawValue })
        let commands = entry.text.filter { $0.hasPrefix("    ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(commands == ["syncctl status @SYNCD_SOURCE@", "journalctl -u syncd SYNCD_SOURCE=@SYNCD_SOURCE@",
                             "syncctl refresh @SYNCD_SOURCE@"])
    }
}
