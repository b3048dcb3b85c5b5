#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shared settings and results of one benchmark run.
@MainActor enum Bench {
    static let environment = ProcessInfoLite()
    static let data = environment["DATA"] ?? "/tmp/ferry-bench"
    static let runs = Int(environment["RUNS"] ?? "3") ?? 3
    static let repository = currentDirectory()
    static let ferry = environment["FERRY"] ?? repository + "/.build/release/ferry"
    static let shared = environment["SHARED"] ?? repository + "/../shared/bench"
    static var results: [Measurement] = []
    static var ratios: [String] = []
    /// `BASELINE`: another ferry binary (an earlier build) that every interleaved entry running
    /// `FERRY` also runs with, as "TOOL (baseline)"; a ratio line compares the two.
    static let baseline = environment["BASELINE"]
    /// `PEERS=0`: interleaved comparisons run Ferry's entries only (with `BASELINE`, a check for
    /// regressions against an earlier build without the peers' time).
    static let runsPeers = environment["PEERS"] != "0"

    /// A helper executable of this package (`ferry-gzip`, `ferry-micro`), built by
    /// `swift build -c release --package-path Benchmarks`.
    static func helper(_ name: String) -> String {
        let path = repository + "/Benchmarks/.build/release/" + name
        if access(path, X_OK) != 0 { fatal("\(path) is missing: run `swift build -c release --package-path Benchmarks`") }
        return path
    }

    /// The generated data file `name` in DATA, made with the shared generator when missing.
    static func ensureData(_ name: String, count: Int, changes: Bool = false) -> String {
        let path = data + "/" + name
        if access(path, R_OK) != 0 {
            _ = mkdir(data, 0o755)
            print("generating \(path) (\(count) \(changes ? "events" : "records")) …")
            let args = [shared + "/gen_records.py", "--count", String(count), "--seed", changes ? "43" : "42", "--out", path]
                + (changes ? ["--changes"] : [])
            let result = Runner.run(["python3"] + args)
            guard result.status == 0 else { fatal("generator failed: \(result.status)") }
        }
        return path
    }

    /// A folder of saved CloudKit responses and its gzipped copy (every file `gzip -6`, named
    /// `*.json.gz`): the folders named by the environment variables `variable` and `variable_GZ`,
    /// else DATA/`name` and the plain folder's path + `-gz`. Folders named in the environment must
    /// exist; the others are made when missing, untimed (into a temporary folder, then renamed):
    /// the plain one by the shell command `generate(folder)`, the gzipped one from the plain one.
    static func responseFolders(_ variable: String, name: String,
                                generate: @MainActor (String) -> String) -> (plain: String, gzipped: String) {
        func trimmed(_ path: String) -> String { path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path }
        let plain = environment[variable].map(trimmed) ?? data + "/" + name
        let gzipped = environment[variable + "_GZ"].map(trimmed) ?? plain + "-gz"
        for (folder, named) in [(plain, environment[variable] != nil), (gzipped, environment[variable + "_GZ"] != nil)] {
            if !isDirectory(folder) && named { fatal("\(folder) is not a folder (\(folder == plain ? variable : variable + "_GZ"))") }
        }
        if !isDirectory(plain) {
            _ = mkdir(data, 0o755)
            print("generating \(plain) …")
            guard Runner.run(["/bin/sh", "-c", "rm -rf '\(plain).tmp' && \(generate(plain + ".tmp")) && mv '\(plain).tmp' '\(plain)'"]).status == 0 else {
                fatal("generating \(plain) failed")
            }
        }
        if !isDirectory(gzipped) {
            print("gzipping every file of \(plain) into \(gzipped) …")
            let script = "rm -rf '\(gzipped).tmp' && mkdir '\(gzipped).tmp' && for f in '\(plain)'/*.json; do "
                + "gzip -6 -c \"$f\" > '\(gzipped).tmp'/\"$(basename \"$f\")\".gz || exit 1; done && mv '\(gzipped).tmp' '\(gzipped)'"
            guard Runner.run(["/bin/sh", "-c", script]).status == 0 else { fatal("gzipping \(plain) failed") }
        }
        return (plain, gzipped)
    }

