#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--where` on the 1M-record file against duckdb (both forms) and jq doing the same filter.
@MainActor func filterTask() {
    let input = Bench.ensureData("records.ndjson", count: 1_000_000)
    let size = fileSize(input)
    let out = Bench.data + "/f.ndjson"
    let predicate = #"recordType == "Message" AND count > 50 AND text CONTAINS[c] "hello""#
    let duck = Bench.shared + "/peers/duckdb_sql.py"
    print("\n== filter \(predicate), \(size / 1_000_000) MB")
    Bench.warm(input)
    Bench.measure("filter", "ferry convert --where", bytes: size, units: 1_000_000,
                  [Bench.ferry, "convert", input, out, "--where", predicate, "--quiet"])
    Bench.measure("filter", "duckdb read_ndjson_objects (2 threads)", bytes: size, units: 1_000_000, ["python3", duck,
        "COPY (SELECT json FROM read_ndjson_objects('\(input)') WHERE json->>'$.recordType' = 'Message' AND "
        + "TRY_CAST(json->>'$.fields.count.value' AS BIGINT) > 50 AND (json->>'$.fields.text.value') ILIKE '%hello%') "
        + "TO '\(out)' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')"])
    Bench.measure("filter", "duckdb read_json typed (2 threads)", bytes: size, units: 1_000_000, ["python3", duck,
        "COPY (SELECT * FROM read_json('\(input)') WHERE recordType = 'Message' AND fields.count.value > 50 AND "
        + "fields.text.value ILIKE '%hello%') TO '\(out)' (FORMAT json)"])
    Bench.measure("filter", "jq select", bytes: size, units: 1_000_000, [
        "jq -c 'select(.recordType == \"Message\" and .fields.count.value > 50 and (.fields.text.value | test(\"hello\"; \"i\")))' '\(input)' > '\(out)'"],
        shell: true)
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
