import Glibc
import Foundation
import Testing
@testable import SyncRemote

/// /proc/self/maps, read to its end (its size in `stat` is 0, so it is read in chunks).
private func processMaps() throws -> String {
    let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
    try #require(fd >= 0, "cannot open /proc/self/maps")
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        try #require(count >= 0, "cannot read /proc/self/maps")
        if count == 0 { break }
        bytes += buffer[0..<count]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    try #require(text.contains("[stack]"), "/proc/self/maps has no [stack] line: not read whole")
    return text
}

/// The lines of /proc/self/maps that map `path`.
private func mappings(of path: String) throws -> [Substring] {
    try processMaps().split(separator: "\n").filter { $0.hasSuffix(" " + path) }
}

/// A private copy of the libcurl the daemon loads: `dlopen` of another path (another inode) maps a copy of
/// its own, so whether it is mapped does not depend on the tests that use the shared library meanwhile.
/// Its `DT_SONAME` is renamed (same length): the dynamic loader hands an already loaded library to a
/// `dlopen` of its soname, so a test that loads `libcurl.so.4` while this copy is mapped would otherwise
/// take a reference to the copy and keep it mapped past its test's last release.
private func privateLibcurl() throws -> String {
    _ = try CurlLibrary.shared.acquire()
    defer { CurlLibrary.shared.release() }
    let original = try processMaps().split(separator: "\n").compactMap { line in
        line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
    }.first { $0.contains("/libcurl.so.4") }
    let source = try #require(original, "libcurl.so.4 is not in /proc/self/maps while loaded")
    let copy = NSTemporaryDirectory() + "syncd-libcurl-" + UUID().uuidString + ".so.4"
    var bytes = try #require(FileManager.default.contents(atPath: source).map { [UInt8]($0) }, "cannot read \(source)")
    let soname = Array("libcurl.so.4\u{0}".utf8)
    let at = try #require(bytes.firstRange(of: soname)?.lowerBound, "\(source) holds no soname libcurl.so.4")
    bytes[at + 6] = UInt8(ascii: "X")                                        // libcurX.so.4
    try #require(FileManager.default.createFile(atPath: copy, contents: Data(bytes)), "cannot write \(copy)")
    return copy
}

@Suite("CurlLibrary")
struct CurlLibraryTests {
    @Test func libcurlIsMappedOnlyWhileAClientHoldsIt() throws {
        let path = try privateLibcurl()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let library = CurlLibrary(name: path)
        #expect(try mappings(of: path).isEmpty)

        let client = HTTPClient(library: library)
        #expect(try mappings(of: path).isEmpty, "a client maps libcurl only at its first transfer")
        // Port 1 on loopback refuses the connection: a transfer that fails after libcurl was loaded.
        var request = HTTPRequest(url: "http://127.0.0.1:1/")
        request.timeout = .seconds(5)
        #expect(throws: HTTPError.self) { try client.perform(request) { _ in } }
        #expect(client.isOpen && library.references == 1)
        #expect(try !mappings(of: path).isEmpty, "libcurl is mapped while the client holds its handle")

        client.close()
        #expect(library.references == 0)
        #expect(try mappings(of: path).isEmpty, "the last release unloads libcurl")

        // A URL parse loads it for its own duration only.
        let parts = try URLParts("https://Example.org/x", library: library)
        #expect(parts.scheme == "https" && parts.host == "example.org")
        #expect(try mappings(of: path).isEmpty)
    }

    /// The idle daemon unmaps library pages only through `whileUnloaded` (docs/architecture.md, "Memory").
    @Test func whileUnloadedRunsOnlyWhenNothingHoldsTheLibrary() throws {
        let path = try privateLibcurl()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let library = CurlLibrary(name: path)
        #expect(library.whileUnloaded { 42 } == 42)
        _ = try library.acquire()
        var ran = false
        #expect(library.whileUnloaded { ran = true; return 1 } == nil)
        #expect(!ran, "the body must not run while libcurl is loaded")
        library.release()
        #expect(library.whileUnloaded { 7 } == 7)
        #expect(try mappings(of: path).isEmpty)
    }

