#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--where` on saved `records/query` responses, as users hold them (the `responses` task's
/// folder): `ferry convert FOLDER/ OUT --where '…'` with the `filter` task's three-clause
/// predicate, against duckdb reading the same folder (`read_json` on `FOLDER/*.json`, its
/// `records` unnested, the `filter` task's SQL test) and the Python orjson loop over the files
/// with `filter_orjson.py`'s test (`Benchmarks/Peers/query_files_filter_orjson.py`), interleaved.
/// Then an untimed check that the three outputs hold the same records.
@MainActor func responsesWhereTask() {
    let (folder, _) = queryResponseFolders()
    let (files, bytes) = folderContents(folder)
    guard files > 0 else { fatal("\(folder) holds no files") }
    let predicate = #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#
    let ferryOut = Bench.data + "/where-ferry.ndjson", duckOut = Bench.data + "/where-duckdb.ndjson"
    let orjsonOut = Bench.data + "/where-orjson.ndjson"
    let ferry = "ferry convert --where, .json folder", duck = "duckdb read_json (2 threads), .json folder"
    let orjson = "python orjson loop, .json folder"
    print("\n== --where on saved records/query responses: \(files) responses, \(bytes / 1_000_000) MB, \(predicate)")
    Bench.warm(folder)
    let sql = "COPY (SELECT r FROM (SELECT unnest(records) AS r FROM read_json('\(folder)/*.json', columns={records: 'JSON[]'})) "
        + "WHERE r->>'$.recordType' = 'Message' AND TRY_CAST(r->>'$.fields.count.value' AS BIGINT) > 50 AND "
        + "(r->>'$.fields.text.value') ILIKE '%hello%') TO '\(duckOut)' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')"
    Bench.interleave("responses-where", [
        .init(tool: ferry, command: [Bench.ferry, "convert", folder + "/", ferryOut, "--where", predicate, "--quiet"],
              bytes: bytes, units: files, removing: [ferryOut]),
        .init(tool: duck, command: ["python3", Bench.shared + "/peers/duckdb_sql.py", sql], bytes: bytes, units: files,
              removing: [duckOut]),
        .init(tool: orjson, command: ["python3", Bench.peer("query_files_filter_orjson.py"), folder + "/", orjsonOut],
              bytes: bytes, units: files, removing: [orjsonOut]),
    ])
    Bench.ratio("responses-where", ferry, over: duck)
    Bench.ratio("responses-where", ferry, over: orjson)

    print("\n== responses-where checks (untimed)")
    checkRecords("ferry's output and duckdb's hold the same records", ferryOut, duckOut)
    checkRecords("ferry's output and the orjson loop's hold the same records", ferryOut, orjsonOut)
    for path in [ferryOut, duckOut, orjsonOut] { unlink(path) }
}
