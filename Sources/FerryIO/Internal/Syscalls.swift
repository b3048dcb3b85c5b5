// Every system call Ferry's modules make through a wrapper lives in this file (swift-system's
// habit): each is retried on EINTR where that applies and returns an errno (0 for success) or an
// optional; the caller turns a failure into its own module's error (FerryIOError, ArchiveError).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CFerrySystem

package enum Syscall {
    /// Maps `size` bytes of anonymous, private memory (`mmap`), asking for huge pages on Linux
    /// (`madvise(MADV_HUGEPAGE)`); `nil` with ``errno`` set when it cannot.
    package static func mapMemory(size: Int, hugePages: Bool) -> UnsafeMutableRawPointer? {
        guard let region = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != UnsafeMutableRawPointer(bitPattern: -1) else { return nil } // MAP_FAILED
        #if os(Linux)
        if hugePages { _ = madvise(region, size, MADV_HUGEPAGE) }
        #endif
        return region
    }

    /// Unmaps memory ``mapMemory(size:hugePages:)`` mapped (`munmap`).
    package static func unmapMemory(_ region: UnsafeMutableRawPointer, size: Int) {
        _ = munmap(region, size)
    }

    package static var errno: Int32 {
        #if canImport(Darwin)
        return Darwin.errno
        #else
        return Glibc.errno
        #endif
    }

    package static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) -> Int32 {
        while true {
            #if canImport(Darwin)
            let fd = Darwin.open(path, flags, mode)
            #else
            let fd = Glibc.open(path, flags, mode)
            #endif
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            #if canImport(Darwin)
            let n = Darwin.read(fd, buffer.baseAddress, buffer.count)
            #else
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            #endif
            if n >= 0 || errno != EINTR { return n }
        }
    }

    /// Writes all bytes; returns 0 or the errno of the failure.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < buffer.count {
            #if canImport(Darwin)
            let n = Darwin.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            #else
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return 0
    }

    package static func close(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(fd) == 0 ? 0 : errno
        #else
        return Glibc.close(fd) == 0 ? 0 : errno
        #endif
    }

    package static func rename(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.rename(from, to) == 0 ? 0 : errno
        #else
        return Glibc.rename(from, to) == 0 ? 0 : errno
        #endif
    }

    package static func unlink(_ path: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.unlink(path) == 0 ? 0 : errno
        #else
        return Glibc.unlink(path) == 0 ? 0 : errno
        #endif
    }

    /// Removes an empty directory.
    package static func removeDirectory(_ path: String) -> Int32 {
        rmdir(path) == 0 ? 0 : errno
    }

    /// Creates a unique file from a template ending in XXXXXX; returns (fd, path) or errno.
    package static func makeTemporary(template: String) -> (fd: Int32, path: String)? {
        var bytes = Array(template.utf8CString)
        let fd = bytes.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { return nil }
        let path = bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (fd, path)
    }

    #if os(Linux)
    /// Opens a new unnamed regular file in `directory` for writing (`open` with `O_TMPFILE`,
    /// `mode` before the umask): the descriptor, or the `errno` negated. Needs a file system
    /// that supports it; `EOPNOTSUPP`, `EISDIR` or `EINVAL` say it does not.
    package static func openUnnamed(inDirectory directory: String, mode: mode_t) -> Int32 {
        let flag = CFerrySystem_temporaryFileFlag()
        guard flag != 0, hasProcFileDescriptors else { return -EOPNOTSUPP }
        let fd = open(directory, flags: flag | O_WRONLY | O_CLOEXEC, mode: mode)
        return fd >= 0 ? fd : -errno
    }

    /// Whether `/proc/self/fd` exists, through which an unnamed file is given a name.
    private static let hasProcFileDescriptors: Bool = access("/proc/self/fd", X_OK) == 0

    /// Gives the open file `fd` (an unnamed one included) the name `path` (`linkat` of
    /// `/proc/self/fd/N` with `AT_SYMLINK_FOLLOW`); 0 or the `errno`, `EEXIST` when `path` exists.
    package static func link(descriptor fd: Int32, to path: String) -> Int32 {
        linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno
    }

    /// The size of a memory page (`sysconf(_SC_PAGESIZE)`).
    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Gives back the pages of a file mapping that lie wholly before `end`, from the page that
    /// holds `start` on (`madvise` with `MADV_DONTNEED`): they were read and will not be read
    /// again, so they no longer count towards the process's memory, and stay in the page cache.
    /// Returns where the pages given back end (a page boundary), or `nil` when none were.
    package static func discardPages(from start: UnsafeRawPointer, to end: UnsafeRawPointer) -> UnsafeRawPointer? {
        let from = Int(bitPattern: start) & ~(pageSize - 1), to = Int(bitPattern: end) & ~(pageSize - 1)
        guard to > from else { return nil }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MADV_DONTNEED)
        return UnsafeRawPointer(bitPattern: to)
    }
    #endif

    /// Whether `path` exists with no write permission bit set, for anyone.
    package static func hasNoWriteBits(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & 0o222 == 0
    }

    /// The permission bits of the regular file at `path`, or `nil` when there is none.
    package static func permissions(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return info.st_mode & 0o777
    }

    package static func chmod(_ path: String, _ mode: mode_t) {
        _ = Glibc_or_Darwin_chmod(path, mode)
    }

    package static func fchmod(_ fd: Int32, _ mode: mode_t) {
        _ = Glibc_or_Darwin_fchmod(fd, mode)
    }

    package static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// Whether this process may write the file at `path` (`access(2)` with `W_OK`).
    package static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    /// The names of the entries of directory `path` but `.` and `..`, unsorted; `nil`, with
    /// `errno` set, when it cannot be opened.
    package static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        // Each name is read where it lies: an entry is only as long as its name, so copying the
        // whole `d_name` array out of it reads past the end of the directory buffer.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package static func isRegularFile(_ path: String) -> Bool? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether `path` exists and is neither a regular file nor a directory (a device, FIFO or
    /// socket), following symbolic links.
    package static func isSpecialFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type != S_IFREG && type != S_IFDIR
    }

    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// What tells whether a file changed: which file it is, its size and modification time.
    package struct FileIdentity: Equatable {
        package var device: UInt64
        package var inode: UInt64
        package var size: Int
        package var modifiedSeconds: Int
        package var modifiedNanoseconds: Int
        package var isRegularFile: Bool

        package init(_ info: stat) {
            isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
            size = Int(info.st_size)
            #if canImport(Darwin)
            modifiedSeconds = Int(info.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int(info.st_mtimespec.tv_nsec)
            #else
            modifiedSeconds = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
            #endif
        }
    }

    package static func identity(_ fd: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    package static func identity(path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    package static func fileSize(_ fd: Int32) -> Int? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// What a path is, without following a final symlink (`lstat`).
    package enum PathKind { case missing, directory, regular, symlink, other }

    /// What `path` is, without following a final symlink (`lstat`).
    package static func kind(_ path: String) -> PathKind {
        var info = stat()
        if lstat(path, &info) != 0 { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .regular
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    /// The bytes of each command-line argument of the process, `argv[0]` first (`strlen` of each
    /// of `CommandLine.unsafeArgv`, copied out): as given, before Swift repairs what is not UTF-8.
    package static func commandLineArgumentBytes() -> [[UInt8]] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            let count = strlen(argument)
            return argument.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        }
    }

    /// The system's description of an `errno` (`strerror`, copied out).
    package static func errorDescription(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Ends the process with `code` (`exit`: C's buffers flushed, `atexit` handlers run).
    package static func exit(_ code: Int32) -> Never {
        #if canImport(Darwin)
        Darwin.exit(code)
        #else
        Glibc.exit(code)
        #endif
    }

    /// Flushes what `print` wrote to standard output (C's `stdout`); 0, or the `errno` of a write
    /// that failed, now or earlier (the failure is then cleared).
    package static func flushStandardOutput() -> Int32 {
        CFerrySystem_flushStandardOutput()
    }

    /// The absolute path of an existing file or folder, with links, `.` and `..` resolved
    /// (`realpath`, which allocates the result; it is copied and freed here); `nil` when it
    /// cannot be resolved (missing).
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Creates a directory (`mkdir`, 0755 before umask); 0 or the `errno`. An existing directory
    /// is success.
    package static func makeDirectory(_ path: String) -> Int32 {
        makeDirectory(path, made: nil)
    }

    /// ``makeDirectory(_:)``, telling through `made` whether this call made it.
    package static func makeDirectory(_ path: String, made: UnsafeMutablePointer<Bool>?) -> Int32 {
        made?.pointee = false
        if mkdir(path, 0o755) == 0 {
            made?.pointee = true
            return 0
        }
        let error = errno
        if error == EEXIST && kind(path) == .directory { return 0 }
        return error
    }

    /// Milliseconds since 1970 (`clock_gettime(CLOCK_REALTIME)`).
    package static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Seconds on the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`), for intervals.
    package static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    package static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        _ = umask(mask)
        return mask
    }
}

@inline(__always)
private func Glibc_or_Darwin_fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 {
    fchmod(fd, mode)
}

private func Glibc_or_Darwin_chmod(_ path: String, _ mode: mode_t) -> Int32 {
    chmod(path, mode)
}
