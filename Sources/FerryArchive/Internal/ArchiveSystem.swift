// Every system call FerryArchive makes lives in this file.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the system calls the archive code needs: each returns an `errno` (0 for
/// success) or an optional, and callers turn failures into ``ArchiveError``.
enum ArchiveSystem {
    /// What a path is, without following a final symlink (`lstat`).
    enum Kind { case missing, directory, regular, symlink, other }

    static var errno: Int32 {
        #if canImport(Darwin)
        return Darwin.errno
        #else
        return Glibc.errno
        #endif
    }

    static func kind(_ path: String) -> Kind {
        var info = stat()
        if lstat(path, &info) != 0 { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .regular
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    /// Creates a directory (0755 before umask); 0 or the `errno`. An existing directory is success.
    static func makeDirectory(_ path: String) -> Int32 {
        if mkdir(path, 0o755) == 0 { return 0 }
        let error = errno
        if error == EEXIST && kind(path) == .directory { return 0 }
        return error
    }

    /// Creates a fresh directory from a `mkdtemp` template ending in `XXXXXX`.
    static func makeTemporaryDirectory(template: String) -> String? {
        var bytes = Array(template.utf8CString)
        let result = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard result != nil else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a directory tree that this process created (never follows symlinks).
    static func removeTree(_ path: String) {
        if kind(path) == .directory {
            if let dir = opendir(path) {
                var names: [String] = []
                while let entry = readdir(dir) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                    }
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(dir)
                for name in names { removeTree(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// The directory for scratch files: `$TMPDIR` or `/tmp`.
    static var temporaryDirectory: String {
        if let value = getenv("TMPDIR") {
            let text = String(cString: value)
            if !text.isEmpty { return text.hasSuffix("/") ? String(text.dropLast()) : text }
        }
        return "/tmp"
    }

    /// Milliseconds since 1970 (`clock_gettime(CLOCK_REALTIME)`).
    static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