    /// Runs `command` RUNS times (a shell command line when `shell`), records and prints the
    /// median. Returns `nil` (and says so) when a run fails. The files in `removing` are deleted
    /// after each run, untimed, so every run writes its outputs afresh (as run_peers.sh does).
    @discardableResult
    static func measure(_ task: String, _ tool: String, bytes: Int, units: Int = 0, _ command: [String],
                        shell: Bool = false, removing outputs: [String] = []) -> Measurement? {
        var samples: [Runner.Result] = []
        for run in 0..<runs {
            if run > 0 { for path in outputs { unlink(path) } }
            let result = Runner.run(command, shell: shell)
            if result.status != 0 {
                print("  \(tool): exit \(result.status) — not counted")
                return nil
            }
            samples.append(result)
        }
        let m = Measurement(task: task, tool: tool, bytes: bytes, units: units, samples: samples)
        results.append(m)
        print(m.line)
        return m
    }

    /// One command of an interleaved comparison (``interleave(_:warmup:_:)``).
    struct Entry {
        var tool: String
        var command: [String]
        var shell = false
        /// Input bytes per run (for MB/s).
        var bytes: Int
        var units = 0
        /// Files deleted before each run, untimed, then `sync`ed: before every run but the first
        /// unless there is a warm-up round (the last run's files are kept).
        var removing: [String] = []

        /// Deletes the files in ``removing`` and syncs, untimed.
        func removeOutputs() {
            for path in removing { unlink(path) }
            if !removing.isEmpty { sync() }
        }

        /// Runs the command once, timed.
        func run() -> Runner.Result {
            Runner.run(command, shell: shell)
        }
    }

    /// Runs every entry once per round, RUNS rounds, and records each tool's samples like
    /// ``measure(_:_:bytes:units:_:shell:removing:)``. Round `r` starts with entry `r mod n` and
    /// goes on forwards in even rounds, backwards in odd ones (A B C, B A C, C A B, A C B, B C A,
    /// C B A): a drift of the machine's load slows every tool alike, no tool always runs first
    /// (each does equally often when RUNS is a multiple of the entries), and each entry follows
    /// one neighbour in the list half the time and the other neighbour the other half, not always
    /// the same one. ``ratio(_:_:over:)`` then also compares the tools round by round.
    /// A failed run drops that tool (and says so).
    ///
    /// With `warmup`, every entry first runs once, uncounted, so that what the machine was doing
    /// before (writing back a build, say) does not land on the first round. Removed outputs are
    /// followed by `sync`, untimed, so that no run pays for writing back or freeing another's.
    static func interleave(_ task: String, warmup: Bool = false, _ given: [Entry]) {
        let runsFerry = { (entry: Entry) in entry.command.contains { $0.contains(ferry) } }
        var entries = runsPeers ? given : given.filter(runsFerry)
        let compared = entries.filter(runsFerry)
        if let baseline {
            for entry in compared {
                var copy = entry
                copy.tool += " (baseline)"
                copy.command = entry.command.map { $0.replacing(ferry, with: baseline) }
                entries.append(copy)
            }
        }
        defer { if baseline != nil { for entry in compared { ratio(task, entry.tool, over: entry.tool + " (baseline)") } } }
        var samples = Array(repeating: [Runner.Result](), count: entries.count)
        var rounds = Array(repeating: [Int](), count: entries.count)
        var failed = Set<Int>()
        if warmup {
            print("  warm-up round (not counted) …")
            for entry in entries {
                entry.removeOutputs()
                _ = entry.run()
            }
        }
        for round in 0..<runs {
            for step in entries.indices {
                let index = (round + (round.isMultiple(of: 2) ? step : entries.count - step)) % entries.count
                guard !failed.contains(index) else { continue }
                let entry = entries[index]
                if round > 0 || warmup { entry.removeOutputs() }
                let result = entry.run()
                if result.status != 0 {
                    print("  \(entry.tool): exit \(result.status) — not counted")
                    failed.insert(index)
                } else {
                    samples[index].append(result)
                    rounds[index].append(round)
                }
            }
        }
        for (index, entry) in entries.enumerated() where !failed.contains(index) && !samples[index].isEmpty {
            let m = Measurement(task: task, tool: entry.tool, bytes: entry.bytes, units: entry.units,
                                samples: samples[index], rounds: rounds[index])
            results.append(m)
            print(m.line)
        }
    }

