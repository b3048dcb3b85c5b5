#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Input files read in order — a folder of saved responses, a list of histories — handed out
/// one at a time, the system asked to start reading the next ones before they are opened
/// (`posix_fadvise(POSIX_FADV_WILLNEED)` on Linux; elsewhere only the paths are handed out).
///
/// A file read when it is opened is read a few hundred KiB at a time with one request in flight;
/// a folder of 10,000 responses on disk (not in the page cache) then reads at a fifth of what the
/// device gives. Asking for the next files first keeps many requests in flight: the bytes are
/// in the page cache when a decoder opens the file. Nothing is held in this process's memory;
/// for files already cached, each ask costs a `stat`, an `open`, an `fadvise` and a `close`.
public final class FileReadahead: @unchecked Sendable {
    /// The paths, in the order they are read.
    public let paths: [String]
    /// How many files after the one being opened are asked for.
    public let window: Int
    /// Of each file, the bytes asked for (larger files are mapped, and read ahead as they are read).
    static let bytesPerFile = 8 << 20
    private let lock = Lock()
    /// `paths[..<asked]` were asked for (or need not be).
    private var asked = 0
    private var nextIndex = 0

    /// Hands out `paths` in order, asking for up to `window` files ahead.
    public init(_ paths: [String], window: Int = 32) {
        self.paths = paths
        self.window = max(0, window)
    }

    /// How many of the first paths were asked for or handed out (for tests).
    package var requested: Int { lock.withLock { asked } }

    /// The next path, in order; `nil` after the last. Asks for the files after it.
    public func next() -> String? {
        let index: Int? = lock.withLock {
            guard nextIndex < paths.count else { return nil }
            defer { nextIndex += 1 }
            return nextIndex
        }
        guard let index else { return nil }
        opening(index)
        return paths[index]
    }

    /// Notes that `paths[index]` is about to be opened (by whichever thread claimed it): asks
    /// for the files up to `index + window` not asked for yet.
    public func opening(_ index: Int) {
        let range: Range<Int> = lock.withLock {
            let end = min(paths.count, index + 1 + window)
            let start = max(asked, index + 1)
            guard end > start else { return 0..<0 }
            asked = end
            return start..<end
        }
        for index in range { Self.startReading(paths[index]) }
    }

    /// Asks the system to start reading the first ``bytesPerFile`` of the regular file at `path`
    /// into the page cache, without waiting. Best effort: anything that fails is left to the read.
    static func startReading(_ path: String) {
        #if os(Linux)
        // Checked before opening: opening a FIFO or a device has effects (a FIFO's writer is let
        // go, then finds no reader; some devices rewind or hang up when closed).
        guard path != "-", Syscall.isRegularFile(path) == true else { return }
        let fd = Syscall.open(path, flags: O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return }
        _ = posix_fadvise(fd, 0, off_t(bytesPerFile), POSIX_FADV_WILLNEED)
        _ = Syscall.close(fd)
        #endif
    }
}
