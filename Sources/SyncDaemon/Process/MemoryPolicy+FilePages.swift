// The daemon's idle resident set is mostly pages of its executable and of shared libraries that start-up
// and a refresh touched and the idle loop never touches again (docs/benchmarks.md, "Daemon memory"); the
// kernel maps up to 64 KiB around every page fault (fault-around), and `MADV_RANDOM` does not stop it
// on this kernel. When the daemon goes idle it unmaps the resident pages of its clean, read-only, private
// file mappings with `madvise(MADV_DONTNEED)` (madvise(2)): for a private file mapping with no private
// copies the next access maps the file's page again, the same bytes. The pages stay in the page cache; this
// lowers what the daemon holds mapped (its VmRSS), not what the machine caches.
internal import Glibc
import SyncCore
import SyncRemote
import SyncSystem
import SyncEngine

extension MemoryPolicy {
    /// Unmaps the resident pages of the executable's and the libraries' clean read-only mappings
    /// (`CleanFileMappings`). It runs only while libcurl is unloaded and holds its lock meanwhile, so no
    /// library is being mapped or relocated by `dlopen` for a transfer. Returns the KiB unmapped, nil when
    /// it did not run (a transfer has libcurl loaded), or why smaps could not be read. Takes 2–3 ms.
    static func releaseCleanFilePages() -> Result<Int, SystemError>? {
        HTTPClient.whileLibraryUnloaded {
            readSmaps().map { text in
                var released = 0
                for mapping in CleanFileMappings(smaps: text).mappings {
                    let address = UnsafeMutableRawPointer(bitPattern: mapping.start)
                    if madvise(address, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 { released += mapping.residentKiB }
                }
                return released
            }
        }
    }

    /// The text of `/proc/self/smaps` (about 1 KiB per mapping; a few hundred KiB at most).
    static func readSmaps() -> Result<String, SystemError> {
        let path = "/proc/self/smaps"
        let descriptor = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return .failure(SystemError("open \(path)")) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in retryingEINTR { read(descriptor, raw.baseAddress, raw.count) } }
            if count < 0 { return .failure(SystemError("read \(path)")) }
            if count == 0 { return .success(String(decoding: bytes, as: UTF8.self)) }
            bytes += chunk[0..<count]
            // Bounded: a process with tens of thousands of mappings is not this daemon; stop reading.
            if bytes.count > 16 << 20 { return .failure(SystemError("read \(path)", code: EFBIG)) }
        }
    }
}
