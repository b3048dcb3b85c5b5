import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spawns a command and measures wall time, peak RSS (wait4's ru_maxrss) and, on Linux, peak
/// anonymous memory: the `RssAnon` of the command's process tree, sampled every 20 ms. RSS
/// counts the pages of files a process maps (Ferry's replay keeps saved responses mapped: clean
/// page cache, shared and reclaimable); anonymous memory is what only the process holds.
enum Runner {
    struct Result {
        var status: Int32
        var seconds: Double
        var peakRSSKiB: Int
        /// The largest sampled sum of `RssAnon` over the process tree (0 where not sampled).
        var peakAnonKiB = 0
        /// CPU time in user space and in the kernel (writes to the page cache land here).
        var userSeconds = 0.0
        var systemSeconds = 0.0
    }

    /// Runs `command`, through `/bin/sh -c` (its words joined by spaces) when `shell`.
    static func run(_ command: [String], shell: Bool) -> Result {
        shell ? run(["/bin/sh", "-c", command.joined(separator: " ")]) : run(command)
    }

    static func run(_ arguments: [String]) -> Result {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        fflush(nil)  // what was printed so far comes before the command's own output
        let start = now()
        let rc = posix_spawnp(&pid, arguments[0], &fileActions, nil, argv, environ)
        guard rc == 0 else { return Result(status: 127, seconds: 0, peakRSSKiB: 0) }
        // The command's anonymous memory is sampled on another thread, so that its exit is
        // noticed here at once (a polling wait would add up to a sampling period to its time).
        let sampler = AnonymousMemorySampler(pid: pid)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = now() - start
        let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        func cpu(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Result(status: exited, seconds: seconds, peakRSSKiB: Int(usage.ru_maxrss), peakAnonKiB: sampler.stop(),
                      userSeconds: cpu(usage.ru_utime), systemSeconds: cpu(usage.ru_stime))
    }

    /// The `RssAnon` of `pid` and its descendants (the children of each of its threads), in KiB
    /// (0 where `/proc` does not say).
    static func anonymousKiB(tree pid: pid_t) -> Int {
        #if os(Linux)
        var total = 0
        var pending = [pid]
        while let next = pending.popLast() {
            if let status = readText("/proc/\(next)/status", keepingNewlines: true),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) {
                total += Int(String(line.dropFirst("RssAnon:".count).drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber })) ?? 0
            }
            guard let tasks = opendir("/proc/\(next)/task") else { continue }
            while let entry = readdir(tasks) {
                let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard task.first?.isNumber == true, let children = readText("/proc/\(next)/task/\(task)/children") else { continue }
                pending += children.split(separator: " ").compactMap { pid_t($0) }
            }
            closedir(tasks)
        }
        return total
        #else
        return 0
        #endif
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// One tool on one task: the samples of every run.
struct Measurement {
    var task: String
    var tool: String
    var bytes: Int
    /// Records or events processed per run (0 when not counted).
    var units: Int = 0
    var samples: [Runner.Result]
    /// The round of each sample when the tools ran interleaved (``Bench/interleave(_:warmup:_:)``).
    var rounds: [Int] = []

    var medianSeconds: Double { median(samples.map(\.seconds)) }

    /// `other`'s time over this one's, for each round both ran in.
    func pairedRatios(over other: Measurement) -> [Double] {
        guard !rounds.isEmpty, !other.rounds.isEmpty else { return [] }
        var theirs: [Int: Double] = [:]
        for (round, sample) in zip(other.rounds, other.samples) { theirs[round] = sample.seconds }
        return zip(rounds, samples).compactMap { round, sample in theirs[round].map { $0 / sample.seconds } }
    }

    var peakRSSMiB: Double { Double(samples.map(\.peakRSSKiB).max() ?? 0) / 1024 }

    /// The largest sampled anonymous memory of any run (0 where not sampled).
    var peakAnonMiB: Double { Double(samples.map(\.peakAnonKiB).max() ?? 0) / 1024 }

    var megabytesPerSecond: Double { Double(bytes) / 1e6 / medianSeconds }

    var unitsPerSecond: String { units > 0 ? format(Double(units) / medianSeconds, 0) : "—" }

    var line: String {
        "  \(tool): median \(format(medianSeconds, 2)) s of \(samples.count) (\(samples.map { format($0.seconds, 2) }.joined(separator: ", "))), \(format(megabytesPerSecond, 1)) MB/s, \(unitsPerSecond) units/s, peak RSS \(format(peakRSSMiB, 1)) MiB, anonymous \(format(peakAnonMiB, 1)) MiB; CPU median user \(format(median(samples.map(\.userSeconds)), 2)) s, system \(format(median(samples.map(\.systemSeconds)), 2)) s"
    }

    static let markdownHeader = "| task | tool | median s | MB/s | units/s | peak RSS MiB |\n|---|---|---:|---:|---:|---:|"
    var markdownRow: String {
        "| \(task) | \(tool) | \(format(medianSeconds, 2)) | \(format(megabytesPerSecond, 1)) | \(unitsPerSecond) | \(format(peakRSSMiB, 1)) |"
    }
}

/// The middle value (the upper one of an even count), as ``Measurement/medianSeconds`` takes it.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func format(_ value: Double, _ digits: Int) -> String {
    if value < 0 { return "-" + format(-value, digits) }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (value * scale).rounded()
    let whole = Int(scaled / scale)
    var fraction = String(Int(scaled) - whole * Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return digits == 0 ? String(whole) : "\(whole).\(fraction)"
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// How many regular files are directly in `directory`, and their total size in bytes.
func folderContents(_ directory: String) -> (files: Int, bytes: Int) {
    guard let handle = opendir(directory) else { return (0, 0) }
    defer { closedir(handle) }
    var files = 0, bytes = 0
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var info = stat()
        guard stat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
        files += 1
        bytes += Int(info.st_size)
    }
    return (files, bytes)
}

/// Whether `path` is a directory.
func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// The number of lines of the file `path` (newlines, plus a last line without one).
func lineCount(_ path: String) -> Int {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var lines = 0
    var last: UInt8 = 0x0A
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        buffer.withUnsafeBytes { bytes in
            for byte in bytes[..<n] where byte == 0x0A { lines += 1 }
            last = bytes[n - 1]
        }
    }
    return last == 0x0A ? lines : lines + 1
}

/// The last modification time of `path` in seconds (0 when it does not exist).
func modificationTime(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0 }
    #if canImport(Darwin)
    return Int(info.st_mtimespec.tv_sec)
    #else
    return Int(info.st_mtim.tv_sec)
    #endif
}

