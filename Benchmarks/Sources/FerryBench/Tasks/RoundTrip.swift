#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// NDJSON parse → model → serialize on one core, against the orjson loop and jq, runs interleaved
/// (``Bench/interleave(_:warmup:_:)``).
///
/// Every tool writes a new file: the previous run's output is deleted before each run, untimed,
/// and written back data synced. A warm-up round comes first, not counted.
/// (Truncating the previous output instead made whoever came next pay for it, up to a second or
/// two of system time on this VM when that file was being written back, and in the rotation of
/// four tools Ferry came after jq's slow writes in three rounds of five, the orjson loop in none.)
/// Ferry is timed writing to standard output (`ferry convert IN - > out`) and, on its own line,
/// with its atomic file output (a temporary file, then renamed).
@MainActor func roundTripTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let out = Bench.data + "/out.ndjson"
    print("\n== parse + serialize, \(size / 1_000_000) MB, 1M records, one core (taskset -c 0)")
    Bench.warm(input)
    unlink(out)
    Bench.interleave("roundtrip", warmup: true, [
        .init(tool: "ferry convert", command: ["taskset -c 0 '\(Bench.ferry)' convert '\(input)' - --quiet > '\(out)'"], shell: true,
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "ferry convert, atomic file output", command: ["taskset", "-c", "0", Bench.ferry, "convert", input, out, "--quiet"],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "python orjson loop", command: ["taskset", "-c", "0", "python3", Bench.shared + "/peers/roundtrip_orjson.py", input, out],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "jq -c .", command: ["taskset -c 0 jq -c . '\(input)' > '\(out)'"], shell: true, bytes: size, units: 1_000_000, removing: [out]),
    ])
    unlink(out)
    Bench.ratio("roundtrip", "ferry convert", over: "python orjson loop")
    Bench.ratio("roundtrip", "ferry convert, atomic file output", over: "python orjson loop")
    Bench.ratio("roundtrip", "ferry convert", over: "jq -c .")
}

/// Peak RSS of a conversion at 100k and 1M records: it must not grow with the input.
@MainActor func rssTask() {
    let small = Bench.ensureData("records-100k.ndjson", count: 100_000)
    let large = Bench.ensureData("records.ndjson", count: 1_000_000)
    print("\n== peak RSS as input grows")
    Bench.measure("rss-100k", "ferry convert 100k", bytes: fileSize(small), units: 100_000,
                  [Bench.ferry, "convert", small, Bench.data + "/o.ndjson", "--quiet"])
    Bench.measure("rss-1m", "ferry convert 1M", bytes: fileSize(large), units: 1_000_000,
                  [Bench.ferry, "convert", large, Bench.data + "/o.ndjson", "--quiet"])
    unlink(Bench.data + "/o.ndjson")
}
