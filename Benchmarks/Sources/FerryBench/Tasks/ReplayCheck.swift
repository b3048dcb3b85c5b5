#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replay checked on a generated history of `EVENTS` events (default 2,000,000): several zones,
/// ~30% of the changes modifications and ~10% deletions, zones deleted and purged now and then
/// (`ferry-histories`, the property tests' generator at scale). Untimed checks, then the replay
/// time of both forms:
/// - replaying everything equals the final state, from Ferry's change log and from the CloudKit
///   responses alike;
/// - `--until T` equals the state at T;
/// - `--base (state at T) --since T` equals the full replay.
@MainActor func replayCheckTask() {
    let events = Int(Bench.environment["EVENTS"] ?? "") ?? 2_000_000
    let dir = Bench.data + "/generated-history"
    print("\n== replay checked on a generated history of \(events) events (untimed checks)")
    print("generating \(dir) …")
    let generated = Runner.run([Bench.helper("ferry-histories"), dir, String(events)])
    guard generated.status == 0 else { fatal("ferry-histories failed: \(generated.status)") }
    guard let token = readText(dir + "/at-token.txt") else { fatal("no token in \(dir)/at-token.txt") }
    let ferryLog = dir + "/history.ferry.ndjson", cloudKit = dir + "/history.cloudkit.ndjson"
    let fromFerry = dir + "/state-ferry.ndjson", fromCloudKit = dir + "/state-cloudkit.ndjson"
    let at = dir + "/state-at.ndjson", continued = dir + "/state-continued.ndjson"
    runOrStop([Bench.ferry, "replay", ferryLog, "--out", fromFerry, "--quiet"])
    checkStates("replaying Ferry's change log gives the final state", fromFerry, dir + "/expected-final.ndjson")
    runOrStop([Bench.ferry, "replay", cloudKit, "--out", fromCloudKit, "--quiet"])
    checkStates("replaying the CloudKit responses gives the final state", fromCloudKit, dir + "/expected-final.ndjson")
    runOrStop([Bench.ferry, "replay", ferryLog, "--until", token, "--out", at, "--quiet"])
    checkStates("--until \(token) gives the state at that checkpoint", at, dir + "/expected-at.ndjson")
    runOrStop([Bench.ferry, "replay", ferryLog, "--base", at, "--since", token, "--out", continued, "--quiet"])
    checkStates("--base (state at \(token)) --since \(token) gives the full replay's state", continued, fromFerry)
    for path in [fromFerry, fromCloudKit, at, continued] { unlink(path + ".tokens.json") }
    Bench.measure("replay-generated", "ferry replay (Ferry's log)", bytes: fileSize(ferryLog), units: events,
                  [Bench.ferry, "replay", ferryLog, "--out", fromFerry, "--quiet"], removing: [fromFerry, fromFerry + ".tokens.json"])
    Bench.measure("replay-generated", "ferry replay (CloudKit responses)", bytes: fileSize(cloudKit), units: events,
                  [Bench.ferry, "replay", cloudKit, "--out", fromCloudKit, "--quiet"], removing: [fromCloudKit, fromCloudKit + ".tokens.json"])
    for path in [fromFerry, fromCloudKit, at, continued] {
        unlink(path)
        unlink(path + ".tokens.json")
    }
}
