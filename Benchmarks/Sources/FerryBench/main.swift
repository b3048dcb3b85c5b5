// ferry-bench: times Ferry against the peer tools of ../shared/bench on the same data, same run.
//
//   swift build -c release --static-swift-stdlib  # at the repository root: the ferry binary
//   swift run -c release --package-path Benchmarks ferry-bench [TASK ...]
//
// Tasks (default: roundtrip rss): see `Bench.tasks` below; each lives in Tasks/<Name>.swift.
// Environment: DATA (folder for generated data, default /tmp/ferry-bench; kept out of the
// repository), RUNS (default 3), FERRY (the ferry binary, default .build/release/ferry),
// SHARED (default ../shared/bench), EVENTS (events of the replay-check history, default 2000000);
// for the saved-response tasks (see Benchmarks/README.md, "Realistic input forms"): RESPONSES and
// RESPONSES_GZ (saved records/query folders, default DATA/query-responses and RESPONSES + -gz),
// JQ=1 (also time jq on them), CHANGES_RESPONSES and CHANGES_RESPONSES_GZ (saved changes/zone
// folders, default DATA/changes-responses and CHANGES_RESPONSES + -gz) with CHANGES (the same
// history as one flat event log for duckdb, default DATA/changes.ndjson); for `serve` (ferry serve
// under load, with ferry-load): SERVE_CLIENTS, SERVE_SECONDS, SERVE_PHASE_SECONDS, SERVE_WARMUP,
// SERVE_MIX, SERVE_ZONE, SERVE_CONTAINER, SERVE_RECORDS (see Tasks/Serve.swift).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every task, by the name given on the command line.
let tasks: [(name: String, run: @MainActor () -> Void)] = [
    ("roundtrip", roundTripTask),
    ("rss", rssTask),
    ("filter", filterTask),
    ("evaluations", evaluationsTask),
    ("compress", compressTask),
    ("decompress", decompressTask),
    ("xml", xmlTask),
    ("replay", replayTask),
    ("replay-check", replayCheckTask),
    ("responses", responsesTask),
    ("responses-where", responsesWhereTask),
    ("replay-responses", replayResponsesTask),
    ("store-import", storeImportTask),
    ("store-replay", storeReplayTask),
    ("store-query", storeQueryTask),
    ("store-pages", storePagesTask),
    ("serve", serveTask),
    ("pull-push", pullPushTask),
]

var requested = Array(CommandLine.arguments.dropFirst())
if requested.isEmpty { requested = ["roundtrip", "rss"] }
if requested == ["all"] { requested = tasks.map(\.name) }
for name in requested {
    guard let task = tasks.first(where: { $0.name == name }) else {
        fatal("unknown task \(name); tasks: \(tasks.map(\.name).joined(separator: " ")) all")
    }
    task.run()
}

print("\n" + Measurement.markdownHeader)
for m in Bench.results { print(m.markdownRow) }
for line in Bench.ratios { print(line) }
