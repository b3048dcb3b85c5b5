// Every system call FerryIO makes lives in this file (swift-system's habit): each is retried
// on EINTR and its failure turned into a FerryIOError by the caller.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum Syscall {
    static var errno: Int32 {
        #if canImport(Darwin)
        return Darwin.errno
        #else
        return Glibc.errno
        #endif
    }

    static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) -> Int32 {
        while true {
            #if canImport(Darwin)
            let fd = Darwin.open(path, flags, mode)
            #else
            let fd = Glibc.open(path, flags, mode)
            #endif
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
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
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
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

    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(fd) == 0 ? 0 : errno
        #else
        return Glibc.close(fd) == 0 ? 0 : errno
        #endif
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.rename(from, to) == 0 ? 0 : errno
        #else
        return Glibc.rename(from, to) == 0 ? 0 : errno
        #endif
    }

    static func unlink(_ path: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.unlink(path) == 0 ? 0 : errno
        #else
        return Glibc.unlink(path) == 0 ? 0 : errno
        #endif
    }

    /// Creates a unique file from a template ending in XXXXXX; returns (fd, path) or errno.
    static func makeTemporary(template: String) -> (fd: Int32, path: String)? {
        var bytes = Array(template.utf8CString)
        let fd = bytes.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd < 0 { return nil }
        let path = bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (fd, path)
    }

    static func fchmod(_ fd: Int32, _ mode: mode_t) {
        _ = Glibc_or_Darwin_fchmod(fd, mode)
    }

    static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    static func isRegularFile(_ path: String) -> Bool? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether `path` exists and is neither a regular file nor a directory (a device, FIFO or
    /// socket), following symbolic links.
    static func isSpecialFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type != S_IFREG && type != S_IFDIR
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// What tells whether a file changed: which file it is, its size and modification time.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
        var isRegularFile: Bool

        init(_ info: stat) {
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

    static func identity(_ fd: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    static func identity(path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    static func fileSize(_ fd: Int32) -> Int? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        _ = umask(mask)
        return mask
    }
}

@inline(__always)
private func Glibc_or_Darwin_fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 {
    fchmod(fd, mode)
}
