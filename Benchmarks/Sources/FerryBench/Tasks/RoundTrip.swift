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
///   From run AA on, the speed goal is judged on this pair; until then it was judged on the next.
/// - writing a new file: what a user's run costs, including the kernel's copy into the page cache.
///   On these VMs that copy does not cost the same from run to run. Freed memory is reported to the
///   host (`page_reporting`, 2 MiB blocks), and the first touch of a reported page faults on the
///   host. In a `dd bs=1M` test, writing 700 MB took 0.21 s of system time right after the
///   previous file was deleted and 2.0 s five seconds later. In the benchmark, writing the file
///   added 0.3–0.8 s of system time (medians) to each tool. The medians of user and system CPU
///   time are printed for every tool.
///
/// Before every run the previous run's output file is deleted, untimed, and written-back data
/// synced, so every file run writes a new file and no run pays for another's write-back.
/// (Truncating the previous output instead made whoever came next pay for it.) The order of the
/// entries gives every file-writing entry one neighbour that writes a file and one that does not,
/// so each follows a deleted file in half the rounds. (In runs AA–AD the orjson loop's file run
/// always came right after Ferry's atomic one, and Ferry's `>` run after a run that wrote nothing.)
/// Ferry's file runs write to standard output (`ferry convert IN - > out`) and, on their own
/// line, with its atomic file output (a temporary file, then renamed).
@MainActor func roundTripTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let out = Bench.data + "/out.ndjson"
    print("\n== parse + serialize, \(size / 1_000_000) MB, 1M records, one core (taskset -c 0)")
    Bench.warm(input)
    unlink(out)
    let orjson = Bench.shared + "/peers/roundtrip_orjson.py"
    // In this order, every file-writing entry has one neighbour that writes a file and one that
    // does not: each runs half the time right after a file was deleted, half the time after a
    // run that wrote none (see ``Bench/interleave(_:warmup:_:)``).
    let ferryNull = Bench.Entry(tool: "ferry convert > /dev/null",
                                command: ["taskset -c 0 '\(Bench.ferry)' convert '\(input)' - --quiet > /dev/null"],
                                shell: true, bytes: size, units: 1_000_000, removing: [out])
    let orjsonNull = Bench.Entry(tool: "python orjson loop > /dev/null",
                                 command: ["taskset", "-c", "0", "python3", orjson, input, "/dev/null"],
                                 bytes: size, units: 1_000_000, removing: [out])
    let ferryFile = Bench.Entry(tool: "ferry convert",
                                command: ["taskset -c 0 '\(Bench.ferry)' convert '\(input)' - --quiet > '\(out)'"],
                                shell: true, bytes: size, units: 1_000_000, removing: [out])
    let ferryAtomic = Bench.Entry(tool: "ferry convert, atomic file output",
                                  command: ["taskset", "-c", "0", Bench.ferry, "convert", input, out, "--quiet"],
                                  bytes: size, units: 1_000_000, removing: [out])
    let orjsonFile = Bench.Entry(tool: "python orjson loop", command: ["taskset", "-c", "0", "python3", orjson, input, out],
                                 bytes: size, units: 1_000_000, removing: [out])
    let jq = Bench.Entry(tool: "jq -c .", command: ["taskset -c 0 jq -c . '\(input)' > '\(out)'"], shell: true,
                         bytes: size, units: 1_000_000, removing: [out])
    Bench.interleave("roundtrip", warmup: true, [ferryNull, ferryFile, orjsonFile, orjsonNull, ferryAtomic, jq])
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
