#if canImport(Glibc)
import Glibc
#endif
import Foundation  // Process: chattr(1) for a directory that even root cannot change
import SyncCore
import SyncSystem
import Testing
@testable import SyncDaemon

/// Logout's recursive removal (AccountErasure) on real directories in /tmp.
@Suite("DirectoryTree")
struct DirectoryTreeTests {
    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test("empties a folder and keeps it: files, temporaries and subfolders go, the folder and its inode stay")
    func removesContentsKeepingTheFolder() throws {
        let temporary = try TemporaryConfigurationDirectory()
        defer { temporary.remove() }
        let account = temporary.path + "/default"
        try temporary.write("default/posts.json", "[]")
        try temporary.write("default/.posts.json.tmp-1", "[")
        temporary.makeDirectory("default/a")
        try temporary.write("default/a/deep.json", "{}")
        var before = stat()
        #expect(lstat(account, &before) == 0)
        try DirectoryTree.removeContents(of: account)
        var after = stat()
        #expect(lstat(account, &after) == 0 && after.st_ino == before.st_ino, "the same folder, so a watch on it goes on")
        #expect(try FileManager.default.contentsOfDirectory(atPath: account).isEmpty)
        try DirectoryTree.removeContents(of: temporary.path + "/missing")    // nothing to do
        #expect(symlink(temporary.path, temporary.path + "/link") == 0)
        try DirectoryTree.removeContents(of: temporary.path + "/link")       // a link goes itself, never followed
        #expect(!exists(temporary.path + "/link") && exists(account))
    }

    @Test("removes a nested tree: files, empty and full directories, a name that is not UTF-8")
    func removesNestedTree() throws {
        let temporary = try TemporaryConfigurationDirectory()
        defer { temporary.remove() }
        let account = temporary.path + "/default"
        try temporary.write("default/posts.json", "[]")
        try temporary.write("default/.posts.json.tmp-1", "[")
        for level in ["default/a", "default/a/b", "default/a/b/c"] { temporary.makeDirectory(level) }
        try temporary.write("default/a/b/c/deep.json", "{}")
        temporary.makeDirectory("default/empty")
        let odd = account + "/caf\u{e9}"
        var bytes = Array(odd.utf8.dropLast(2)) + [0xe9, 0]  // "caf" + a lone Latin-1 byte: invalid UTF-8
        let fd = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_CREAT | O_WRONLY, 0o600) }
        }
        #expect(fd >= 0)
        close(fd)

        try DirectoryTree.remove(account)
        #expect(!exists(account))
        #expect(exists(temporary.path))  // only the tree asked for
    }

    @Test("symbolic links are removed, never followed: what they point to stays")
    func linksAreNotFollowed() throws {
        let temporary = try TemporaryConfigurationDirectory()
        defer { temporary.remove() }
        try temporary.write("outside/keep.json", "precious")
        try temporary.write("outside/sub/keep2.json", "precious")
        try temporary.write("default/posts.json", "[]")
        #expect(symlink(temporary.path + "/outside", temporary.path + "/default/link-to-dir") == 0)
        #expect(symlink(temporary.path + "/outside/keep.json", temporary.path + "/default/link-to-file") == 0)
        #expect(symlink(temporary.path + "/outside", temporary.path + "/top-link") == 0)

        try DirectoryTree.remove(temporary.path + "/default")
        try DirectoryTree.remove(temporary.path + "/top-link")  // a link as the tree itself: the link goes
        #expect(!exists(temporary.path + "/default"))
        #expect(!exists(temporary.path + "/top-link"))
        #expect(try String(contentsOfFile: temporary.path + "/outside/keep.json", encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: temporary.path + "/outside/sub/keep2.json", encoding: .utf8) == "precious")
    }

    @Test("a missing tree is nothing to do")
    func missingTree() throws {
        let temporary = try TemporaryConfigurationDirectory()
        defer { temporary.remove() }
        try DirectoryTree.remove(temporary.path + "/never-created")
        #expect(exists(temporary.path))
    }

    @Test("a directory that cannot be changed: a clear error naming the entry, and the entry stays")
    func readOnlyDirectory() throws {
        let temporary = try TemporaryConfigurationDirectory()
        defer { temporary.remove() }
        try temporary.write("default/posts.json", "[]")
        try temporary.write("default/locked/state.db", "outbox")
        let locked = temporary.path + "/default/locked"
        // Root ignores mode bits, so as root the directory is made immutable (chattr +i) instead.
        let asRoot = geteuid() == 0
        if asRoot {
            try chattr("+i", locked)
        } else {
            #expect(chmod(locked, 0o555) == 0)
        }
        defer { if asRoot { try? chattr("-i", locked) } else { chmod(locked, 0o755) } }

        #expect(throws: SystemError.self) { try DirectoryTree.remove(temporary.path + "/default") }
        do {
            try DirectoryTree.remove(temporary.path + "/default")
        } catch {
            let why = asRoot ? "Operation not permitted" : "Permission denied"
            #expect(error.description == "Failed to remove \(locked)/state.db: \(why)")
        }
        #expect(try String(contentsOfFile: locked + "/state.db", encoding: .utf8) == "outbox")
    }

    private func chattr(_ flag: String, _ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "chattr \(flag) \(path) failed (the file system must support it)")
    }
}
