#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replay of the shared 2M-event change history to its final state, against duckdb
/// (`arg_max … GROUP BY recordName`, the SQL of `../shared/bench/run_peers.sh task_replay`) and the
/// Python orjson loop (unless `PYDICT=0`), interleaved run by run (``Bench/interleave(_:warmup:_:)``), then `--tokens-only`;
/// and untimed checks that the states agree.
///
/// The shared history (`gen_records.py --changes`: `{"token", "op", "recordName", …, "record"}`)
/// is converted to Ferry's change-log format first, untimed, by this package's
/// `ferry-bench-changes IN OUT` (``ferryChangeLog(for:)``: upserts and modifications become
/// `recordSaved`, deletions `recordDeleted`, and every 1000 events each zone touched gets a
/// checkpoint `<zone>@<token>`). The peers read the original file.
@MainActor func replayTask() {
    let history = Bench.ensureData("changes.ndjson", count: 2_000_000, changes: true)
    let events = lineCount(history)
    let log = ferryChangeLog(for: history)
    let historySize = fileSize(history)
    let logSize = fileSize(log)
    let ferryOut = Bench.data + "/replay-ferry.ndjson"
    let duckOut = Bench.data + "/replay-duckdb.ndjson"
    let orjsonOut = Bench.data + "/replay-orjson.ndjson"
    print("\n== replay \(events) events to the final state: Ferry's log \(logSize / 1_000_000) MB, the peers' history \(historySize / 1_000_000) MB")
    Bench.warm(history, log)
    for path in [ferryOut, ferryOut + ".tokens.json", duckOut, orjsonOut] { unlink(path) }
    var entries: [Bench.Entry] = [
        .init(tool: "ferry replay", command: [Bench.ferry, "replay", log, "--out", ferryOut, "--quiet"], bytes: logSize,
              units: events, removing: [ferryOut, ferryOut + ".tokens.json"]),
        duckdbReplay(history, to: duckOut, events: events),
    ]
    // Over a minute a round: PYDICT=0 leaves it out (the goal is judged against duckdb).
    if Bench.environment["PYDICT"] != "0" {
        entries.append(.init(tool: "python orjson dict", command: ["python3", Bench.shared + "/peers/replay_orjson.py", history, orjsonOut],
                             bytes: historySize, units: events, removing: [orjsonOut]))
    }
    Bench.interleave("replay", entries)
    Bench.measure("replay-tokens", "ferry replay --tokens-only", bytes: logSize, units: events,
                  ["\(Bench.ferry) replay '\(log)' --tokens-only > /dev/null"], shell: true)
    Bench.ratio("replay", "ferry replay", over: duckdbReplayTool)
    if Bench.environment["PYDICT"] != "0" { Bench.ratio("replay", "ferry replay", over: "python orjson dict") }
    print("  tokens only: \(tokensRatio()) the full replay's time")

    print("\n== replay checks (untimed)")
    checkStates("ferry's final state and duckdb's hold the same records", ferryOut, duckOut)
    if Bench.environment["PYDICT"] != "0" {
        checkStates("ferry's final state and the orjson loop's hold the same records", ferryOut, orjsonOut)
    }
    // A point in time: the state at the middle checkpoint (token 1,000,000 of the 2M events) against
    // the orjson loop on the events up to it. Checkpoints fall every 1000 events.
    let half = events / 2 / 1000 * 1000
    let at = Bench.data + "/replay-at.ndjson", atPeer = Bench.data + "/replay-at-orjson.ndjson"
    runOrStop([Bench.ferry, "replay", log, "--until", "Chats@\(half)", "--out", at, "--quiet"])
    runOrStop(["/bin/sh", "-c", "head -n \(half) '\(history)' | python3 '\(Bench.shared)/peers/replay_orjson.py' /dev/stdin '\(atPeer)'"])
    checkStates("ferry replay --until Chats@\(half) and the orjson loop on the first \(half) events hold the same records", at, atPeer)
    // Incremental: that state as a base, plus what follows the token, is the full state.
    let continued = Bench.data + "/replay-continued.ndjson"
    runOrStop([Bench.ferry, "replay", log, "--base", at, "--since", "Chats@\(half)", "--out", continued, "--quiet"])
    checkStates("--base (state at Chats@\(half)) --since Chats@\(half) and the full replay hold the same records", continued, ferryOut)
    for path in [ferryOut, duckOut, orjsonOut, at, atPeer, continued] {
        unlink(path)
        unlink(path + ".tokens.json")
    }
}

/// The name of ``duckdbReplay(_:to:events:)`` in results and ratios.
let duckdbReplayTool = "duckdb arg_max GROUP BY (2 threads)"

/// duckdb replaying the shared flat history `history` (`gen_records.py --changes`) to its final
/// state in `out`, one record per line: the latest event of each `recordName` (`arg_max … GROUP BY
/// recordName`, the SQL of `../shared/bench/run_peers.sh task_replay`), deletions dropped. The
/// peer of both `replay` and `replay-responses`; `events` is the history's length (units).
@MainActor func duckdbReplay(_ history: String, to out: String, events: Int) -> Bench.Entry {
    .init(tool: duckdbReplayTool, command: ["python3", Bench.shared + "/peers/duckdb_sql.py",
        "COPY (SELECT rec FROM (SELECT arg_max(op, token) AS op, arg_max(record, token) AS rec FROM read_json('\(history)', "
        + "format = 'newline_delimited', columns = {token: 'BIGINT', op: 'VARCHAR', recordName: 'VARCHAR', record: 'JSON'}) "
        + "GROUP BY recordName) WHERE op <> 'delete') TO '\(out)' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')"],
          bytes: fileSize(history), units: events, removing: [out])
}

/// How the tokens-only median compares with the full replay's.
@MainActor private func tokensRatio() -> String {
    guard let full = Bench.results.first(where: { $0.task == "replay" && $0.tool == "ferry replay" }),
          let tokens = Bench.results.first(where: { $0.task == "replay-tokens" }) else { return "—" }
    return "\(format(tokens.medianSeconds / full.medianSeconds * 100, 1)) % of"
}

/// Runs a command whose failure ends the benchmark.
@MainActor func runOrStop(_ command: [String]) {
    let result = Runner.run(command)
    guard result.status == 0 else { fatal("\(command.joined(separator: " ")) failed: \(result.status)") }
}

/// Compares two states with `ferry diff` (records matched by zone and name, compared as JSON)
/// and by line count; a failure is listed with the ratios.
@MainActor func checkStates(_ claim: String, _ a: String, _ b: String) {
    let status = Runner.run(["/bin/sh", "-c", "\(Bench.ferry) diff '\(a)' '\(b)' --quiet"]).status
    let lines = Runner.run(["/bin/sh", "-c", "test $(wc -l < '\(a)') -eq $(wc -l < '\(b)')"]).status == 0
    print("  \(status == 0 && lines ? "ok" : "FAILED (ferry diff exit \(status))"): \(claim)")
    if status != 0 || !lines { Bench.ratios.append("replay check failed: \(claim)") }
}
