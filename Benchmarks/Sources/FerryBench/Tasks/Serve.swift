#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// serve: `ferry serve` under load over loopback (issue 42's load test), with `ferry-load`:
//   a fresh store of the benchmark records (`ferry convert`, `ferry index` for the query's field),
//   `FERRY serve STORE --port P --container C --quiet`, then phases of SERVE_CLIENTS clients:
//   a warm-up (lookups, not counted), lookups only, single-record creates only, then the mixed
//   phase (SERVE_MIX for SERVE_SECONDS); SIGTERM, which must exit 0; then the journal is checked:
//   every acknowledged create is stored once with one `created` entry, and no `load-*` record
//   exists that was not sent. Loopback only; every phase is bounded by its duration (ferry-load
//   caps it at 300 s) and each answer by ferry-load's timeout.
//
// Environment: SERVE_CLIENTS (64), SERVE_SECONDS (the mixed phase, 60), SERVE_PHASE_SECONDS (the
// lookup and modify phases, 20), SERVE_WARMUP (5), SERVE_MIX (lookup=70,query=20,modify=10),
// SERVE_ZONE (Chats), SERVE_CONTAINER (iCloud.dev.ferry.load), SERVE_RECORDS (1000000: the
// records of DATA/records.ndjson; a smaller count makes DATA/records-N.ndjson).

private let serveSchema = """
DEFINE SCHEMA
    RECORD TYPE Message (
        count   INT64 QUERYABLE SORTABLE
    );
"""

/// One load phase's figures, read from ferry-load's `--json-file`.
private struct PhaseResult {
    var name: String
    var json: String

    /// The number after `"key":` inside the object of `kind` (`lookup`, `query`, `modify`, `all`).
    func number(_ kind: String, _ key: String) -> Double? {
        guard let object = json.firstRange(of: "\"\(kind)\":{") else { return nil }
        return value(key, from: object.upperBound)
    }

    /// The top-level number after `"key":`.
    func number(_ key: String) -> Double? { value(key, from: json.startIndex) }

    private func value(_ key: String, from start: String.Index) -> Double? {
        guard let found = json[start...].firstRange(of: "\"\(key)\":") else { return nil }
        return Double(json[found.upperBound...].prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "e" })
    }
}

