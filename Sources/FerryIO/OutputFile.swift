#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered output that becomes visible only when committed, whole.
///
/// For a path on Linux, bytes go to an unnamed file in the target's directory (`open` with
/// `O_TMPFILE`), which ``commit()`` links to the target's name (`linkat` through
/// `/proc/self/fd`) or, when the target exists, links to a temporary name beside it and renames
/// over it, so a reader sees the old file or the new one, never part of one. A run that fails,
/// or is killed at any point, leaves no file behind. Where unnamed files are not supported (some
/// file systems, macOS), bytes go to a named temporary beside the target
/// (`.NAME.ferry-PID-XXXXXX`) renamed over it by ``commit()``; a failed or interrupted run
/// removes it, and one killed with SIGKILL leaves it for the next run in that directory to
/// remove (see ``FileSystem/removeStaleTemporaries(in:)``, which opening an output runs once per
/// directory). `-` writes to standard output, and a device or FIFO (`/dev/null`, a named pipe)
/// is written through; neither can be made atomic.
public final class OutputFile: ByteSink {
    public let name: String
    private var fd: Int32
    /// The named temporary file that ``commit()`` renames over the target, if any.
    private let temporaryPath: String?
    /// For an unnamed file (`O_TMPFILE`): the prefix, directory included, of the temporary name
    /// it is linked to before it is renamed over an existing target.
    private let unnamedPrefix: String?
    /// Whether `fd` is ours to close (not standard output).
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private let bufferCapacity: Int
    private var isFinished = false

    /// Creates an output for `path` (`-` for standard output).
    public init(path: String, bufferCapacity: Int = 1 << 20) throws {
        name = path
        self.bufferCapacity = bufferCapacity
        buffer.reserveCapacity(bufferCapacity)
        if path == "-" {
            fd = 1
            temporaryPath = nil
            unnamedPrefix = nil
            ownsDescriptor = false
            return
        }
        if Syscall.isDirectory(path) {
            throw FerryIOError(.open, path: path, errno: EISDIR)
        }
        if Syscall.isSpecialFile(path) {
            // A device or FIFO (/dev/null, a named pipe): write through it. Renaming a temporary
            // file over it would replace the device with a regular file.
            let fd = Syscall.open(path, flags: O_WRONLY | O_CLOEXEC)
            if fd < 0 { throw FerryIOError(.open, path: path, errno: Syscall.errno) }
            self.fd = fd
            temporaryPath = nil
            unnamedPrefix = nil
            ownsDescriptor = true
            return
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let prefix = directory + "." + base + ".ferry-"
        FileSystem.removeStaleTemporariesOnce(in: directory)
        ownsDescriptor = true
        #if os(Linux)
        let unnamed = Syscall.openUnnamed(inDirectory: directory.isEmpty ? "." : directory, mode: 0o666)
        if unnamed >= 0 {
            // A file replaced keeps its permissions (as `sort -o` does): a private file stays private.
            if let mode = Syscall.permissions(path) { Syscall.fchmod(unnamed, mode) }
            fd = unnamed
            temporaryPath = nil
            unnamedPrefix = prefix
            return
        }
        // Not supported here (EOPNOTSUPP, EISDIR, EINVAL), or the directory is unusable: a named
        // temporary works or says why not.
        #endif
        guard let (fd, temp) = Syscall.makeTemporary(template: FileSystem.temporaryTemplate(prefix: prefix)) else {
            throw FerryIOError(.createTemporary, path: path, errno: Syscall.errno)
        }
        // mkstemp creates 0600; give the output the permissions of the file it replaces, or those
        // a new file would get.
        Syscall.fchmod(fd, Syscall.permissions(path) ?? 0o666 & ~Syscall.currentUmask())
        self.fd = fd
        temporaryPath = temp
        unnamedPrefix = nil
        TemporaryFiles.shared.register(temp)
    }

    deinit {
        if !isFinished { abandon() }
    }

    /// Writes `bytes` after everything written before. A piece of at least half the buffer's
    /// capacity goes to the file from where it lies (after what is buffered) instead of being
    /// copied into the buffer first.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if bytes.count > 0 && bytes.count >= bufferCapacity / 2 {
            try flush()
            try writeThrough(bytes)
            return
        }
        if buffer.count + bytes.count > bufferCapacity { try flush() }
        buffer.append(contentsOf: bytes)
    }

    /// Writes everything buffered so far.
    public func flush() throws {
        if buffer.isEmpty { return }
        try buffer.withUnsafeBytes { try writeThrough($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeThrough(_ bytes: UnsafeRawBufferPointer) throws {
        let error = Syscall.writeAll(fd, bytes)
        if error != 0 { throw FerryIOError(.write, path: name, errno: error) }
    }

    public func commit() throws {
        guard !isFinished else { return }
        do {
            try flush()
        } catch {
            abandon()
            throw error
        }
        isFinished = true
        #if os(Linux)
        if let unnamedPrefix {
            try publishUnnamed(temporaryPrefix: unnamedPrefix)
            return
        }
        #endif
        guard let temporaryPath else {
            if ownsDescriptor {
                let closeError = Syscall.close(fd)
                fd = -1
                if closeError != 0 { throw FerryIOError(.close, path: name, errno: closeError) }
            }
            return
        }
        let closeError = Syscall.close(fd)
        fd = -1
        if closeError != 0 {
            _ = Syscall.unlink(temporaryPath)
            TemporaryFiles.shared.unregister(temporaryPath)
            throw FerryIOError(.close, path: name, errno: closeError)
        }
        let renameError = Syscall.rename(temporaryPath, name)
        TemporaryFiles.shared.unregister(temporaryPath)
        if renameError != 0 {
            _ = Syscall.unlink(temporaryPath)
            throw FerryIOError(.rename, path: name, errno: renameError)
        }
    }

    #if os(Linux)
    /// Gives the unnamed file the target's name: linked to it when it does not exist, else
    /// linked to a temporary name beside it and renamed over it (a link never replaces a file).
    private func publishUnnamed(temporaryPrefix: String) throws {
        var error = Syscall.link(descriptor: fd, to: name)
        if error == EEXIST {
            let temporary = FileSystem.temporaryName(prefix: temporaryPrefix)
            TemporaryFiles.shared.register(temporary)
            error = Syscall.link(descriptor: fd, to: temporary)
            if error == 0 {
                error = Syscall.rename(temporary, name)
                if error != 0 { _ = Syscall.unlink(temporary) }
            }
            TemporaryFiles.shared.unregister(temporary)
        }
        let closeError = Syscall.close(fd)
        fd = -1
        if error != 0 { throw FerryIOError(.rename, path: name, errno: error) }
        if closeError != 0 { throw FerryIOError(.close, path: name, errno: closeError) }
    }
    #endif

    /// Discards everything written: removes the temporary file. Standard output cannot be unwritten.
    public func abandon() {
        isFinished = true
        buffer.removeAll()
        guard let temporaryPath else {
            if ownsDescriptor && fd >= 0 { _ = Syscall.close(fd) }
            fd = -1
            return
        }
        if fd >= 0 { _ = Syscall.close(fd) }
        fd = -1
        _ = Syscall.unlink(temporaryPath)
        TemporaryFiles.shared.unregister(temporaryPath)
    }
}
