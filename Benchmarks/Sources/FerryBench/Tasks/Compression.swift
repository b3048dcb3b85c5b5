#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// gzip level 6 on 2 threads against `pigz -6 -p 2` (and `gzip -6` for the size), and
/// decompression against `gzip -d` and `pigz -d`, on the 1M-record file; runs interleaved
/// (``Bench/interleave(_:warmup:_:)``).
///
/// Every tool writes the same way, to standard output redirected by the shell (`> out`, which
/// truncates the previous run's file), so the ratio compares compression and nothing else. Ferry's
/// atomic file output (temporary file, then rename over the old one) is timed on its own line:
/// on this VM, filling fresh page-cache pages before the old file's are freed costs up to 2 s of
/// system time more than truncating, whichever tool writes.
@MainActor func compressTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let gzipTool = Bench.helper("ferry-gzip")
    let out = Bench.data + "/c.gz"
    print("\n== gzip level 6, \(size / 1_000_000) MB")
    Bench.warm(input)
    let outputs = ["ferry gzip -6 (2 threads)": out, "ferry gzip -6 (2 threads), atomic file output": out + ".atomic",
                   "pigz -6 -p 2": out + ".pigz", "gzip -6": out + ".gzip"]
    Bench.interleave("compress", [
        .init(tool: "ferry gzip -6 (2 threads)", command: ["'\(gzipTool)' -c -6 -p 2 '\(input)' - > '\(out)'"], shell: true,
              bytes: size, units: 1_000_000),
        .init(tool: "ferry gzip -6 (2 threads), atomic file output", command: [gzipTool, "-c", "-6", "-p", "2", input, out + ".atomic"],
              bytes: size, units: 1_000_000),
        .init(tool: "pigz -6 -p 2", command: ["pigz -6 -p 2 -c '\(input)' > '\(out).pigz'"], shell: true, bytes: size, units: 1_000_000),
        .init(tool: "gzip -6", command: ["gzip -6 -c '\(input)' > '\(out).gzip'"], shell: true, bytes: size, units: 1_000_000),
    ])
    var sizes: [String: Int] = [:]
    for (tool, path) in outputs {
        if Bench.results.contains(where: { $0.task == "compress" && $0.tool == tool }) { sizes[tool] = fileSize(path) }
        unlink(path)
    }
    Bench.measure("compress", "ferry convert → .ndjson.gz (parse, serialize, compress)", bytes: size, units: 1_000_000,
                  [Bench.ferry, "convert", input, out + ".ndjson.gz", "--quiet"])
    unlink(out + ".ndjson.gz")
    for (tool, bytes) in sizes.sorted(by: { $0.key < $1.key }) where !tool.hasPrefix("ferry convert") {
        print("  output of \(tool): \(bytes) bytes (\(format(Double(bytes) * 100 / Double(size), 2))% of the input)")
    }
    if let ours = sizes["ferry gzip -6 (2 threads)"], let gzip = sizes["gzip -6"] {
        let difference = Double(ours) * 100 / Double(gzip) - 100
        let line = "size [compress]: ferry's output is \(format(abs(difference), 2))% \(difference > 0 ? "larger" : "smaller") than gzip -6's"
        Bench.ratios.append(line)
        print("  " + line)
    }
    Bench.ratio("compress", "ferry gzip -6 (2 threads)", over: "pigz -6 -p 2")
    Bench.ratio("compress", "ferry gzip -6 (2 threads), atomic file output", over: "pigz -6 -p 2")
    Bench.ratio("compress", "ferry gzip -6 (2 threads)", over: "gzip -6")
}

@MainActor func decompressTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let compressed = Bench.data + "/records.ndjson.gz"
    if access(compressed, R_OK) != 0 {
        print("preparing \(compressed) with gzip -6 …")
        _ = Runner.run(["/bin/sh", "-c", "gzip -6 -c '\(input)' > '\(compressed)'"])
    }
    let out = Bench.data + "/d.ndjson"
    print("\n== gzip decompression, \(size / 1_000_000) MB out")
    Bench.warm(compressed)
    Bench.interleave("decompress", [
        .init(tool: "ferry gunzip", command: ["'\(Bench.helper("ferry-gzip"))' -d '\(compressed)' - > '\(out)'"], shell: true,
              bytes: size, units: 1_000_000),
        .init(tool: "gzip -d", command: ["gzip -dc '\(compressed)' > '\(out)'"], shell: true, bytes: size, units: 1_000_000),
        .init(tool: "pigz -d", command: ["pigz -dc '\(compressed)' > '\(out)'"], shell: true, bytes: size, units: 1_000_000),
    ])
    unlink(out)
    Bench.ratio("decompress", "ferry gunzip", over: "gzip -d")
    Bench.ratio("decompress", "ferry gunzip", over: "pigz -d")
}
