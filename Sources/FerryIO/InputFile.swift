#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or standard input (`-`) read with `read(2)`. Owns its descriptor and closes it in `deinit`.
public final class InputFile: ByteSource {
    public let name: String
    private var fd: Int32
    private let ownsDescriptor: Bool

    /// The size of the file in bytes when it is a regular file (used for progress), else `nil`.
    public let size: Int?

    /// Opens `path` for reading; `-` is standard input.
    public init(path: String) throws {
        name = path
        if path == "-" {
            fd = 0
            ownsDescriptor = false
        } else {
            if Syscall.isDirectory(path) {
                throw FerryIOError(.open, path: path, errno: EISDIR)
            }
            fd = Syscall.open(path, flags: O_RDONLY | O_CLOEXEC)
            if fd < 0 { throw FerryIOError(.open, path: path, errno: Syscall.errno) }
            ownsDescriptor = true
        }
        size = Syscall.fileSize(fd)
    }

    deinit {
        if ownsDescriptor && fd >= 0 { _ = Syscall.close(fd) }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = Syscall.read(fd, buffer)
        if n < 0 { throw FerryIOError(.read, path: name, errno: Syscall.errno) }
        return n
    }

    public var sizeHint: Int? { size }

    public func mapRemaining(maximumSize: Int) -> MappedInput? {
        let offset = Int(lseek(fd, 0, SEEK_CUR))
        guard offset >= 0, let file = MappedFile.map(fd, name: name, maximumSize: maximumSize),
              offset <= file.bytes.count else { return nil }
        return MappedInput(file: file, bytes: UnsafeRawBufferPointer(rebasing: file.bytes[offset...]))
    }
}

/// Facts about paths that commands need, without Foundation.
public enum FileSystem {
    /// Whether `path` names a directory.
    public static func isDirectory(_ path: String) -> Bool { Syscall.isDirectory(path) }

    /// Whether `path` exists.
    public static func exists(_ path: String) -> Bool { Syscall.isRegularFile(path) != nil }

    /// Whether `path` is a regular file (symbolic links followed): not a folder, pipe or device,
    /// which reading to look at its first bytes would block on or consume.
    public static func isRegularFile(_ path: String) -> Bool { Syscall.isRegularFile(path) == true }

    /// Gives the file at `path` the permission bits of the regular file `model` (a file about to be
    /// replaced by it), when there is one; best effort.
    public static func copyPermissions(of model: String, to path: String) {
        if let mode = Syscall.permissions(model) { Syscall.chmod(path, mode) }
    }

    /// Whether `path` (a file or folder) has no write permission bit, for its owner, group or
    /// others: read-only for every process but the superuser's.
    public static func isWriteProtected(_ path: String) -> Bool { Syscall.hasNoWriteBits(path) }

    /// Whether this process may write the file at `path`.
    public static func isWritable(_ path: String) -> Bool { Syscall.isWritable(path) }

    /// Whether the descriptor is a terminal (progress goes to stderr only when it is).
    public static func isTerminal(_ fd: Int32) -> Bool { Syscall.isTerminal(fd) }

    /// The directory for scratch files: `$TMPDIR` (without a trailing `/`), or `/tmp`.
    public static var temporaryDirectory: String {
        if let value = getenv("TMPDIR") {
            let text = String(cString: value)
            if !text.isEmpty { return text.hasSuffix("/") ? String(text.dropLast()) : text }
        }
        return "/tmp"
    }

    /// Creates a fresh directory from a `mkdtemp` template ending in `XXXXXX`; `nil` on failure.
    public static func makeTemporaryDirectory(template: String) -> String? {
        var bytes = Array(template.utf8CString)
        let result = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard result != nil else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes `path` and, when it is a directory, everything in it, depth first; links are removed,
    /// never followed. For trees this process made (staging, scratch); errors are ignored.
    public static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            unlink(path)
            return
        }
        for name in Syscall.directoryEntries(path) ?? [] { removeTree(path + "/" + name) }
        rmdir(path)
    }

    /// Removes a file; errors are ignored when `ignoringErrors` is true.
    public static func remove(_ path: String) throws {
        let error = Syscall.unlink(path)
        if error != 0 { throw FerryIOError(.remove, path: path, errno: error) }
    }

    /// The regular files directly inside `directory`, sorted by name, hidden ones left out (a
    /// flat folder, such as one of assets; a folder input is read with ``listFiles(in:)``).
    public static func files(in directory: String) throws -> [String] {
        guard let entries = Syscall.directoryEntries(directory) else {
            throw FerryIOError(.open, path: directory, errno: Syscall.errno)
        }
        var names: [String] = []
        for name in entries {
            if name.hasPrefix(".") { continue }
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            if Syscall.isRegularFile(path) == true { names.append(path) }
        }
        return names.sorted()
    }
}
