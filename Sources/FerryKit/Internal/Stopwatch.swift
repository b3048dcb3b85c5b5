import FerryIO

/// Wall-clock time since creation (the monotonic clock).
package struct Stopwatch {
    private let start = Stopwatch.now()

    /// A stopwatch started now.
    package init() {}

    /// Seconds on the monotonic clock.
    package static func now() -> Double { Syscall.monotonicSeconds() }

    /// Seconds since the stopwatch started.
    package var seconds: Double { Stopwatch.now() - start }
}
