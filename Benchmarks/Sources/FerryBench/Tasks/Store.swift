#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The record store against the SQLite peers of ../shared/bench, in the same run:
//   store-import   `ferry convert records.ndjson store.sqlite` vs peers/sqlite_load_orjson.py
//   store-replay   `ferry replay changes-responses/ --into store.sqlite` vs peers/sqlite_apply_orjson.py
//                  on the flat changes.ndjson
//   store-query    the 3-clause filter on an indexed store vs sqlite3 json_extract on the peer's
//                  table and duckdb on the NDJSON
//   store-pages    first and 100th page of a sorted 100-record query (process start included)

/// The schema `ferry index` gets for the query task: the fields the filter and the sort use.
private let benchSchema = """
DEFINE SCHEMA
    RECORD TYPE Message (
        text    STRING SEARCHABLE,
        count   INT64 QUERYABLE SORTABLE,
        sentAt  TIMESTAMP QUERYABLE SORTABLE
    );
"""

private let threeClause = #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#

@MainActor func storeImportTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let ours = Bench.data + "/store-import.sqlite", peer = Bench.data + "/store-import-peer.sqlite"
    print("\n== import \(size / 1_000_000) MB of NDJSON into a new SQLite store")
    Bench.warm(input)
    let side = { (path: String) in [path, path + "-wal", path + "-shm", path + "-journal"] }
    for path in side(ours) + side(peer) { unlink(path) }
    Bench.interleave("store-import", warmup: true, [
        .init(tool: "ferry convert → store", command: [Bench.ferry, "convert", input, ours, "--quiet"], bytes: size,
              units: 1_000_000, removing: side(ours)),
        .init(tool: "python sqlite_load_orjson.py", command: ["python3", Bench.shared + "/peers/sqlite_load_orjson.py", input, peer],
              bytes: size, units: 1_000_000, removing: side(peer)),
    ])
    Bench.ratio("store-import", "ferry convert → store", over: "python sqlite_load_orjson.py")
    print("\n== import checks (untimed)")
    let counted = Runner.run(["/bin/sh", "-c", "test \"$(sqlite3 '\(peer)' 'select count(*) from records')\" = "
                              + "\"$(\(Bench.ferry) inspect '\(ours)' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"stores\"][0][\"records\"])')\""]).status
    note(counted == 0, "the store and the peer's table hold the same number of records")
    note(Runner.run([Bench.ferry, "verify", ours, "--quiet"]).status == 0, "ferry verify passes on the imported store")
    let roundTrip = Runner.run(["/bin/sh", "-c", "\(Bench.ferry) convert '\(ours)' - --quiet | cmp -s - '\(input)'"]).status
    note(roundTrip == 0, "the store exports the input byte for byte (NDJSON → store → NDJSON)")
}

@MainActor func storeReplayTask() {
    let events = 2_000_000
    let history = Bench.ensureData("changes.ndjson", count: events, changes: true)
    let responses = ensureResponses(history)
    let historySize = fileSize(history)
    let ours = Bench.data + "/store-replay.sqlite", peer = Bench.data + "/store-replay-peer.sqlite"
    print("\n== replay \(events) events into a new store: Ferry from the saved changes/zone responses, the peer from the flat history (\(historySize / 1_000_000) MB)")
    _ = Runner.run(["/bin/sh", "-c", "cat '\(responses)'/* '\(history)' > /dev/null"])
    let side = { (path: String) in [path, path + "-wal", path + "-shm", path + "-journal"] }
    for path in side(ours) + side(peer) { unlink(path) }
    Bench.interleave("store-replay", [
        .init(tool: "ferry replay --into", command: [Bench.ferry, "replay", responses, "--into", ours, "--quiet"], bytes: historySize,
              units: events, removing: side(ours)),
        .init(tool: "python sqlite_apply_orjson.py", command: ["python3", Bench.shared + "/peers/sqlite_apply_orjson.py", history, peer],
              bytes: historySize, units: events, removing: side(peer)),
    ])
    Bench.ratio("store-replay", "ferry replay --into", over: "python sqlite_apply_orjson.py")
    print("\n== replay checks (untimed)")
    let same = Runner.run(["/bin/sh", "-c", "test \"$(sqlite3 '\(peer)' 'select count(*) from records')\" = "
                           + "\"$(\(Bench.ferry) inspect '\(ours)' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"stores\"][0][\"records\"])')\""]).status
    note(same == 0, "the store and the peer's table hold the same number of records")
    note(Runner.run([Bench.ferry, "verify", ours, "--quiet"]).status == 0, "ferry verify passes on the replayed store")
    let rerun = Runner.run(["/bin/sh", "-c", "\(Bench.ferry) replay '\(responses)' --into '\(ours)' --json | grep -q '\"created\":0,\"modified\":0,\"unchanged\":0,\"deleted\":0'"]).status
    note(rerun == 0, "replaying the same responses again changes nothing")
}

