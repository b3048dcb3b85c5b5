#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// NDJSON parse → model → serialize on one core, against the orjson loop and jq, runs interleaved
/// (``Bench/interleave(_:warmup:_:)``). A warm-up round comes first, not counted.
///
/// Ferry and the orjson loop run twice each per round:
/// - writing to `/dev/null`: parse + serialize alone, every byte produced and written, none kept.
///   This is the comparison the speed goal names.
/// - writing a new file: what a user's run costs, including the kernel's copy into the page cache.
///   On these VMs that copy is not a fixed cost. Freed memory is reported to the host
///   (`page_reporting`, in 2 MiB blocks, a few seconds after it is freed), and the first touch
///   of a reported page faults on the host. Writing 700 MB with `dd bs=1M` took 0.21 s of system
///   time right after the previous file was deleted, and 2.0 s five seconds later. The same
///   amount lands on both tools' runs, so it narrows the ratio of the faster one, and it varies
///   from run to run. The medians of user and system CPU time are printed for every tool.
///
/// Before every run the previous run's output file is deleted, untimed, and written-back data
/// synced, so every file run writes a new file and no run pays for another's. (Truncating the
/// previous output instead made whoever came next pay for it, and in the rotation Ferry came after
/// jq's slow writes more often than the orjson loop.) Ferry's file runs write to standard output (`ferry convert IN - > out`) and, on their own
/// line, with its atomic file output (a temporary file, then renamed).
@MainActor func roundTripTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let out = Bench.data + "/out.ndjson"
    print("\n== parse + serialize, \(size / 1_000_000) MB, 1M records, one core (taskset -c 0)")
    Bench.warm(input)
    unlink(out)
    let orjson = Bench.shared + "/peers/roundtrip_orjson.py"
    Bench.interleave("roundtrip", warmup: true, [
        .init(tool: "ferry convert > /dev/null", command: ["taskset -c 0 '\(Bench.ferry)' convert '\(input)' - --quiet > /dev/null"],
              shell: true, bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "python orjson loop > /dev/null", command: ["taskset", "-c", "0", "python3", orjson, input, "/dev/null"],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "ferry convert", command: ["taskset -c 0 '\(Bench.ferry)' convert '\(input)' - --quiet > '\(out)'"], shell: true,
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "ferry convert, atomic file output", command: ["taskset", "-c", "0", Bench.ferry, "convert", input, out, "--quiet"],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "python orjson loop", command: ["taskset", "-c", "0", "python3", orjson, input, out],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "jq -c .", command: ["taskset -c 0 jq -c . '\(input)' > '\(out)'"], shell: true, bytes: size, units: 1_000_000, removing: [out]),
    ])
    unlink(out)
    Bench.ratio("roundtrip", "ferry convert > /dev/null", over: "python orjson loop > /dev/null")
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