@MainActor func serveTask() {
    let env = Bench.environment
    let clients = Int(env["SERVE_CLIENTS"] ?? "64") ?? 64
    let seconds = Int(env["SERVE_SECONDS"] ?? "60") ?? 60
    let phaseSeconds = Int(env["SERVE_PHASE_SECONDS"] ?? "20") ?? 20
    let warmup = Int(env["SERVE_WARMUP"] ?? "5") ?? 5
    let mix = env["SERVE_MIX"] ?? "lookup=70,query=20,modify=10"
    let zone = env["SERVE_ZONE"] ?? "Chats"
    let container = env["SERVE_CONTAINER"] ?? "iCloud.dev.ferry.load"
    let count = Int(env["SERVE_RECORDS"] ?? "1000000") ?? 1_000_000
    let load = Bench.helper("ferry-load")
    let input = Bench.ensureData(count == 1_000_000 ? "records.ndjson" : "records-\(count).ndjson", count: count)
    let data = Bench.data
    let store = data + "/serve.sqlite", log = data + "/serve.log", names = data + "/serve-names.txt"

    print("\n== ferry serve under load: \(clients) clients over loopback; phases: lookups \(phaseSeconds) s, "
          + "creates \(phaseSeconds) s, mixed \(mix) \(seconds) s")
    // A fresh store each run, so that the journal holds only this run's writes (untimed).
    for path in [store, store + "-wal", store + "-shm", store + "-journal"] + ["lookup", "modify", "mixed", "warmup"].flatMap(phaseFiles) {
        unlink(path)
    }
    print("making \(store) from \(input) (untimed) …")
    runOrStop([Bench.ferry, "convert", input, store, "--quiet"])
    writeText(data + "/serve.ckdb", serveSchema)
    runOrStop([Bench.ferry, "index", store, "--schema", data + "/serve.ckdb"])
    // Names to look up: every 7th Message of the zone, at most 50,000; and the zone's owner.
    let zoneSQL = "'" + zone.replacing("'", with: "''") + "'"
    runOrStop(["/bin/sh", "-c", "sqlite3 -readonly '\(store)' \"SELECT r.record_name FROM records r JOIN zones z ON z.id = r.zone_id "
               + "WHERE z.zone_name = \(zoneSQL) AND r.record_type = 'Message' AND r.id % 7 = 0 LIMIT 50000\" > '\(names)'"])
    runOrStop(["/bin/sh", "-c", "sqlite3 -readonly '\(store)' \"SELECT owner_record_name FROM zones WHERE zone_name = \(zoneSQL) LIMIT 1\" > '\(names).owner'"])
    let owner = readText(names + ".owner") ?? ""
    guard lineCount(names) > 0 else { fatal("no Message records in zone \(zone) of \(store)") }
    print("  \(lineCount(names)) names to look up in zone \(zone) (owner \(owner.isEmpty ? "none" : owner))")

    _ = Runner.run(["/bin/sh", "-c", "'\(Bench.ferry)' --version > '\(data)/serve-version.txt' 2>&1"])
    let version = readText(data + "/serve-version.txt") ?? "unknown"
    Bench.ratios.append("serve: the server is \(Bench.ferry) (\(version)), \(count) records, \(clients) clients")
    print("  the server: \(Bench.ferry) (--version: \(version))")

    let port = freeLoopbackPort()
    let server = [Bench.ferry, "serve", store, "--port", String(port), "--container", container, "--quiet"]
    print("starting \(server.joined(separator: " ")) (its output in \(log)) …")
    guard let pid = spawn(server, output: log) else { fatal("cannot start \(Bench.ferry) serve") }
    guard waitUntilListening(port: port, pid: pid, seconds: 60) else {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        fatal("ferry serve did not answer on 127.0.0.1:\(port) within 60 s; see \(log)")
    }

    let common = ["--url", "http://127.0.0.1:\(port)", "--container", container, "--clients", String(clients),
                  "--names", names, "--zone", zone] + (owner.isEmpty ? [] : ["--owner", owner])
    func phase(_ name: String, mix: String, seconds: Int) -> PhaseResult? {
        let files = phaseFiles(name)
        print("\n-- \(name): \(mix), \(clients) clients, \(seconds) s")
        let result = Runner.run([load] + common + ["--mix", mix, "--duration", String(seconds), "--run", name,
                                                   "--acknowledged", files[0], "--unsettled", files[1], "--json-file", files[2]])
        guard result.status == 0, let json = readText(files[2]) else {
            print("  ferry-load: exit \(result.status) — phase not counted")
            Bench.ratios.append("serve check failed: the \(name) phase did not complete (ferry-load exit \(result.status))")
            return nil
        }
        return PhaseResult(name: name, json: json)
    }
    if warmup > 0 { _ = phase("warmup", mix: "lookup", seconds: warmup) }
    let lookups = phase("lookup", mix: "lookup", seconds: phaseSeconds)
    let modifies = phase("modify", mix: "modify", seconds: phaseSeconds)
    let mixed = phase("mixed", mix: mix, seconds: seconds)

    print("\n== stopping the server (SIGTERM) …")
    let stopped = stop(pid)
    noteServe(stopped.status == 0, "ferry serve exits 0 on SIGTERM (exit \(stopped.status); CPU \(format(stopped.cpuSeconds, 1)) s, "
              + "peak RSS \(format(Double(stopped.peakRSSKiB) / 1024, 0)) MiB)")

    for result in [lookups, modifies, mixed].compactMap({ $0 }) {
        for kind in ["lookup", "query", "modify", "all"] {
            guard let requests = result.number(kind, "requests") else { continue }
            let line = "serve [\(result.name)] \(kind): \(Int(requests)) requests, "
                + "\(format(result.number(kind, "succeededPerSecond") ?? 0, 0))/s succeeded, "
                + "p50 \(format(result.number(kind, "p50Ms") ?? 0, 2)) ms, p99 \(format(result.number(kind, "p99Ms") ?? 0, 2)) ms, "
                + "max \(format(result.number(kind, "maxMs") ?? 0, 1)) ms, errors \(Int(result.number(kind, "errors") ?? 0))"
            Bench.ratios.append(line)
            print("  " + line)
        }
        let cpu = result.number("generatorCPUSeconds") ?? 0
        Bench.ratios.append("serve [\(result.name)]: ferry-load's own CPU \(format(cpu, 1)) s of the 2 cores' "
                            + "\(format(2 * (result.number("seconds") ?? 0), 0)) s (it shares the machine with the server)")
        noteServe(result.number("errorCount") == 0, "no errors in the \(result.name) phase (\(Int(result.number("errorCount") ?? -1)); see \(phaseFiles(result.name)[2]))")
    }

    print("\n== journal checks (untimed)")
    checkWrites(store: store, phases: ["warmup", "lookup", "modify", "mixed"])

    let lookupRate = lookups?.number("lookup", "succeededPerSecond")
    let modifyRate = modifies?.number("modify", "succeededPerSecond")
    for (what, rate, goal) in [("lookups/s", lookupRate, 5000.0), ("single-record modifies/s", modifyRate, 1000.0)] {
        let line = "serve goal: \(what) ≥ \(Int(goal)): " + (rate.map { "\($0 >= goal ? "met" : "not met") (\(format($0, 0))/s, \(clients) clients, its own phase)" } ?? "not measured")
        Bench.ratios.append(line)
        print("  " + line)
    }
    if let mixed {
        let line = "serve [mixed]: \(format(mixed.number("lookup", "succeededPerSecond") ?? 0, 0)) lookups/s and "
            + "\(format(mixed.number("modify", "succeededPerSecond") ?? 0, 0)) modifies/s within \(format(mixed.number("all", "succeededPerSecond") ?? 0, 0)) requests/s"
        Bench.ratios.append(line)
        print("  " + line)
    }
}

