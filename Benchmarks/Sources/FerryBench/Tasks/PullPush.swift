#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// pull-push: `ferry pull` and `ferry push` against `ferry serve` over loopback (issue 43's goals).
//   pull: a store of PULL_RECORDS records (DATA/records.ndjson by default, 1,000,000) served;
//   its changes/zone pages saved to DATA/pull-pages by Tools/save_changes_pages.py (untimed, the
//   pages as served: pretty-printed, 200 records each); then, interleaved, `ferry pull` of the
//   whole database into a new store against `ferry convert` of the saved pages into a new store.
//   Goal: the pull at ≥ 50 % of the convert's rate.
//   push: PUSH_RECORDS records (100,000) pushed into a served store that holds them already
//   (forceReplace, so every round does the same work), RUNS rounds. Goal: ≥ 10,000 records/s.
// Loopback only; the server is stopped with SIGTERM at the end.

@MainActor func pullPushTask() {
    let env = Bench.environment
    let pullCount = Int(env["PULL_RECORDS"] ?? "1000000") ?? 1_000_000
    let pushCount = Int(env["PUSH_RECORDS"] ?? "100000") ?? 100_000
    let data = Bench.data
    let container = "iCloud.dev.ferry.pull"
    let pullInput = Bench.ensureData(pullCount == 1_000_000 ? "records.ndjson" : "records-\(pullCount).ndjson", count: pullCount)
    let pushInput = Bench.ensureData(pushCount == 1_000_000 ? "records.ndjson" : "records-\(pushCount).ndjson", count: pushCount)
    let served = data + "/pull-served.sqlite", target = data + "/push-target.sqlite", pages = data + "/pull-pages"
    let pulled = data + "/pulled.sqlite", converted = data + "/pull-converted.sqlite"
    for path in [served, target, pulled, converted].flatMap({ [$0, $0 + "-wal", $0 + "-shm"] }) { unlink(path) }
    _ = Runner.run(["/bin/rm", "-rf", pages])

    print("\n== ferry pull against ferry convert of the same pages; ferry push (loopback)")
    print("making \(served) from \(pullInput) (untimed) …")
    runOrStop([Bench.ferry, "convert", pullInput, served, "--quiet"])
    let port = freeLoopbackPort()
    let log = data + "/pull-serve.log"
    guard let pid = spawn([Bench.ferry, "serve", served, "--port", String(port), "--container", container, "--quiet"], output: log),
          waitUntilListening(port: port, pid: pid, seconds: 60) else { fatal("ferry serve did not start; see \(log)") }
    let url = "http://127.0.0.1:\(port)"
    print("saving the changes/zone pages to \(pages) (untimed) …")
    runOrStop(["python3", Bench.repository + "/Benchmarks/Tools/save_changes_pages.py", url, container, pages])
    let bytes = shellNumber("du -sb '\(pages)' | cut -f1", data)
    Bench.interleave("pull", warmup: true, [
        .init(tool: "ferry pull", command: [Bench.ferry, "pull", pulled, "--container", container, "--endpoint", url, "--quiet"],
              bytes: bytes, units: pullCount, removing: [pulled, pulled + "-wal", pulled + "-shm"]),
        .init(tool: "ferry convert (saved pages)", command: [Bench.ferry, "convert", pages, converted, "--quiet"],
              bytes: bytes, units: pullCount, removing: [converted, converted + "-wal", converted + "-shm"]),
    ])
    if let ratio = Bench.ratio("pull", "ferry pull", over: "ferry convert (saved pages)") {
        let line = "pull goal: ferry pull at ≥ 50 % of ferry convert's rate on the saved pages: \(ratio >= 0.5 ? "met" : "not met") (\(format(ratio * 100, 1)) %)"
        Bench.ratios.append(line)
        print("  " + line)
    }
    _ = stop(pid)

    print("making \(target) from \(pushInput) (untimed; the push replaces what it holds) …")
    runOrStop([Bench.ferry, "convert", pushInput, target, "--quiet"])
    let pushPort = freeLoopbackPort()
    guard let pushPID = spawn([Bench.ferry, "serve", target, "--port", String(pushPort), "--container", container, "--quiet"], output: log),
          waitUntilListening(port: pushPort, pid: pushPID, seconds: 60) else { fatal("ferry serve did not start; see \(log)") }
    let pushBytes = shellNumber("wc -c < '\(pushInput)'", data)
    if let m = Bench.measure("push", "ferry push", bytes: pushBytes, units: pushCount,
                             [Bench.ferry, "push", pushInput, "--container", container, "--endpoint", "http://127.0.0.1:\(pushPort)", "--quiet"]) {
        let rate = Double(pushCount) / m.medianSeconds
        let line = "push goal: ≥ 10,000 records/s: \(rate >= 10_000 ? "met" : "not met") (\(format(rate, 0)) records/s, median of \(m.samples.count) runs)"
        Bench.ratios.append(line)
        print("  " + line)
    }
    _ = stop(pushPID)
}

/// The number a shell command prints (0 when it prints none).
private func shellNumber(_ command: String, _ data: String) -> Int {
    let file = data + "/pull-push-number.txt"
    _ = Runner.run(["/bin/sh", "-c", command + " > '\(file)'"])
    return Int(readText(file) ?? "") ?? 0
}