    /// Prints and keeps how many times faster `a` is than `b` (ratio of median times) and, when
    /// both ran interleaved, the median and range of the ratios within each round, and the ratio of
    /// median CPU times (user + system). Returns the ratio the goals are judged on: the median of
    /// the per-round ratios when both ran interleaved, else the ratio of medians (`nil` when
    /// either did not run).
    @discardableResult
    static func ratio(_ task: String, _ a: String, over b: String) -> Double? {
        guard let x = results.first(where: { $0.task == task && $0.tool == a }),
              let y = results.first(where: { $0.task == task && $0.tool == b }) else { return nil }
        var line = "ratio [\(task)]: \(a) is \(format(y.medianSeconds / x.medianSeconds, 2))× as fast as \(b) "
            + "(\(format(x.medianSeconds, 2)) s vs \(format(y.medianSeconds, 2)) s; peak RSS \(format(x.peakRSSMiB, 0)) vs \(format(y.peakRSSMiB, 0)) MiB)"
        let paired = x.pairedRatios(over: y)
        if !paired.isEmpty {
            let sorted = paired.sorted()
            line += "; round by round \(format(median(paired), 2))× median, \(format(sorted.first!, 2))–\(format(sorted.last!, 2))× over \(sorted.count) rounds"
        }
        // CPU time leaves out steal time (the host running something else on this core) where the
        // kernel accounts for it, as these VMs' kernels do (the steal column of /proc/stat).
        let cpu = { (m: Measurement) in median(m.samples.map { $0.userSeconds + $0.systemSeconds }) }
        if cpu(x) > 0 { line += "; CPU time (user + system) \(format(cpu(y) / cpu(x), 2))× (\(format(cpu(x), 2)) s vs \(format(cpu(y), 2)) s)" }
        ratios.append(line)
        print("  " + line)
        return paired.isEmpty ? y.medianSeconds / x.medianSeconds : median(paired)
    }

    /// Prints and keeps how a ratio from ``ratio(_:_:over:)`` compares with another one, e.g. the
    /// same comparison on gzipped input against plain input: `ratio` as a percentage of `reference`.
    static func compareRatios(_ task: String, _ what: String, _ ratio: Double?, with reference: Double?, _ referenceName: String) {
        guard let ratio, let reference, reference > 0 else { return }
        let line = "ratio of ratios [\(task)]: \(what) \(format(ratio, 2))× is \(format(ratio / reference * 100, 1)) % of "
            + "\(referenceName) \(format(reference, 2))× (round-by-round medians)"
        ratios.append(line)
        print("  " + line)
    }

    /// Prints and keeps the peak RSS of `a` against `b` (the largest of each tool's runs), and
    /// their peak anonymous memory where it was sampled.
    static func memory(_ task: String, _ a: String, over b: String) {
        guard let x = results.first(where: { $0.task == task && $0.tool == a }),
              let y = results.first(where: { $0.task == task && $0.tool == b }), y.peakRSSMiB > 0 else { return }
        var line = "peak RSS [\(task)]: \(a) \(format(x.peakRSSMiB, 0)) MiB is \(format(x.peakRSSMiB / y.peakRSSMiB * 100, 1)) % of "
            + "\(b)'s \(format(y.peakRSSMiB, 0)) MiB"
        if x.peakAnonMiB > 0, y.peakAnonMiB > 0 {
            line += "; anonymous \(format(x.peakAnonMiB, 0)) MiB is \(format(x.peakAnonMiB / y.peakAnonMiB * 100, 1)) % of "
                + "\(format(y.peakAnonMiB, 0)) MiB"
        }
        ratios.append(line)
        print("  " + line)
    }

    /// Drops the page cache's cold start: reads the files (and every file in the folders) once.
    static func warm(_ paths: String...) {
        for path in paths {
            let read = isDirectory(path) ? "find '\(path)' -type f -exec cat {} + > /dev/null" : "cat '\(path)' > /dev/null"
            _ = Runner.run(["/bin/sh", "-c", read])
        }
    }

    /// A file of this package's `Peers/` folder (the peers written for these benchmarks; the
    /// others are in SHARED).
    static func peer(_ name: String) -> String {
        repository + "/Benchmarks/Peers/" + name
    }
}
