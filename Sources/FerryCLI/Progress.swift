import FerryIO
import FerryPipeline
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time since creation.
struct Stopwatch {
    private let start = Stopwatch.now()

    static func now() -> Double { Syscall.monotonicSeconds() }

    var seconds: Double { Stopwatch.now() - start }
}

/// Progress on stderr, only when stderr is a terminal, at most a few times a second.
final class Progress {
    private let enabled: Bool
    private var last = 0.0
    private var calls = 0

    /// Whether progress is shown at all (callers skip computing figures when not).
    var isEnabled: Bool { enabled }
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    func update(records: Int, bytes: Int, clock: Stopwatch) {
        calls &+= 1
        guard enabled, calls & 0x3FF == 0 else { return }
        let now = clock.seconds
        guard now - last >= 0.25 else { return }
        last = now
        shown = true
        StandardError.write("\r\u{1B}[K\(records) records, \(format(Double(bytes) / 1e6, 1)) MB, \(format(Double(bytes) / 1e6 / max(now, 1e-9), 1)) MB/s")
    }

    func clear() {
        if shown { StandardError.write("\r\u{1B}[K") }
        shown = false
    }
}
