#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CFerrySystem

/// The temporary files and staging folders this process has open, removed if the process is interrupted
/// (SIGINT, SIGTERM, SIGHUP, SIGPIPE) so that an interrupted run leaves nothing behind.
///
/// On Linux, SIGBUS — raised when a file read in place (``MappedFile``) is truncated under the
/// process, or a page of it cannot be read — removes them too, then ends the process with a
/// message and exit code 1, as a data error. (Elsewhere SIGBUS also means a protection fault,
/// so it is left alone.)
///
/// A process killed with SIGKILL cannot clean up. Its outputs on Linux have no name until they
/// are committed (``OutputFile``), so they vanish with it; the temporaries it had to name
/// (`.NAME.ferry-PID-…`, staging folders, sort runs) never take a target's name, and the next
/// Ferry run in their folder removes them (``FileSystem/removeStaleTemporaries(in:)``).
public final class TemporaryFiles: @unchecked Sendable {
    /// The process-wide registry.
    public static let shared = TemporaryFiles()

    private let lock = Lock()
    // Fixed-size table of C strings so the signal handler never allocates.
    private static let capacity = 64
    private let table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    /// Whether each entry of `table` is a (flat) folder rather than a file.
    private let isFolder: UnsafeMutablePointer<Bool>

    private init() {
        table = .allocate(capacity: Self.capacity)
        table.initialize(repeating: nil, count: Self.capacity)
        isFolder = .allocate(capacity: Self.capacity)
        isFolder.initialize(repeating: false, count: Self.capacity)
    }

    /// Installs the signal handlers (once) and unblocks those signals for the calling thread, so
    /// a process started with them blocked (children inherit the mask of the thread that spawned
    /// them) still cleans up when interrupted. Called by the CLI at start-up, on the main thread.
    public static func installSignalHandlers() {
        _ = installed
    }

    private static let installed: Bool = {
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
            _ = Glibc_signal(signal)
            sigaddset(&handled, signal)
        }
        _ = shared // created now, not first inside a handler
        #if os(Linux)
        signal(SIGBUS) { _ in
            TemporaryFiles.shared.removeAllForSignal()
            let message: StaticString = "ferry: error: an input file read in place was truncated or rewritten while Ferry read it; its temporary outputs were removed\n"
            _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
            _exit(1)
        }
        sigaddset(&handled, SIGBUS)
        #endif
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        return true
    }()

    /// Adds a file to remove if the process is interrupted (a store built beside its target), or
    /// with `isFolder` a folder of files (a staging folder: ``FileSystem/makeTemporaryFolder(prefix:)``),
    /// removed with the files directly in it.
    package func register(_ path: String, isFolder folder: Bool = false) {
        lock.withLock {
            for i in 0..<Self.capacity where table[i] == nil {
                isFolder[i] = folder
                table[i] = strdup(path)
                return
            }
        }
    }

    /// Forgets a file registered with ``register(_:)`` (it was renamed into place or removed).
    package func unregister(_ path: String) {
        lock.withLock {
            for i in 0..<Self.capacity {
                if let entry = table[i], String(cString: entry) == path {
                    free(entry)
                    table[i] = nil
                }
            }
        }
    }

    fileprivate func removeAllForSignal() {
        for i in 0..<Self.capacity {
            if let entry = table[i] {
                if isFolder[i] { _ = CFerrySystem_removeFlatFolder(entry) } else { unlink(entry) }
            }
        }
    }
}

private func Glibc_signal(_ signo: Int32) -> Bool {
    signal(signo) { received in
        TemporaryFiles.shared.removeAllForSignal()
        signal(received, SIG_DFL)
        raise(received)
    }
    return true
}
