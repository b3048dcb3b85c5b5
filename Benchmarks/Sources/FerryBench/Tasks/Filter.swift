#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--where` on the 1M-record file against duckdb (both forms), interleaved round by round
/// (``Bench/interleave(_:warmup:_:)``); jq doing the same filter too with `JQ=1` (about 18 s a round).
@MainActor func filterTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let out = Bench.data + "/f.ndjson"
    let predicate = #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#
    let duck = Bench.shared + "/peers/duckdb_sql.py"
    print("\n== filter \(predicate), \(size / 1_000_000) MB")
    Bench.warm(input)
    unlink(out)
    var entries: [Bench.Entry] = [
        .init(tool: "ferry convert --where", command: [Bench.ferry, "convert", input, out, "--where", predicate, "--quiet"],
              bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "duckdb read_ndjson_objects (2 threads)", command: ["python3", duck,
            "COPY (SELECT json FROM read_ndjson_objects('\(input)') WHERE json->>'$.recordType' = 'Message' AND "
            + "TRY_CAST(json->>'$.fields.count.value' AS BIGINT) > 50 AND (json->>'$.fields.text.value') ILIKE '%hello%') "
            + "TO '\(out)' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')"], bytes: size, units: 1_000_000, removing: [out]),
        .init(tool: "duckdb read_json typed (2 threads)", command: ["python3", duck,
            "COPY (SELECT * FROM read_json('\(input)') WHERE recordType = 'Message' AND fields.count.value > 50 AND "
            + "fields.text.value ILIKE '%hello%') TO '\(out)' (FORMAT json)"], bytes: size, units: 1_000_000, removing: [out]),
    ]
    if Bench.environment["JQ"] == "1" {
        entries.append(.init(tool: "jq select", command: [
            "jq -c 'select(.recordType == \"Message\" and .fields.count.value > 50 and (.fields.text.value | test(\"hello\"; \"i\")))' '\(input)' > '\(out)'"],
            shell: true, bytes: size, units: 1_000_000, removing: [out]))
    }
    Bench.interleave("filter", warmup: true, entries)
    unlink(out)
    Bench.ratio("filter", "ferry convert --where", over: "duckdb read_ndjson_objects (2 threads)")
    Bench.ratio("filter", "ferry convert --where", over: "duckdb read_json typed (2 threads)")
    Bench.ratio("filter", "ferry convert --where", over: "jq select")
}

/// Compiled-filter evaluations per second on decoded records (in process, no I/O).
@MainActor func evaluationsTask() {
    let input = Bench.ensureData("records-100k.ndjson", count: 100_000)
    print("\n== compiled filter on decoded records")
    let result = Runner.run([Bench.helper("ferry-micro"), "filter", input])
    if result.status != 0 { print("  ferry-micro failed: exit \(result.status)") }
}