/// A phase's files in DATA: acknowledged names, unsettled names, ferry-load's JSON.
@MainActor private func phaseFiles(_ name: String) -> [String] {
    ["acknowledged", "unsettled", "json"].map { "\(Bench.data)/serve-\(name).\($0)" + ($0 == "json" ? "" : ".txt") }
}

/// The journal check: every acknowledged create is stored exactly once, with exactly one journal
/// entry (`created`); every stored `load-*` record was sent (acknowledged, or answered with an
/// error or not at all); `ferry verify` passes.
@MainActor private func checkWrites(store: String, phases: [String]) {
    func lines(_ path: String) -> [String] { (readText(path) ?? "").split(separator: "\n").map(String.init) }
    let acknowledged = phases.flatMap { lines(phaseFiles($0)[0]) }
    let unsettled = phases.flatMap { lines(phaseFiles($0)[1]) }
    let acknowledgedSet = Set(acknowledged), sent = acknowledgedSet.union(unsettled)
    noteServe(acknowledgedSet.count == acknowledged.count, "no name acknowledged twice (\(acknowledged.count) acknowledged creates)")
    let data = Bench.data
    let isLoad = "substr(record_name, 1, 5) = 'load-'"
    runOrStop(["/bin/sh", "-c", "sqlite3 -readonly '\(store)' \"SELECT record_name, count(*) FROM records WHERE \(isLoad) GROUP BY record_name\" > '\(data)/serve-stored.txt'"])
    runOrStop(["/bin/sh", "-c", "sqlite3 -readonly '\(store)' \"SELECT record_name, group_concat(kind) FROM journal WHERE \(isLoad) GROUP BY record_name\" > '\(data)/serve-journal.txt'"])
    func table(_ path: String) -> [String: String] {
        var rows: [String: String] = [:]
        for line in lines(path) {
            guard let bar = line.lastIndex(of: "|") else { continue }
            rows[String(line[..<bar]), default: ""] += String(line[line.index(after: bar)...])
        }
        return rows
    }
    let stored = table(data + "/serve-stored.txt"), journal = table(data + "/serve-journal.txt")
    let lost = acknowledged.filter { stored[$0] == nil }
    let twice = stored.filter { $0.value != "1" }.map(\.key)
    let journaledOtherwise = acknowledged.filter { journal[$0] != "created" }
    let unsent = stored.keys.filter { !sent.contains($0) }
    let appliedUnsettled = unsettled.filter { stored[$0] != nil }
    func sample(_ names: [String]) -> String { names.isEmpty ? "" : " — e.g. " + names.sorted().prefix(5).joined(separator: ", ") }
    noteServe(lost.isEmpty, "every acknowledged create is in the store (\(lost.count) missing\(sample(lost)))")
    noteServe(twice.isEmpty, "no load-* name is stored twice (\(twice.count)\(sample(twice)))")
    noteServe(journaledOtherwise.isEmpty, "every acknowledged create has exactly one journal entry, `created` (\(journaledOtherwise.count) otherwise\(sample(journaledOtherwise)))")
    noteServe(unsent.isEmpty, "every stored load-* record was sent by ferry-load (\(unsent.count) never sent\(sample(Array(unsent))))")
    print("  \(stored.count) load-* records stored: \(acknowledged.count) acknowledged, \(appliedUnsettled.count) of the "
          + "\(unsettled.count) unacknowledged creates applied anyway (an error or no answer after the write)")
    noteServe(Runner.run([Bench.ferry, "verify", store, "--quiet"]).status == 0, "ferry verify passes on the store after the load")
}

