#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Saved `records/query` responses, as users hold them (pretty-printed, one response of 100 records
/// per file), to one NDJSON file: `ferry convert FOLDER/ OUT` against the Python orjson loop over
/// the same files (`SHARED/peers/query_files_orjson.py`), and the same on the gzipped copy of the
/// folder (`*.json.gz`) against that loop reading each file with `gzip.open`
/// (`Benchmarks/Peers/query_files_gz_orjson.py`). All four run interleaved
/// (``Bench/interleave(_:warmup:_:)``); with `JQ=1`, `jq -c '.records[]' FOLDER/*.json` too (over
/// a minute on the full folder, so not by default). Then untimed checks that each Ferry output
/// holds the same records as its peer's (`Benchmarks/Peers/same_records.py`: parsed JSON, key
/// order and number spelling aside).
///
/// Folders: RESPONSES (default DATA/query-responses, made from records.ndjson with
/// `SHARED/records_to_query_files.py`) and RESPONSES_GZ (default RESPONSES + `-gz`). Units are
/// responses; MB/s are of the uncompressed responses, for the gzipped folder too.
@MainActor func responsesTask() {
    let (folder, gzFolder) = queryResponseFolders()
    let (files, bytes) = folderContents(folder)
    let gzipped = folderContents(gzFolder)
    guard files > 0, gzipped.files == files else { fatal("\(folder) holds \(files) files and \(gzFolder) \(gzipped.files): expected the same, at least one") }
    let ferryOut = Bench.data + "/responses-ferry.ndjson", orjsonOut = Bench.data + "/responses-orjson.ndjson"
    let ferryGzOut = Bench.data + "/responses-ferry-gz.ndjson", orjsonGzOut = Bench.data + "/responses-orjson-gz.ndjson"
    let jqOut = Bench.data + "/responses-jq.ndjson"
    let outputs = [ferryOut, orjsonOut, ferryGzOut, orjsonGzOut, jqOut]
    let ferry = "ferry convert, .json folder", orjson = "python orjson loop, .json folder"
    let ferryGz = "ferry convert, .json.gz folder", orjsonGz = "python orjson loop (gzip.open), .json.gz folder"
    let jq = "jq -c '.records[]', .json folder"
    print("\n== saved records/query responses → one NDJSON: \(files) responses, \(bytes / 1_000_000) MB (\(gzipped.bytes / 1_000_000) MB gzipped)")
    Bench.warm(folder, gzFolder)
    for path in outputs { unlink(path) }
    var entries: [Bench.Entry] = [
        .init(tool: ferry, command: [Bench.ferry, "convert", folder + "/", ferryOut, "--quiet"], bytes: bytes, units: files,
              removing: [ferryOut]),
        .init(tool: orjson, command: ["python3", Bench.shared + "/peers/query_files_orjson.py", folder + "/", orjsonOut],
              bytes: bytes, units: files, removing: [orjsonOut]),
        .init(tool: ferryGz, command: [Bench.ferry, "convert", gzFolder + "/", ferryGzOut, "--quiet"], bytes: bytes, units: files,
              removing: [ferryGzOut]),
        .init(tool: orjsonGz, command: ["python3", Bench.peer("query_files_gz_orjson.py"), gzFolder + "/", orjsonGzOut],
              bytes: bytes, units: files, removing: [orjsonGzOut]),
    ]
    if Bench.environment["JQ"] == "1" {
        entries.append(.init(tool: jq, command: ["jq -c '.records[]' '\(folder)'/*.json > '\(jqOut)'"], shell: true,
                             bytes: bytes, units: files, removing: [jqOut]))
    }
    Bench.interleave("responses", entries)
    let plain = Bench.ratio("responses", ferry, over: orjson)
    let compressed = Bench.ratio("responses", ferryGz, over: orjsonGz)
    Bench.compareRatios("responses", "the .json.gz folder's", compressed, with: plain, "the .json folder's")
    Bench.ratio("responses", ferry, over: jq)

    print("\n== responses checks (untimed)")
    checkRecords("ferry's NDJSON from the .json folder and the orjson loop's hold the same records", ferryOut, orjsonOut)
    checkRecords("ferry's NDJSON from the .json.gz folder and the orjson loop's hold the same records", ferryGzOut, orjsonGzOut)
    if Bench.results.contains(where: { $0.task == "responses" && $0.tool == jq }) {
        checkRecords("jq's NDJSON from the .json folder and the orjson loop's hold the same records", jqOut, orjsonOut)
    }
    for path in outputs { unlink(path) }
}

/// The saved `records/query` folders (RESPONSES, RESPONSES_GZ): made from records.ndjson with
/// `SHARED/records_to_query_files.py` when missing, the gzipped copy from the plain one.
@MainActor func queryResponseFolders() -> (plain: String, gzipped: String) {
    Bench.responseFolders("RESPONSES", name: "query-responses") { out in
        "python3 '\(Bench.shared)/records_to_query_files.py' '\(Bench.ensureData("records.ndjson", count: 1_000_000))' '\(out)'"
    }
}

/// Compares two NDJSON record files as multisets of parsed JSON records
/// (`Benchmarks/Peers/same_records.py`); a failure is listed with the ratios.
@MainActor func checkRecords(_ claim: String, _ a: String, _ b: String) {
    guard access(a, R_OK) == 0, access(b, R_OK) == 0 else {
        print("  skipped (an output is missing): \(claim)")
        return
    }
    let status = Runner.run(["python3", Bench.peer("same_records.py"), a, b]).status
    print("  \(status == 0 ? "ok" : "FAILED (same_records.py exit \(status))"): \(claim)")
    if status != 0 { Bench.ratios.append("responses check failed: \(claim)") }
}
