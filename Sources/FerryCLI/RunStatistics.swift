import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts and timing of one run, printed as the summary line or as JSON.
struct RunStatistics {
    var recordsIn = 0
    var recordsOut = 0
    var rejected = 0
    var bytesIn = 0
    var bytesOut = 0
    var seconds = 0.0
    /// Records and bytes written by the parallel NDJSON path (not counted by the writer).
    var parallelRecordsOut = 0
    var parallelBytesOut = 0

    var megabytesPerSecond: Double { seconds > 0 ? Double(bytesIn) / 1e6 / seconds : 0 }

    var line: String {
        "\(recordsIn) records in, \(recordsOut) out, \(rejected) rejected, \(format(seconds, 2)) s, \(format(megabytesPerSecond, 1)) MB/s"
    }

    var json: String {
        let object: JSONObject = [
            "recordsIn": .number(JSONNumber(Int64(recordsIn))),
            "recordsOut": .number(JSONNumber(Int64(recordsOut))),
            "rejected": .number(JSONNumber(Int64(rejected))),
            "bytesIn": .number(JSONNumber(Int64(bytesIn))),
            "bytesOut": .number(JSONNumber(Int64(bytesOut))),
            "seconds": .number(JSONNumber(text: format(seconds, 3))),
            "megabytesPerSecond": .number(JSONNumber(text: format(megabytesPerSecond, 1))),
        ]
        var out = JSONOutput()
        out.appendValue(.object(object))
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// Formats a non-negative number with `digits` decimals (no Foundation).
func format(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (value * scale).rounded()
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled) - whole * Int64(scale)
    if digits == 0 { return String(whole) }
    var fractionText = String(fraction)
    while fractionText.count < digits { fractionText = "0" + fractionText }
    return "\(whole).\(fractionText)"
}

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
