import Testing
@testable import SyncCore

/// Which mappings the idle daemon may unmap (docs/architecture.md, "Memory"): only clean pages of read-only
/// private file mappings; never relocated data, swapped or dirty pages, writable, shared, locked or
/// anonymous mappings.
@Suite("CleanFileMappings")
struct CleanFileMappingsTests {
    /// One smaps entry as the kernel writes it (the counters the decision reads, plus some it ignores).
    static func entry(_ range: String, _ permissions: String, _ path: String, rss: Int = 64, anonymous: Int = 0,
                      privateDirty: Int = 0, sharedDirty: Int = 0, swap: Int = 0, locked: Int = 0) -> String {
        let pathColumn = path.isEmpty ? "" : "                    \(path)"
        return """
        \(range) \(permissions) 001ca000 fe:00 6153377\(pathColumn)
        Size:               1024 kB
        KernelPageSize:        4 kB
        Rss:                 \(rss) kB
        Pss:                 \(rss) kB
        Shared_Clean:          0 kB
        Shared_Dirty:          \(sharedDirty) kB
        Private_Clean:       \(rss) kB
        Private_Dirty:         \(privateDirty) kB
        Anonymous:             \(anonymous) kB
        FilePmdMapped:         0 kB
        Swap:                  \(swap) kB
        SwapPss:               \(swap) kB
        Locked:                \(locked) kB
        THPeligible:           0
        VmFlags: rd ex mr mw me sd

        """
    }

    @Test("the executable's code and read-only data and a library's code are chosen, with their resident size")
    func codeAndReadOnlyData() {
        let text = Self.entry("55c97dc8e000-55c97de59000", "r--p", "/usr/bin/syncd", rss: 192)
            + Self.entry("55c97de59000-55c97e4f6000", "r-xp", "/usr/bin/syncd", rss: 4632)
            + Self.entry("7f0499800000-7f04998c5000", "r-xp", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", rss: 320)
        let chosen = CleanFileMappings(smaps: text)
        #expect(chosen.mappings == [
            .init(start: 0x55c9_7dc8_e000, end: 0x55c9_7de5_9000, residentKiB: 192),
            .init(start: 0x55c9_7de5_9000, end: 0x55c9_7e4f_6000, residentKiB: 4632),
            .init(start: 0x7f04_9980_0000, end: 0x7f04_998c_5000, residentKiB: 320),
        ])
        #expect(chosen.residentKiB == 5144)
    }

    @Test("a mapping with any private copy or other hold is left alone", arguments: [
        ("relocated read-only data (RELRO)", entry("7f0499c20000-7f0499c82000", "r--p", "/usr/lib/libcrypto.so.3", anonymous: 392, privateDirty: 392)),
        ("relocated data swapped out", entry("7f0499c20000-7f0499c82000", "r--p", "/usr/lib/libcrypto.so.3", swap: 8)),
        ("a dirty page without an anonymous count", entry("7f0499c20000-7f0499c82000", "r-xp", "/usr/lib/libx.so", privateDirty: 4)),
        ("a shared dirty page", entry("7f0499c20000-7f0499c82000", "r-xp", "/usr/lib/libx.so", sharedDirty: 4)),
        ("locked pages", entry("7f0499c20000-7f0499c82000", "r-xp", "/usr/lib/libx.so", locked: 64)),
        ("writable data", entry("7f0499c82000-7f0499c85000", "rw-p", "/usr/lib/libcrypto.so.3")),
        ("a shared read-only file mapping", entry("7f0499c82000-7f0499c85000", "r--s", "/var/lib/syncd/state.db-shm")),
        ("writable and executable", entry("7f0499c82000-7f0499c85000", "rwxp", "/usr/lib/libx.so")),
        ("the heap", entry("55c97e67a000-55c97e69b000", "r--p", "[heap]")),
        ("the vDSO", entry("7ffd1b5f2000-7ffd1b5f4000", "r-xp", "[vdso]")),
        ("anonymous memory", entry("7f0499000000-7f0499800000", "r--p", "")),
        ("a deleted file", entry("7f0499c20000-7f0499c82000", "r-xp", "/usr/lib/libold.so (deleted)")),
        ("nothing resident", entry("7f0499c20000-7f0499c82000", "r-xp", "/usr/lib/libx.so", rss: 0)),
    ])
    func leftAlone(_ what: String, _ text: String) {
        #expect(CleanFileMappings(smaps: text).mappings.isEmpty, "\(what)")
    }

    @Test("a path with spaces is one file; the counters of each mapping are its own")
    func pathsAndNeighbours() {
        let text = Self.entry("7f0000000000-7f0000010000", "r-xp", "/opt/my apps/lib x.so", rss: 16)
            + Self.entry("7f0000010000-7f0000020000", "r--p", "/opt/my apps/lib x.so", anonymous: 4, privateDirty: 4)
            + Self.entry("7f0000020000-7f0000030000", "r--p", "/opt/my apps/lib x.so", rss: 8)
        #expect(CleanFileMappings(smaps: text).mappings.map(\.start) == [0x7f00_0000_0000, 0x7f00_0002_0000])
    }

    @Test("a minimal entry with every counter the decision reads is chosen (the cases below lack one thing)")
    func minimalEntry() {
        let text = "7f0000000000-7f0000010000 r-xp 00000000 fe:00 1 /usr/lib/libx.so\nRss: 4 kB\nAnonymous: 0 kB\n"
            + "Private_Dirty: 0 kB\nShared_Dirty: 0 kB\nSwap: 0 kB\nLocked: 0 kB\n"
        #expect(CleanFileMappings(smaps: text).mappings == [.init(start: 0x7f00_0000_0000, end: 0x7f00_0001_0000, residentKiB: 4)])
    }

    @Test("text that is not smaps, or a mapping missing a counter, chooses nothing", arguments: [
        "",
        "garbage\nmore garbage: 12 kB\n",
        "zzzz-7f0000010000 r-xp 00000000 fe:00 1 /usr/lib/libx.so\nRss: 4 kB\nAnonymous: 0 kB\n",
        "7f0000010000-7f0000000000 r-xp 00000000 fe:00 1 /usr/lib/libx.so\nRss: 4 kB\nAnonymous: 0 kB\n",
        // No Swap: or Locked: line: not known to be clean.
        "7f0000000000-7f0000010000 r-xp 00000000 fe:00 1 /usr/lib/libx.so\nRss: 4 kB\nAnonymous: 0 kB\nPrivate_Dirty: 0 kB\nShared_Dirty: 0 kB\n",
        // A counter that is not a number.
        "7f0000000000-7f0000010000 r-xp 00000000 fe:00 1 /usr/lib/libx.so\nRss: 4 kB\nAnonymous: 0 kB\nPrivate_Dirty: 0 kB\n"
            + "Shared_Dirty: 0 kB\nSwap: x kB\nLocked: 0 kB\n",
    ])
    func nothingFromBadText(_ text: String) {
        #expect(CleanFileMappings(smaps: text).mappings.isEmpty)
    }
}
