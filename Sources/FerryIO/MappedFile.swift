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
    /// How many of the file's first and last bytes (up to ``edgeSize`` each) were taken when it
    /// was mapped, and their fingerprint: a file that grew still has them if it was only appended
    /// to. (A fingerprint, not a copy: replay keeps thousands of small files mapped.)
    private let edge: Int
    private let ends: UInt64
    private static let edgeSize = 4096

    private init(name: String, path: String, identity: Syscall.FileIdentity, bytes: UnsafeRawBufferPointer) {
        self.name = name
        self.path = path
        self.identity = identity
        self.bytes = bytes
        edge = min(Self.edgeSize, bytes.count)
        ends = Self.fingerprint(UnsafeRawBufferPointer(rebasing: bytes[..<edge]),
                                UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - edge)...]))
    }

    /// A 64-bit fingerprint of two byte ranges (eight bytes at a time, multiplied and folded).
    private static func fingerprint(_ head: UnsafeRawBufferPointer, _ tail: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(head.count)
        for part in [head, tail] {
            var i = 0
            while i + 8 <= part.count {
                h = (h ^ part.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
                h ^= h >> 31
                i += 8
            }
            while i < part.count {
                h = (h ^ UInt64(part[i])) &* 0x94D0_49BB_1331_11EB
                i += 1
            }
            h ^= h >> 29
        }
        return h
    }

    deinit {
        if bytes.count > 0 { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count) }
    }

    /// Maps the regular file open on `fd` (the descriptor may be closed afterwards); `nil` when it
    /// is not a regular file, is empty, is larger than `maximumSize`, or cannot be mapped.
    static func map(_ fd: Int32, name: String, maximumSize: Int) -> MappedFile? {
        guard let identity = Syscall.identity(fd), identity.isRegularFile else { return nil }
        let size = identity.size
        guard size > 0, size <= maximumSize else { return nil }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0),
              base != UnsafeMutableRawPointer(bitPattern: -1) else { return nil } // MAP_FAILED
        #if os(Linux)
        _ = madvise(base, size, MADV_WILLNEED)
        #endif
        let path = fd == 0 ? "/dev/fd/0" : name
        return MappedFile(name: name, path: path, identity: identity, bytes: UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Throws when the file was modified in place since it was mapped, since what was read from
    /// the mapping may then mix old and new bytes: the same file (device and inode) now shorter,
    /// as long with another modification time, or longer without its first and last 4 KiB as
    /// they were (rewritten, as `cp` over it does). A file that grew keeping those was appended
    /// to, as logs are, which leaves the mapped bytes as they were; a file replaced (renamed over)
    /// or removed is fine too: the mapping keeps the contents it had. Best effort: a rewrite of
    /// the same length within the file system's timestamp resolution, or one that keeps both
    /// ends, goes unseen.
    package func checkUnchanged() throws(FerryIOError) {
        guard let now = Syscall.identity(path: path), now.device == identity.device, now.inode == identity.inode,
              now != identity else { return }
        let found: String
        if now.size < identity.size {
            found = "it is \(now.size) bytes, was \(identity.size)"
        } else if now.size == identity.size {
            found = "its modification time changed from \(identity.modifiedSeconds).\(identity.modifiedNanoseconds) "
                + "to \(now.modifiedSeconds).\(now.modifiedNanoseconds) s"
        } else if let now = readEnds(), now == ends {
            return // appended to
        } else {
            found = "it is \(now.size) bytes, was \(identity.size), and its first or last 4 KiB as mapped changed"
        }
        throw FerryIOError(.read, path: name, detail: "the file was modified in place while Ferry read it (\(found)); "
                           + "nothing made from it was kept")
    }

    /// The fingerprint of the bytes now at the places the ends were read from, read from the
    /// file (not through the mapping); `nil` when they cannot be read.
    private func readEnds() -> UInt64? {
        let fd = Syscall.open(path, flags: O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Syscall.close(fd) }
        func read(_ count: Int, at offset: Int) -> [UInt8]? {
            var result = [UInt8](repeating: 0, count: count)
            let n = result.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? result : nil
        }
        guard let first = read(edge, at: 0), let last = read(edge, at: bytes.count - edge) else { return nil }
        return first.withUnsafeBytes { head in last.withUnsafeBytes { tail in Self.fingerprint(head, tail) } }
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

    /// The default: the size is not known.
    public var sizeHint: Int? { nil }
}

/// Physical memory, for deciding what is worth keeping mapped.
public enum SystemMemory {
    /// Bytes of physical memory (0 when the system does not say).
    public static let physical: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        return pages > 0 && size > 0 ? pages * size : 0
    }()

    /// How many memory areas a process may map (Linux's `vm.max_map_count`, 65,530 by default):
    /// each mapped file is one. `nil` when the system does not say.
    public static let mapCountLimit: Int? = {
        #if os(Linux)
        let fd = open("/proc/sys/vm/max_map_count", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let digits = buffer[..<n].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let count = Int(String(decoding: digits, as: UTF8.self)), count > 0 else { return nil }
        return count
        #else
        return nil
        #endif
    }()
}