/// A small text file's contents, without trailing newlines unless `keepingNewlines`; `nil` when it
/// cannot be opened.
func readText(_ path: String, keepingNewlines: Bool = false) -> String? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n == 0 { break }
        bytes += buffer[..<n]
    }
    while !keepingNewlines && bytes.last == 0x0A { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes `text` to the file `path` (replacing it); a failure ends the benchmark.
func writeText(_ path: String, _ text: String) {
    guard let file = fopen(path, "wb") else { fatal("cannot write \(path)") }
    defer { fclose(file) }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, file) == bytes.count else { fatal("cannot write \(path)") }
}

func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    let cwd = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return cwd.hasSuffix("/Benchmarks") ? String(cwd.dropLast("/Benchmarks".count)) : cwd
}

func fatal(_ message: String) -> Never {
    let text = "ferry-bench: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

/// Environment variables without Foundation.
struct ProcessInfoLite {
    subscript(name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

/// Samples a process tree's anonymous memory every 20 ms on a thread of its own until stopped.
///
/// `@unchecked Sendable`: `peak` is written by the sampling thread only until `stopped` is
/// signalled, and read after `finished` is.
private final class AnonymousMemorySampler: @unchecked Sendable {
    private var peak = 0
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(pid: pid_t) {
        DispatchQueue.global().async { [self] in
            repeat {
                peak = max(peak, Runner.anonymousKiB(tree: pid))
            } while stopped.wait(timeout: .now() + .milliseconds(20)) == .timedOut
            finished.signal()
        }
    }

    /// Stops sampling and returns the largest sample, in KiB.
    func stop() -> Int {
        stopped.signal()
        finished.wait()
        return peak
    }
}