    /// The daemon's library lingers: its last release keeps it mapped; the loop unloads it only when nothing
    /// held or used it since its last look (docs/architecture.md, "libcurl on demand").
    @Test func aLingeringLibraryIsUnloadedOnlyWhenUnusedSinceTheLastLook() throws {
        let path = try privateLibcurl()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let library = CurlLibrary(name: path)
        library.setLingering(true)
        #expect(library.use() == .unloaded)
        _ = try library.acquire()
        library.release()
        #expect(library.references == 0)
        #expect(try !mappings(of: path).isEmpty, "the last release keeps a lingering library mapped")
        guard case .idle(let seen) = library.use() else { Issue.record("not idle: \(library.use())"); return }
        // Used again between the look and the unload: it stays, with the new count to look at next.
        _ = try library.acquire()
        #expect(library.unloadIfIdle(since: seen) == .inUse(releases: seen), "held: stays loaded")
        library.release()
        #expect(library.unloadIfIdle(since: seen) == .inUse(releases: seen + 1), "used since the look: stays loaded")
        #expect(try !mappings(of: path).isEmpty)
        #expect(library.unloadIfIdle(since: seen + 1) == .idle(releases: seen + 1))
        #expect(try mappings(of: path).isEmpty, "unused since the last look: unloaded")
        #expect(library.unloadIfIdle(since: seen + 1) == .unloaded)
        // No longer lingering: an unused loaded library goes at once, and the next last release unloads it.
        _ = try library.acquire()
        library.release()
        library.setLingering(false)
        #expect(try mappings(of: path).isEmpty)
        _ = try library.acquire()
        library.release()
        #expect(try mappings(of: path).isEmpty)
    }

    @Test func aMissingLibcurlIsAClearTransportError() throws {
        let library = CurlLibrary(name: "/nonexistent/libcurl.so.4")
        let client = HTTPClient(library: library)
        #expect { try client.perform(HTTPRequest(url: "http://127.0.0.1:1/")) { _ in } } throws: { error in
            guard case .transport(let code, let message) = error as? HTTPError else { return false }
            return code == 2 && (error as? HTTPError)?.isTransient == true
                && message.hasPrefix("Failed to load libcurl (/nonexistent/libcurl.so.4): /nonexistent/libcurl.so.4: cannot open shared object file")
                && message.hasSuffix("; install the libcurl4 package")
        }
        #expect(!client.isOpen && library.references == 0)
        #expect(throws: HTTPError.self) { try URLParts("http://example.org/", library: library) }
        #expect(library.references == 0)
        // The shared library is untouched: a file: URL is still read (its path decoded by libcurl).
        let file = try TemporaryFile("[]")
        var body: [UInt8] = []
        _ = try HTTPClient().perform(HTTPRequest(url: file.url)) { body += $0 }
        #expect(body == Array("[]".utf8))
    }
}

/// `CurlPreload`: `syncd --once` loads libcurl on a thread while it opens its store. Its own `CurlLibrary` of the
/// system's libcurl by its Debian path, not by the name "libcurl.so.4" (which could get a private copy another
/// test has loaded): the counts are its own; the unloading itself is what the tests above check.
extension CurlLibraryTests {
    @Test func thePreloadLoadsOnceAndFinishGivesItsReferenceBackOrKeepsIt() throws {
        var system = utsname()
        uname(&system)
        let machine = withUnsafeBytes(of: system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let path = "/usr/lib/\(machine)-linux-gnu/libcurl.so.4"
        try #require(access(path, R_OK) == 0, "libcurl4 is not installed at \(path)")
        let library = CurlLibrary(name: path)
        let preload = CurlPreload(library: library)
        preload.join()
        #expect(preload.holdsReference && library.references == 1, "the thread loaded it")
        _ = try library.acquire()
        #expect(library.references == 2, "the transfer shares the preload's load")
        preload.finish()
        preload.finish()
        #expect(library.references == 1 && !preload.holdsReference, "finish gives the reference back, once")
        library.release()
        #expect(library.references == 0)

        // Handed to the process (syncd --once): neither a later finish nor the deinit gives it back.
        do {
            let kept = CurlPreload(library: library)
            kept.finish(unloading: false)
            #expect(library.references == 1 && !kept.holdsReference)
            kept.finish()
            #expect(library.references == 1, "a later finish does not give the process's reference back")
        }
        #expect(library.references == 1, "nor does the deinit")
        library.release()
        #expect(library.references == 0)

        // Deinit waits for the thread and gives the reference back.
        do { _ = CurlPreload(library: library) }
        #expect(library.references == 0)
    }

    @Test func aFailedPreloadHoldsNothingAndTheTransferReportsTheFailure() throws {
        let library = CurlLibrary(name: "/nonexistent/libcurl.so.4")
        let preload = CurlPreload(library: library)
        preload.finish()
        #expect(!preload.holdsReference && library.references == 0)
        let client = HTTPClient(library: library)
        #expect { try client.perform(HTTPRequest(url: "http://127.0.0.1:1/")) { _ in } } throws: { error in
            guard case .transport(_, let message) = error as? HTTPError else { return false }
            return message.hasPrefix("Failed to load libcurl (/nonexistent/libcurl.so.4)")
        }
        #expect(library.references == 0)
    }
}
