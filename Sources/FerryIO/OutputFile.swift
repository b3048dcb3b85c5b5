#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered output that becomes visible only when committed.
///
/// For a path, bytes go to a temporary file in the same directory (`.NAME.ferry-XXXXXX`), which
/// ``commit()`` renames over the target. If the process fails or the sink is dropped without a
/// commit, the temporary file is removed, so a failed run never leaves a partial output. `-` writes
/// to standard output, and a device or FIFO (`/dev/null`, a named pipe) is written through;
/// neither can be made atomic.
public final class OutputFile: ByteSink {
    public let name: String
    private var fd: Int32
    private let temporaryPath: String?
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
            ownsDescriptor = true
            return
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let (fd, temp) = Syscall.makeTemporary(template: directory + "." + base + ".ferry-XXXXXX") else {
            throw FerryIOError(.createTemporary, path: path, errno: Syscall.errno)
        }
        // mkstemp creates 0600; give the output the permissions a normal file would get.
        Syscall.fchmod(fd, 0o666 & ~Syscall.currentUmask())
        self.fd = fd
        temporaryPath = temp
        ownsDescriptor = true
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