@MainActor private func noteServe(_ ok: Bool, _ claim: String) {
    print("  \(ok ? "ok" : "FAILED"): \(claim)")
    if !ok { Bench.ratios.append("serve check failed: \(claim)") }
}

/// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
func freeLoopbackPort() -> UInt16 {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { fatal("socket: errno \(errno)") }
    defer { close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { fatal("cannot bind a loopback port: errno \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}

private func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    return address
}

/// Starts `arguments` with its standard output and error appended to `output`; its pid.
func spawn(_ arguments: [String], output: String) -> pid_t? {
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    fflush(nil)
    return posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0 ? pid : nil
}

/// Waits until something accepts connections on 127.0.0.1:`port`; false when `pid` exits first
/// or `seconds` pass.
func waitUntilListening(port: UInt16, pid: pid_t, seconds: Double) -> Bool {
    let deadline = Runner.now() + seconds
    while Runner.now() < deadline {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { return false }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        close(fd)
        if connected { return true }
        usleep(50_000)
    }
    return false
}

/// Sends SIGTERM and waits up to 30 s for the exit (then SIGKILL, reported as exit 137): its exit
/// status, CPU time and peak RSS over the whole run.
func stop(_ pid: pid_t) -> (status: Int32, cpuSeconds: Double, peakRSSKiB: Int) {
    kill(pid, SIGTERM)
    let deadline = Runner.now() + 30
    var status: Int32 = 0
    var usage = rusage()
    while true {
        let done = wait4(pid, &status, WNOHANG, &usage)
        if done == pid { break }
        if done < 0 && errno != EINTR { return (-1, 0, 0) }
        if Runner.now() > deadline {
            kill(pid, SIGKILL)
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            break
        }
        usleep(20_000)
    }
    let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    func cpu(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (exited, cpu(usage.ru_utime) + cpu(usage.ru_stime), Int(usage.ru_maxrss))
}
