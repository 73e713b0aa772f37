import Foundation
import Testing
@testable import SyncStore

@Suite("Database")
struct DatabaseTests {
    @Test("strings returns the first column of every row in order, leaving NULL rows out")
    func stringsReadsOneTextColumn() throws {
        let temporary = try TemporaryStore()
        let database = try Database(path: temporary.directory + "/strings.db")
        defer { database.close() }
        try database.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT, w TEXT)")
        try database.execute("INSERT INTO t (k, v, w) VALUES (1, 'b', 'x'), (2, NULL, 'y'), (3, 'a', 'z'), (4, '', NULL)")
        #expect(try database.strings("SELECT v FROM t ORDER BY k") == ["b", "a", ""])
        #expect(try database.strings("SELECT v FROM t WHERE v IS NOT NULL ORDER BY v") == ["", "a", "b"])
        #expect(try database.strings("SELECT v FROM t WHERE k > 10").isEmpty)
        #expect(throws: SQLiteError.self) { try database.strings("SELECT nothing FROM t") }
    }
}
