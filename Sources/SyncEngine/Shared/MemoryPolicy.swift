// How the long-running daemon uses glibc's allocator, so that what a large refresh needed goes back
// to the system afterwards (docs/benchmarks.md, "Daemon memory"). By default glibc raises its mmap
// threshold after the first large buffer is freed (up to 32 MiB), so later large buffers come from the
// heap and their pages stay resident after free; and it keeps up to 128 KiB free at the heap's top
// and up to 8 arenas per core. The corresponding C functions are mallopt(3) and malloc_trim(3).
internal import CShim
internal import Glibc

/// The daemon's allocator settings and the release of freed memory after a refresh.
public enum MemoryPolicy {
    /// Sets the allocator up for a daemon that is idle most of the time: buffers of 128 KiB or more
    /// always get their own mapping (returned at free); at most two arenas (the event loop and the
    /// refresh worker are the threads that allocate). Call once, early.
    public static func configure() {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        _ = mallopt(M_TRIM_THRESHOLD, 128 * 1024)
        _ = mallopt(M_ARENA_MAX, 2)
    }

    /// Returns the free pages of every arena to the system (after a refresh that replaced a listing,
    /// whose buffers are free now). Takes about a millisecond; other threads keep allocating meanwhile.
    public static func returnFreedMemory() {
        _ = malloc_trim(0)
    }
}
