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

    /// Renames `from` to `to` (`rename`), replacing a file there; 0 or the `errno`.
    static func rename(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.rename(from, to) == 0 ? 0 : errno
        #else
        return Glibc.rename(from, to) == 0 ? 0 : errno
        #endif
    }

    /// Milliseconds since 1970 (`clock_gettime(CLOCK_REALTIME)`).
    static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
