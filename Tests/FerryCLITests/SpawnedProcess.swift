@testable import FerryCLI
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process with a pipe on its standard input, whose own peak RSS is sampled while it
/// runs (`VmHWM` in `/proc/PID/status`, Linux). `ru_maxrss` from `wait4` would not do: until
/// `exec`, a child of `posix_spawn` shares the test process's memory, and Linux counts that
/// high-water mark as the child's.
///
/// `VmHWM` is the child's own high-water mark since `exec`, so a sample taken any time after a
/// peak sees it; it is read after every write and, on a thread of its own, every millisecond
/// until the child exits (a zombie has no memory left to report). A peak in the last
/// millisecond before exit could go unseen.
final class SpawnedProcess: @unchecked Sendable {
    private let pid: pid_t
    private var input: Int32
    private let lock = NSLock()
    private var highest: Int?
    private var isRunning = true
    private var sampler: Thread?

    /// The highest `VmHWM` seen so far, in KiB (`nil` where `/proc` does not exist).
    var peakKiB: Int? {
        lock.lock()
        defer { lock.unlock() }
        return highest
    }

    init(_ path: String, _ arguments: [String], stderrPath: String) throws {
        signal(SIGPIPE, SIG_IGN) // the child may stop reading: writes then fail with EPIPE
        // Close-on-exec, so that no other child spawned later (tests run in parallel) holds an
        // end: the writes would not fail when this child stops, nor would it see the end. (Glibc
        // as Swift imports it has no pipe2; one spawned in the instant between the calls could.)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CommandFailure(message: "pipe failed") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0) // dup2 clears close-on-exec
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var child: pid_t = 0
        #if canImport(Glibc)
        let rc = posix_spawn(&child, path, &actions, nil, argv, environ)
        #else
        let rc = posix_spawn(&child, path, &actions, nil, argv, nil)
        #endif
        close(fds[0])
        guard rc == 0 else {
            close(fds[1])
            throw CommandFailure(message: "posix_spawn failed: \(rc)")
        }
        pid = child
        input = fds[1]
        let thread = Thread { [self] in
            while true {
                lock.lock()
                let running = isRunning
                lock.unlock()
                guard running else { return }
                samplePeak()
                usleep(1000)
            }
        }
        sampler = thread
        thread.start()
    }

    /// Writes all of `bytes` to the child's standard input; `false` once the child stopped reading.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard input >= 0 else { return false }
        defer { samplePeak() }
        var offset = 0
        while offset < bytes.count {
            let n = write(input, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }

    /// Reads the child's `VmHWM` (its own peak RSS since `exec`).
    private func samplePeak() {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return }
        lock.lock()
        highest = max(highest ?? 0, kib)
        lock.unlock()
    }

    /// Closes the child's input, waits for it, and returns its exit status.
    func wait() -> Int32 {
        samplePeak()
        if input >= 0 { close(input) }
        input = -1
        // Wait for the exit without reaping, so that the sampler's pid cannot be reused meanwhile.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        lock.lock()
        isRunning = false
        lock.unlock()
        while sampler?.isFinished == false { usleep(1000) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// Bytes made as they are sent, never held whole: `pattern` repeated (the last copy cut) until
/// `count` bytes were sent.
struct Stretch {
    let pattern: [UInt8]
    let count: Int

    init(repeating pattern: [UInt8], count: Int) {
        self.pattern = pattern
        self.count = count
    }

    init(repeating text: String, count: Int) {
        self.init(repeating: Array(text.utf8), count: count)
    }

    /// `bytes`, once.
    static func once(_ bytes: [UInt8]) -> Stretch { Stretch(repeating: bytes, count: bytes.count) }
    static func once(_ text: String) -> Stretch { once(Array(text.utf8)) }
}

/// A `ferry` process fed input on its standard input as it is made, until all was sent or it
/// stopped reading, with its exit status, standard error, the bytes it took and its peak RSS.
struct FedRun {
    let arguments: [String]
    let status: Int32
    let error: String
    /// Input bytes the child took before it stopped reading or the input ended.
    let sent: Int
    /// The child's peak RSS in KiB (`nil` without `/proc`).
    let peakKiB: Int?
    /// The child's peak once `baselineAfter` bytes were sent, to see memory grow while streaming.
    let baselineKiB: Int?

    /// Runs `ferry ARGUMENTS` with `input` on its standard input, sent in pieces of up to 1 MiB.
    init(_ arguments: [String], input: [Stretch], baselineAfter: Int? = nil) throws {
        let dir = scratchDirectory()
        let child = try SpawnedProcess(try ferryBinary(), arguments, stderrPath: dir + "/stderr.txt")
        var sent = 0
        var baseline: Int?
        var open = true
        var piece: [UInt8] = []
        for stretch in input where open {
            // One buffer of whole patterns, about 1 MiB, sent over and over.
            let copies = max(1, (1 << 20) / max(1, stretch.pattern.count))
            piece.removeAll(keepingCapacity: true)
            for _ in 0..<copies { piece.append(contentsOf: stretch.pattern) }
            var left = stretch.count
            while open && left > 0 {
                let n = min(left, piece.count)
                open = piece.withUnsafeBytes { child.send(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                if open {
                    sent += n
                    left -= n
                }
                if let after = baselineAfter, baseline == nil, sent >= after { baseline = child.peakKiB }
            }
        }
        self.arguments = arguments
        status = child.wait()
        let peak = child.peakKiB
        error = (try? String(contentsOfFile: dir + "/stderr.txt", encoding: .utf8)) ?? ""
        self.sent = sent
        baselineKiB = baseline
        peakKiB = peak
        print("ferry \(arguments.joined(separator: " ")): took \(sent >> 10) KiB, peak RSS "
              + (peak.map { "\($0 >> 10) MiB" } ?? "unknown") + (baseline.map { " (\($0 >> 10) MiB once streaming)" } ?? "")
              + ", exit \(status): \(error.prefix(300))")
    }
}
