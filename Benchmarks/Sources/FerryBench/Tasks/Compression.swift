#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// gzip level 6 on 2 threads against `pigz -6 -p 2` and `gzip -6`, on the 1M-record file, in the
/// same interleaved rounds (``Bench/interleave(_:warmup:_:)``): `ferry convert` to a `.ndjson.gz`
/// (parse, serialize, compress: the goal's line), the same to standard output (`--gzip`), and
/// FerryCompression's gzip streams alone (`ferry-gzip`). Then the size of every output against
/// `gzip -6`'s, and `gzip -t` on Ferry's (untimed).
///
/// The peers write to standard output redirected by the shell (`> out`); so do the `ferry-gzip`
/// and `convert … - --gzip` lines. Ferry's atomic file output (temporary file, then rename) is
/// timed on lines of its own. Every output is deleted and `sync`ed before each run, untimed.
@MainActor func compressTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let gzipTool = Bench.helper("ferry-gzip")
    let out = Bench.data + "/c"
    print("\n== gzip level 6, \(size / 1_000_000) MB")
    Bench.warm(input)
    let convert = "ferry convert → .ndjson.gz", convertOut = "ferry convert - --gzip (stdout)"
    let stream = "ferry-gzip -6 -p 2", streamAtomic = "ferry-gzip -6 -p 2, atomic file output"
    let pigz = "pigz -6 -p 2", gzip = "gzip -6"
    let outputs = [convert: out + ".ndjson.gz", convertOut: out + ".convert.gz", stream: out + ".gz",
                   streamAtomic: out + ".atomic.gz", pigz: out + ".pigz.gz", gzip: out + ".gzip.gz"]
    func entry(_ tool: String, _ command: [String], shell: Bool = false) -> Bench.Entry {
        .init(tool: tool, command: command, shell: shell, bytes: size, units: 1_000_000, removing: [outputs[tool]!])
    }
    Bench.interleave("compress", warmup: true, [
        entry(convert, [Bench.ferry, "convert", input, outputs[convert]!, "--quiet"]),
        entry(convertOut, ["'\(Bench.ferry)' convert '\(input)' - --gzip --quiet > '\(outputs[convertOut]!)'"], shell: true),
        entry(stream, ["'\(gzipTool)' -c -6 -p 2 '\(input)' - > '\(outputs[stream]!)'"], shell: true),
        entry(streamAtomic, [gzipTool, "-c", "-6", "-p", "2", input, outputs[streamAtomic]!]),
        entry(pigz, ["pigz -6 -p 2 -c '\(input)' > '\(outputs[pigz]!)'"], shell: true),
        entry(gzip, ["gzip -6 -c '\(input)' > '\(outputs[gzip]!)'"], shell: true),
    ])
    var sizes: [String: Int] = [:]
    for (tool, path) in outputs where Bench.results.contains(where: { $0.task == "compress" && $0.tool == tool }) {
        sizes[tool] = fileSize(path)
    }
    for tool in [convert, convertOut, stream, streamAtomic, pigz, gzip] {
        guard let bytes = sizes[tool] else { continue }
        var line = "  output of \(tool): \(bytes) bytes (\(format(Double(bytes) * 100 / Double(size), 2))% of the input)"
        if tool.hasPrefix("ferry") {
            let check = Runner.run(["gzip", "-t", outputs[tool]!])
            line += check.status == 0 ? "; gzip -t: valid" : "; gzip -t: INVALID (exit \(check.status))"
        }
        print(line)
    }
    for (_, path) in outputs { unlink(path) }
    if let reference = sizes[gzip] {
        for tool in [convert, stream] {
            guard let ours = sizes[tool] else { continue }
            let line = "size [compress]: \(tool)'s output is \(format(Double(ours) / Double(reference), 4))× gzip -6's "
                + "(\(ours) vs \(reference) bytes; the goal: at most 1.01×)"
            Bench.ratios.append(line)
            print("  " + line)
        }
    }
    Bench.ratio("compress", convert, over: pigz)
    Bench.ratio("compress", convertOut, over: pigz)
    Bench.ratio("compress", stream, over: pigz)
    Bench.ratio("compress", streamAtomic, over: pigz)
    Bench.ratio("compress", stream, over: gzip)
    Bench.ratio("compress", convert, over: gzip)
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
