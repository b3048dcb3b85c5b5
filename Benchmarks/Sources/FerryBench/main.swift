// ferry-bench: times Ferry against the peer tools of ../shared/bench on the same data, same run.
//
//   swift run -c release --package-path Benchmarks ferry-bench [TASK ...]
//
// Tasks: roundtrip rss filter compress decompress xml replay (default: roundtrip rss).
// Environment: DATA (folder for generated data, default /tmp/ferry-bench; kept out of the
// repository), RUNS (default 3), FERRY (the ferry binary, default .build/release/ferry, built
// first with `swift build -c release` at the repository root), SHARED (default ../shared/bench).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let environment = ProcessInfoLite()
let data = environment["DATA"] ?? "/tmp/ferry-bench"
let runs = Int(environment["RUNS"] ?? "3") ?? 3
let repository = currentDirectory()
let ferry = environment["FERRY"] ?? repository + "/.build/release/ferry"
let shared = environment["SHARED"] ?? repository + "/../shared/bench"

var tasks = Array(CommandLine.arguments.dropFirst())
if tasks.isEmpty { tasks = ["roundtrip", "rss"] }

@MainActor func ensureData(_ name: String, count: Int, changes: Bool = false) -> String {
    let path = data + "/" + name
    if access(path, R_OK) != 0 {
        _ = mkdir(data, 0o755)
        print("generating \(path) (\(count) \(changes ? "events" : "records")) …")
        let args = [shared + "/gen_records.py", "--count", String(count), "--seed", changes ? "43" : "42", "--out", path] + (changes ? ["--changes"] : [])
        let result = Runner.run(["python3"] + args)
        guard result.status == 0 else { fatal("generator failed: \(result.status)") }
    }
    return path
}

var results: [Measurement] = []

@MainActor func measure(_ task: String, _ tool: String, bytes: Int, _ command: [String], shell: Bool = false) {
    var samples: [Runner.Result] = []
    for _ in 0..<runs {
        let result = shell ? Runner.run(["/bin/sh", "-c", command.joined(separator: " ")]) : Runner.run(command)
        if result.status != 0 {
            print("  \(tool): exit \(result.status) — skipped")
            return
        }
        samples.append(result)
    }
    let m = Measurement(task: task, tool: tool, bytes: bytes, samples: samples)
    results.append(m)
    print(m.line)
}

for task in tasks {
    switch task {
    case "roundtrip":
        let input = ensureData("records.ndjson", count: 1_000_000)
        let size = fileSize(input)
        let out = data + "/out.ndjson"
        print("\n== parse + serialize, \(size / 1_000_000) MB, one core")
        measure(task, "ferry convert", bytes: size, ["taskset", "-c", "0", ferry, "convert", input, out, "--quiet"])
        measure(task, "python orjson loop", bytes: size, ["taskset", "-c", "0", "python3", shared + "/peers/roundtrip_orjson.py", input, out])
        measure(task, "jq -c .", bytes: size, ["jq -c . " + input + " > " + out], shell: true)
        unlink(out)
        ratio(task, "ferry convert", over: "python orjson loop")
        ratio(task, "ferry convert", over: "jq -c .")
    case "rss":
        let small = ensureData("records-100k.ndjson", count: 100_000)
        let large = ensureData("records.ndjson", count: 1_000_000)
        print("\n== peak RSS as input grows")
        measure("rss-100k", "ferry convert 100k", bytes: fileSize(small), [ferry, "convert", small, data + "/o.ndjson", "--quiet"])
        measure("rss-1m", "ferry convert 1M", bytes: fileSize(large), [ferry, "convert", large, data + "/o.ndjson", "--quiet"])
        unlink(data + "/o.ndjson")
    case "filter":
        let input = ensureData("records.ndjson", count: 1_000_000)
        let size = fileSize(input)
        let predicate = "recordType == \"Message\" AND count > 50 AND text CONTAINS[c] \"hello\""
        print("\n== filter: \(predicate)")
        measure(task, "ferry convert --where", bytes: size, [ferry, "convert", input, data + "/f.ndjson", "--where", predicate, "--quiet"])
        measure(task, "duckdb (2 threads)", bytes: size, ["python3", shared + "/peers/duckdb_sql.py", "filter", input, data + "/f.ndjson"])
        measure(task, "jq select", bytes: size, ["jq -c 'select(.recordType == \"Message\" and .fields.count.value > 50 and (.fields.text.value | ascii_downcase | contains(\"hello\")))' " + input + " > " + data + "/f.ndjson"], shell: true)
        unlink(data + "/f.ndjson")
        ratio(task, "ferry convert --where", over: "duckdb (2 threads)")
        ratio(task, "ferry convert --where", over: "jq select")
    default:
        print("unknown task \(task)")
    }
}

print("\n" + Measurement.markdownHeader)
for m in results { print(m.markdownRow) }

@MainActor func ratio(_ task: String, _ a: String, over b: String) {
    guard let x = results.first(where: { $0.task == task && $0.tool == a }),
          let y = results.first(where: { $0.task == task && $0.tool == b }) else { return }
    print("  ratio: \(a) is \(format(y.medianSeconds / x.medianSeconds, 2))× the throughput of \(b)")
}
