import CFerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How many processors Ferry may run on: the default thread count of every parallel stage
/// (conversion, compression, change-log decoding).
public enum Processors {
    /// The processors the calling thread may run on (for a process started under `taskset` or in
    /// a pinned container, those of the whole process), at least 1.
    ///
    /// On Linux this honours the CPU affinity mask (`sched_getaffinity`), so `taskset -c 0 ferry …`
    /// or a container pinned to some cores gets one worker per allowed core rather than one per
    /// core online; elsewhere, and if the mask cannot be read, the processors online
    /// (`sysconf(_SC_NPROCESSORS_ONLN)`).
    public static var available: Int {
        let allowed = Int(CFerrySystem_allowedCPUCount())
        return allowed > 0 ? allowed : online
    }

    /// The most threads one parallel stage runs (256): a larger request is clamped to it. Each
    /// thread holds buffers of its own, so a count far beyond the cores only costs memory.
    public static let maximumThreads = 256

    /// `requested` threads brought within 1…``maximumThreads``.
    public static func clampedThreads(_ requested: Int) -> Int {
        min(max(1, requested), maximumThreads)
    }

    /// The processors online (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    public static var online: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

/// The process's memory, as a whole.
public enum ProcessMemory {
    /// Keeps memory the process frees for its own reuse instead of giving it back to the system
    /// at once (glibc's `mallopt`; elsewhere nothing): commands that allocate and free many large
    /// buffers — a chunk per unit of input, an output buffer per unit — then fault pages in once,
    /// not once per buffer. Call it once, at start-up.
    public static func keepFreedMemoryForReuse() {
        CFerrySystem_keepFreedMemory()
    }

    /// Makes ``leaveForExit(_:)`` keep what it is given: for the `ferry` program, which exits
    /// when its command returns. Call it once, at start-up; code running in a longer-lived
    /// process (tests, a library user) leaves it off, and objects are freed as usual.
    package static func reclaimAtExit() {
        ExitReclaimed.shared.turnOn()
    }

    /// Keeps `object` alive until the process exits, when ``reclaimAtExit()`` was called; else
    /// does nothing. For an object whose teardown only gives memory back — a replayed state holds
    /// a mapping per input file and a block per record: unmapping and freeing them one by one
    /// after the output is committed only delays the exit, which reclaims them all at once
    /// (clang's `-disable-free` does the same).
    package static func leaveForExit(_ object: AnyObject) {
        ExitReclaimed.shared.keep(object)
    }
}

/// The objects ``ProcessMemory/leaveForExit(_:)`` keeps (reachable from here, so leak checkers
/// do not report them).
private final class ExitReclaimed: @unchecked Sendable {
    static let shared = ExitReclaimed()
    private let lock = Lock()
    private var kept: [AnyObject] = []
    private var on = false

    func turnOn() {
        lock.withLock { on = true }
    }

    func keep(_ object: AnyObject) {
        lock.withLock { if on { kept.append(object) } }
    }
}
