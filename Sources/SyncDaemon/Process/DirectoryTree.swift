// Removing a directory tree without Foundation (FileManager is most of what kept FoundationEssentials
// in the daemon, docs/benchmarks.md "Storage: where the bytes and the memory go") and without following
// symbolic links: each level is opened with openat(2) O_DIRECTORY|O_NOFOLLOW relative to its parent's
// descriptor and its entries removed with unlinkat(2), so a link planted in the tree (even one swapped
// in while the removal runs) is removed itself, never the tree it points to.
internal import Glibc
import SyncCore
import SyncSystem
import SyncEngine

/// Recursive removal of a directory tree (`rm -rf`, links not followed).
enum DirectoryTree {
    /// Removes `path` and everything below it. A missing `path` is nothing to do; a symbolic link at
    /// `path` is removed, not followed. On a failure (a read-only directory, a permission) it stops at
    /// the first entry it cannot remove, leaves the rest in place and throws for that entry, e.g.
    /// "Failed to remove /var/cache/syncd/default/posts.json: Permission denied".
    static func remove(_ path: String) throws(SystemError) {
        if unlinkat(AT_FDCWD, path, 0) == 0 { return }
        let code = errno
        switch code {
        case ENOENT: return
        case EISDIR, EPERM: break  // a directory (Linux says EISDIR; POSIX allows EPERM)
        default: throw SystemError("remove \(path)", code: code)
        }
        try removeDirectory(parent: AT_FDCWD, name: Array(path.utf8CString), shownAs: path)
    }

    /// Removes everything below the directory `path` and keeps the directory itself, so that an app watching
    /// it (inotify) goes on hearing of the files written there later. A missing `path` is nothing to do; a
    /// symbolic link at `path` is removed, not followed; a file at `path` is removed.
    static func removeContents(of path: String) throws(SystemError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw SystemError("remove the contents of \(path)", code: code)
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { return try remove(path) }
        try removeDirectory(parent: AT_FDCWD, name: Array(path.utf8CString), shownAs: path, keepingItself: true)
    }

    /// Empties the directory `name` (relative to `parent`) and removes it, unless `keepingItself`.
    private static func removeDirectory(parent: Int32, name: [CChar], shownAs path: String,
                                        keepingItself: Bool = false) throws(SystemError) {
        let fd = retryingEINTR { openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else {
            // Not a directory after all (replaced meanwhile, or EPERM meant something else): say why.
            let code = errno
            throw SystemError("remove \(path)", code: code == ENOTDIR || code == ELOOP ? EPERM : code)
        }
        defer { close(fd) }
        for entry in try entries(fd, path) {
            let bytes = entry.dropLast().map { UInt8(bitPattern: $0) }
            let child = path + "/" + (PrintableText.escapingInvalidUTF8(bytes) ?? String(decoding: bytes, as: UTF8.self))
            if unlinkat(fd, entry, 0) == 0 { continue }
            let code = errno
            guard code == EISDIR || code == EPERM else { throw SystemError("remove \(child)", code: code) }
            try removeDirectory(parent: fd, name: entry, shownAs: child)
        }
        if !keepingItself, unlinkat(parent, name, AT_REMOVEDIR) != 0 {
            let code = errno
            if code != ENOENT { throw SystemError("remove \(path)", code: code) }
        }
    }

    /// The names (NUL-terminated bytes, as readdir(3) gives them) in the open directory `fd`, read in full before anything is removed (removing while
    /// reading leaves it unspecified whether readdir(3) still returns the rest).
    private static func entries(_ fd: Int32, _ path: String) throws(SystemError) -> [[CChar]] {
        let own = dup(fd)  // closedir(3) closes the descriptor fdopendir(3) was given
        guard own >= 0, let stream = fdopendir(own) else {
            let code = errno
            if own >= 0 { close(own) }
            throw SystemError("read directory \(path)", code: code)
        }
        defer { closedir(stream) }
        var names: [[CChar]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                let code = errno
                if code != 0 { throw SystemError("read directory \(path)", code: code) }
                return names
            }
            var name = withUnsafeBytes(of: entry.pointee.d_name) { raw in raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) } }
            if name == [0x2e] || name == [0x2e, 0x2e] { continue }
            name.append(0)
            names.append(name)
        }
    }
}