@MainActor func storeQueryTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let store = ensureIndexedStore(input)
    let peer = ensurePeerTable(input)
    let size = fileSize(input)
    let duck = Bench.shared + "/peers/duckdb_sql.py"
    print("\n== query \(threeClause): an indexed store, sqlite3 on the peer's table, duckdb on the NDJSON")
    Bench.warm(input, store, peer)
    let sql = "SELECT body FROM records WHERE json_extract(body, '$.recordType') = 'Message' AND "
        + "json_extract(body, '$.fields.count.value') > 50 AND lower(json_extract(body, '$.fields.text.value')) LIKE '%hello%'"
    Bench.interleave("store-query", [
        .init(tool: "ferry query (indexed store)", command: ["\(Bench.ferry) query '\(store)' --where '\(threeClause)' --quiet > /dev/null"],
              shell: true, bytes: size, units: 1_000_000),
        .init(tool: "sqlite3 json_extract (peer table)", command: ["sqlite3 '\(peer)' \"\(sql)\" > /dev/null"], shell: true,
              bytes: size, units: 1_000_000),
        .init(tool: "duckdb read_ndjson_objects (2 threads)", command: ["python3", duck,
            "COPY (SELECT json FROM read_ndjson_objects('\(input)') WHERE json->>'$.recordType' = 'Message' AND "
            + "TRY_CAST(json->>'$.fields.count.value' AS BIGINT) > 50 AND (json->>'$.fields.text.value') ILIKE '%hello%') "
            + "TO '/dev/null' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')"], bytes: size, units: 1_000_000),
    ])
    Bench.ratio("store-query", "ferry query (indexed store)", over: "sqlite3 json_extract (peer table)")
    Bench.ratio("store-query", "ferry query (indexed store)", over: "duckdb read_ndjson_objects (2 threads)")
    print("\n== query checks (untimed)")
    let ours = Runner.run(["/bin/sh", "-c", "\(Bench.ferry) query '\(store)' --where '\(threeClause)' --quiet | wc -l > '\(Bench.data)/q.count'"])
    let counted = Runner.run(["/bin/sh", "-c", "test \"$(cat '\(Bench.data)/q.count')\" = \"$(sqlite3 '\(peer)' \"SELECT count(*) FROM (\(sql))\")\""])
    note(ours.status == 0 && counted.status == 0, "ferry query and sqlite3 return the same number of records")
    _ = Runner.run(["/bin/sh", "-c", "\(Bench.ferry) query '\(store)' --where '\(threeClause)' --explain >&2"])
}

@MainActor func storePagesTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let store = ensureIndexedStore(input)
    let query = [Bench.ferry, "query", store, "--type", "Message", "--sort", "sentAt:desc", "--limit", "100", "--quiet"]
    print("\n== pages of 100 of `--type Message --sort sentAt:desc` on the indexed store (each a process: start-up included)")
    // The cursor of page 99, walked untimed.
    var cursor = ""
    for _ in 1..<100 {
        let result = captureOutput(query + (cursor.isEmpty ? [] : ["--cursor", cursor]) + ["--response"])
        guard let marker = result.split(separator: "\"continuationMarker\":\"").last?.split(separator: "\"").first else {
            fatal("no continuation marker in a page")
        }
        cursor = String(marker)
    }
    let line = query.map { "'\($0)'" }.joined(separator: " ")
    Bench.measure("store-pages", "first page", bytes: 0, units: 100, [line + " --response > /dev/null"], shell: true)
    Bench.measure("store-pages", "100th page", bytes: 0, units: 100, [line + " --response --cursor '\(cursor)' > /dev/null"], shell: true)
    Bench.measure("store-pages", "process start (ferry --version)", bytes: 0, ["'\(Bench.ferry)' --version > /dev/null"], shell: true)
    for tool in ["first page", "100th page", "process start (ferry --version)"] {
        if let m = Bench.results.first(where: { $0.task == "store-pages" && $0.tool == tool }) {
            Bench.ratios.append("store-pages: \(tool) median \(format(m.medianSeconds * 1000, 1)) ms over \(m.samples.count) runs "
                                + "(\(m.samples.map { format($0.seconds * 1000, 1) }.joined(separator: ", ")) ms)")
        }
    }
    print("  " + Bench.ratios.suffix(3).joined(separator: "\n  "))
}

// MARK: Data (untimed)

/// An indexed store of the records, made once (untimed).
@MainActor private func ensureIndexedStore(_ input: String) -> String {
    let store = Bench.data + "/store-indexed.sqlite"
    if fileSize(store) == 0 {
        print("making \(store) and its indexes (untimed) …")
        runOrStop([Bench.ferry, "convert", input, store, "--quiet"])
        let schema = Bench.data + "/bench.ckdb"
        let file = fopen(schema, "w")
        fputs(benchSchema, file)
        fclose(file)
        runOrStop([Bench.ferry, "index", store, "--schema", schema])
    }
    return store
}

/// The peer's table of the records, made once (untimed).
@MainActor private func ensurePeerTable(_ input: String) -> String {
    let peer = Bench.data + "/store-query-peer.sqlite"
    if fileSize(peer) == 0 {
        print("making \(peer) with the peer (untimed) …")
        runOrStop(["python3", Bench.shared + "/peers/sqlite_load_orjson.py", input, peer])
    }
    return peer
}

/// The saved changes/zone responses of the history, made once with the shared script (untimed).
@MainActor private func ensureResponses(_ history: String) -> String {
    let folder = Bench.data + "/changes-responses"
    if access(folder, R_OK) != 0 {
        print("making \(folder) (untimed) …")
        runOrStop(["python3", Bench.shared + "/events_to_response_files.py", history, folder])
    }
    return folder
}

@MainActor private func note(_ ok: Bool, _ claim: String) {
    print("  \(ok ? "ok" : "FAILED"): \(claim)")
    if !ok { Bench.ratios.append("store check failed: \(claim)") }
}

/// A command's standard output (through `popen`; arguments quoted for the shell).
private func captureOutput(_ arguments: [String]) -> String {
    let line = arguments.map { "'" + $0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'" }
        .joined(separator: " ")
    guard let pipe = popen(line, "r") else { return "" }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&buffer, 1, buffer.count, pipe)
        if n <= 0 { break }
        output += buffer[0..<n]
    }
    pclose(pipe)
    return String(decoding: output, as: UTF8.self)
}
