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

    /// Runs `command` RUNS times (a shell command line when `shell`), records and prints the
    /// median. Returns `nil` (and says so) when a run fails. The files in `removing` are deleted
    /// after each run, untimed, so every run writes its outputs afresh (as run_peers.sh does).
    @discardableResult
    static func measure(_ task: String, _ tool: String, bytes: Int, units: Int = 0, _ command: [String],
                        shell: Bool = false, removing outputs: [String] = []) -> Measurement? {
        var samples: [Runner.Result] = []
        for run in 0..<runs {
            if run > 0 { for path in outputs { unlink(path) } }
            let result = shell ? Runner.run(["/bin/sh", "-c", command.joined(separator: " ")]) : Runner.run(command)
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

    /// Prints and keeps how many times faster `a` is than `b` (ratio of median times).
    static func ratio(_ task: String, _ a: String, over b: String) {
        guard let x = results.first(where: { $0.task == task && $0.tool == a }),
              let y = results.first(where: { $0.task == task && $0.tool == b }) else { return }
        let line = "ratio [\(task)]: \(a) is \(format(y.medianSeconds / x.medianSeconds, 2))× as fast as \(b) "
            + "(\(format(x.medianSeconds, 2)) s vs \(format(y.medianSeconds, 2)) s; peak RSS \(format(x.peakRSSMiB, 0)) vs \(format(y.peakRSSMiB, 0)) MiB)"
        ratios.append(line)
        print("  " + line)
    }

    /// Drops the page cache's cold start: reads the files once.
    static func warm(_ paths: String...) {
        for path in paths { _ = Runner.run(["/bin/sh", "-c", "cat '\(path)' > /dev/null"]) }
    }
}
