import FerryKit
import FerryPipeline

/// Progress on stderr, only when stderr is a terminal, at most a few times a second.
final class Progress {
    private let enabled: Bool
    private var last = 0.0
    private var calls = 0
    private var lastBytes = 0

    /// Whether progress is shown at all (callers skip computing figures when not).
    var isEnabled: Bool { enabled }
    private var shown = false

    private let write: (String) -> Void

    init(enabled: Bool, write: @escaping (String) -> Void = { StandardError.write($0) }) {
        self.enabled = enabled
        self.write = write
    }

    func update(records: Int, bytes: Int, clock: Stopwatch) {
        update(records: records, bytes: bytes, seconds: { clock.seconds })
    }

    /// Shows the figures when a quarter of a second went by since they were last shown (`seconds`:
    /// since the run began, read only when needed).
    func update(records: Int, bytes: Int, seconds: () -> Double) {
        calls &+= 1
        // Called per record by some sources and per block of thousands by others: the clock is
        // read every 1024 calls, or once another MiB went by.
        guard enabled, calls & 0x3FF == 0 || bytes - lastBytes >= 1 << 20 else { return }
        lastBytes = bytes
        let now = seconds()
        guard now - last >= 0.25 else { return }
        last = now
        shown = true
        write("\r\u{1B}[K\(records) records, \(format(Double(bytes) / 1e6, 1)) MB, \(format(Double(bytes) / 1e6 / max(now, 1e-9), 1)) MB/s")
    }

    func clear() {
        if shown { write("\r\u{1B}[K") }
        shown = false
    }
}

/// Progress of a replay on stderr (only on a terminal), at most a few times a second.
final class ReplayProgress {
    private let enabled: Bool
    private let clock: Stopwatch
    private var last = 0.0
    private var shown = false

    init(enabled: Bool, clock: Stopwatch) {
        self.enabled = enabled
        self.clock = clock
    }

    /// Whether progress is shown at all.
    var isEnabled: Bool { enabled }

    func update(events: Int, bytes: Int) {
        guard enabled else { return }
        let now = clock.seconds
        guard now - last >= 0.25 else { return }
        last = now
        shown = true
        StandardError.write("\r\u{1B}[K\(events) events, \(format(Double(bytes) / 1e6, 1)) MB, "
                            + "\(format(Double(events) / max(now, 1e-9), 0)) events/s")
    }

    func clear() {
        if shown { StandardError.write("\r\u{1B}[K") }
        shown = false
    }
}
