import CFerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// What a store needs to publish a file built beside its target: make it durable, give it the
// target's name without replacing anything, and tell its own stale temporaries from another
// process's live ones.
extension FileSystem {
    /// Flushes a file's data and metadata to the device (`fsync`).
    public static func sync(_ path: String) throws {
        let fd = Syscall.open(path, flags: O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw FerryIOError(.open, path: path, errno: Syscall.errno) }
        defer { _ = Syscall.close(fd) }
        if fsync(fd) != 0 { throw FerryIOError(.write, path: path, errno: Syscall.errno, detail: "fsync failed") }
    }

    /// Starts writing the changed pages of the file open as `fd` to the device without waiting
    /// for them (Linux: `sync_file_range`; elsewhere nothing). Called as a large file is written,
    /// it spreads the device's work over the writing, so that the final ``sync(_:)`` waits for
    /// little. Best effort: errors are ignored (the final sync reports them).
    ///
    /// Takes a descriptor, not a path: closing any descriptor of a file drops the POSIX locks the
    /// process holds on it (SQLite's among them), so the caller keeps one open for as long as
    /// the file is written.
    public static func startWriteback(fd: Int32) {
        _ = CFerrySystem_startWriteback(fd)
    }

    /// The folder `path` is in: what comes before its last `/` (`/` for a file at the root, `.`
    /// for a bare name).
    public static func directory(of path: String) -> String {
        let slash = path.lastIndex(of: "/")
        return slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }

    /// Flushes the directory holding `path` (so a rename or link in it survives a power loss).
    /// Best effort: some file systems do not sync directories.
    public static func syncDirectory(of path: String) {
        let fd = Syscall.open(directory(of: path), flags: O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        _ = Syscall.close(fd)
    }

    /// Gives the file `from` the name `to` as well, failing with `EEXIST` when `to` exists
    /// (`link`): publishing a new file without replacing one another process made meanwhile.
    public static func link(_ from: String, to: String) throws {
        #if canImport(Darwin)
        let rc = Darwin.link(from, to)
        #else
        let rc = Glibc.link(from, to)
        #endif
        if rc != 0 { throw FerryIOError(.rename, path: to, errno: Syscall.errno) }
    }

    /// Renames `from` to `to`, replacing `to` (`rename`).
    public static func rename(_ from: String, to: String) throws {
        let error = Syscall.rename(from, to)
        if error != 0 { throw FerryIOError(.rename, path: to, errno: error) }
    }

    /// This process's ID.
    public static var processID: Int32 { getpid() }

    /// Whether a process with this ID exists (`kill(pid, 0)`; a process of another user counts).
    public static func isProcessAlive(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || Syscall.errno == EPERM
    }

    /// The names of the entries directly inside `directory` (any kind), unsorted; empty when it
    /// cannot be read.
    public static func entries(in directory: String) -> [String] {
        Syscall.directoryEntries(directory) ?? []
    }

    /// The size of a regular file in bytes, `nil` when it is not one.
    public static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }
}
