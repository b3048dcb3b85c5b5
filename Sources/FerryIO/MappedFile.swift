#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file mapped read-only into memory, unmapped when the last reference goes.
///
/// Readers that keep pieces of their input (replay keeps each live record's JSON where the
/// history holds it) use a mapping instead of copying: the bytes stay in the page cache, shared
/// and reclaimable, rather than in fresh memory of the process.
///
/// The file must not be modified in place while it is mapped: rewritten bytes show through the
/// mapping, and reading a page past a truncated end raises `SIGBUS`. Files replaced by renaming
/// (as every Ferry output is) are safe; the mapping keeps the old contents. Readers call
/// ``checkUnchanged()`` before they commit what they made from the bytes.
///
/// `@unchecked Sendable`: the mapping is read-only and lives as long as the object.
public final class MappedFile: @unchecked Sendable {
    /// The path, for messages.
    public let name: String
    /// The mapped bytes, the whole file: valid only while this object lives.
    public let bytes: UnsafeRawBufferPointer
    /// Where the file is looked up again (`/dev/fd/0` for standard input), and what it was.
    private let path: String
    private let identity: Syscall.FileIdentity

    private init(name: String, path: String, identity: Syscall.FileIdentity, bytes: UnsafeRawBufferPointer) {
        self.name = name
        self.path = path
        self.identity = identity
        self.bytes = bytes
    }

    deinit {
        if bytes.count > 0 { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count) }
    }

    /// Maps the regular file open on `fd` (the descriptor may be closed afterwards); `nil` when it
    /// is not a regular file, is empty, is larger than `maximumSize`, or cannot be mapped.
    static func map(_ fd: Int32, name: String, maximumSize: Int) -> MappedFile? {
        guard let size = Syscall.fileSize(fd), size > 0, size <= maximumSize,
              let identity = Syscall.identity(fd), identity.size == size else { return nil }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0),
              base != UnsafeMutableRawPointer(bitPattern: -1) else { return nil } // MAP_FAILED
        #if os(Linux)
        _ = madvise(base, size, MADV_WILLNEED)
        #endif
        let path = fd == 0 ? "/dev/fd/0" : name
        return MappedFile(name: name, path: path, identity: identity, bytes: UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Throws when the file was modified in place since it was mapped — the same file, now
    /// shorter, or as long with another modification time — since what was read from the mapping
    /// may then mix old and new bytes. A file that grew was appended to (as logs are), which leaves
    /// the mapped bytes as they were; a file replaced (renamed over) or removed is fine too: the
    /// mapping keeps the contents it had.
    public func checkUnchanged() throws(FerryIOError) {
        guard let now = Syscall.identity(path: path), now.device == identity.device, now.inode == identity.inode,
              now.size <= identity.size, now != identity else { return }
        throw FerryIOError(.read, path: name, detail: "the file was modified in place while Ferry read it "
                           + "(\(now.size < identity.size ? "it is shorter" : "its modification time changed")); nothing made from it was kept")
    }
}

/// The part of a ``MappedFile`` a source had not yet read.
public struct MappedInput: @unchecked Sendable {
    /// The mapping, to keep while any of `bytes` is in use.
    public let file: MappedFile
    /// The unread bytes, from the source's position to the end of the file: valid only while
    /// `file` lives (``withBytes(_:)`` keeps it).
    public let bytes: UnsafeRawBufferPointer

    public init(file: MappedFile, bytes: UnsafeRawBufferPointer) {
        self.file = file
        self.bytes = bytes
    }

    /// Calls `body` with the unread bytes, keeping the mapping until it returns.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(file) { try body(bytes) }
    }

    /// The same input with `count` more bytes before it: those a wrapper read ahead and had not
    /// handed out, when they are the mapping's bytes just before this input's start.
    public func extended(backBy count: Int, matching pending: UnsafeRawBufferPointer) -> MappedInput? {
        guard count > 0 else { return self }
        let start = bytes.baseAddress! - count
        guard start >= file.bytes.baseAddress!, pending.count == count,
              memcmp(start, pending.baseAddress!, count) == 0 else { return nil }
        return MappedInput(file: file, bytes: UnsafeRawBufferPointer(start: start, count: bytes.count + count))
    }
}

extension ByteSource {
    /// The default: the source cannot be mapped.
    public func mapRemaining(maximumSize: Int) -> MappedInput? { nil }
}

/// Physical memory, for deciding what is worth keeping mapped.
public enum SystemMemory {
    /// Bytes of physical memory (0 when the system does not say).
    public static let physical: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        return pages > 0 && size > 0 ? pages * size : 0
    }()
}
