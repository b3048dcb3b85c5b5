#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Saved `changes/zone` responses, as users hold them (pretty-printed, one zone's page of up to 200
/// changed records per file), replayed to the final state: `ferry replay FOLDER/ --out STATE`, on
/// the folder and on its gzipped copy (`*.json.gz`), against duckdb on the same history as one flat
/// event log (``duckdbReplay(_:to:events:)``, the `replay` task's peer and SQL: duckdb reads no
/// folder of nested pages as fast). The three run interleaved (``Bench/interleave(_:warmup:_:)``);
/// ratios of time and of peak RSS; then untimed checks that Ferry's states and duckdb's hold the
/// same records (``checkStates(_:_:_:)``).
///
/// Inputs: CHANGES_RESPONSES (default DATA/changes-responses, made from changes.ndjson with
/// `SHARED/events_to_response_files.py`), CHANGES_RESPONSES_GZ (default CHANGES_RESPONSES + `-gz`)
/// and CHANGES, the flat history duckdb reads (default DATA/changes.ndjson). Set CHANGES_RESPONSES
/// and CHANGES together: both must hold one history. Units are responses for Ferry, events for
/// duckdb; Ferry's MB/s are of the uncompressed responses, for the gzipped folder too.
@MainActor func replayResponsesTask() {
    guard (Bench.environment["CHANGES_RESPONSES"] == nil) == (Bench.environment["CHANGES"] == nil) else {
        fatal("set CHANGES_RESPONSES and CHANGES together: the responses and duckdb's flat history must hold the same history")
    }
    let history = Bench.environment["CHANGES"] ?? Bench.ensureData("changes.ndjson", count: 2_000_000, changes: true)
    guard access(history, R_OK) == 0 else { fatal("\(history) (CHANGES) cannot be read") }
    let (folder, gzFolder) = Bench.responseFolders("CHANGES_RESPONSES", name: "changes-responses") { out in
        "python3 '\(Bench.shared)/events_to_response_files.py' '\(history)' '\(out)'"
    }
    let (files, bytes) = folderContents(folder)
    let gzipped = folderContents(gzFolder)
    guard files > 0, gzipped.files == files else { fatal("\(folder) holds \(files) files and \(gzFolder) \(gzipped.files): expected the same, at least one") }
    let events = lineCount(history)
    let ferryOut = Bench.data + "/replay-responses-ferry.ndjson", ferryGzOut = Bench.data + "/replay-responses-ferry-gz.ndjson"
    let duckOut = Bench.data + "/replay-responses-duckdb.ndjson"
    let outputs = [ferryOut, ferryOut + ".tokens.json", ferryGzOut, ferryGzOut + ".tokens.json", duckOut]
    let ferry = "ferry replay, .json folder", ferryGz = "ferry replay, .json.gz folder"
    print("\n== saved changes/zone responses → final state: \(files) responses, \(bytes / 1_000_000) MB (\(gzipped.bytes / 1_000_000) MB gzipped); "
          + "duckdb's flat history \(events) events, \(fileSize(history) / 1_000_000) MB")
    Bench.warm(folder, gzFolder, history)
    for path in outputs { unlink(path) }
    Bench.interleave("replay-responses", [
        .init(tool: ferry, command: [Bench.ferry, "replay", folder + "/", "--out", ferryOut, "--quiet"], bytes: bytes, units: files,
              removing: [ferryOut, ferryOut + ".tokens.json"]),
        .init(tool: ferryGz, command: [Bench.ferry, "replay", gzFolder + "/", "--out", ferryGzOut, "--quiet"], bytes: bytes, units: files,
              removing: [ferryGzOut, ferryGzOut + ".tokens.json"]),
        duckdbReplay(history, to: duckOut, events: events),
    ])
    let plain = Bench.ratio("replay-responses", ferry, over: duckdbReplayTool)
    let compressed = Bench.ratio("replay-responses", ferryGz, over: duckdbReplayTool)
    Bench.compareRatios("replay-responses", "the .json.gz folder's", compressed, with: plain, "the .json folder's")
    Bench.memory("replay-responses", ferry, over: duckdbReplayTool)
    Bench.memory("replay-responses", ferryGz, over: duckdbReplayTool)

    print("\n== replay-responses checks (untimed)")
    checkStates("ferry's state from the .json folder and duckdb's from the flat history hold the same records", ferryOut, duckOut)
    checkStates("ferry's state from the .json.gz folder and duckdb's from the flat history hold the same records", ferryGzOut, duckOut)
    for path in outputs { unlink(path) }
}
