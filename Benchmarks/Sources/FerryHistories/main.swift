// ferry-histories: writes a generated change history, in both of the forms Ferry reads, with the
// states a replay must produce — for checking replay on millions of events (`ferry-bench replay-check`).
//
//   ferry-histories DIR EVENTS [SEED]
//
// Writes DIR/history.ferry.ndjson (Ferry's change log), DIR/history.cloudkit.ndjson (CloudKit
// change responses), DIR/expected-final.ndjson (the state at the end) and DIR/expected-at.ndjson
// (the state at the first zone checkpoint after half the events) and DIR/at-token.txt (that
// checkpoint's token), then prints one JSON line of counts. The generator (FerryTestSupport.HistoryGenerator) is
// the one the property tests use, at a larger size: several zones, about 30% of the changes
// modify a record and 10% delete one, and zones are now and then deleted or purged.
import FerryRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    let line = Array("ferry-histories: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

func write(_ bytes: [UInt8], to path: String) {
    guard let file = fopen(path, "wb") else { fail("cannot create \(path)") }
    let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    guard written == bytes.count, fclose(file) == 0 else { fail("cannot write \(path)") }
}

func ndjson(_ records: [Record]) -> [UInt8] {
    var out = JSONOutput(capacity: 1 << 20)
    for record in records {
        RecordJSON.encode(record, into: &out)
        out.append(UInt8(ascii: "\n"))
    }
    return out.array
}

/// How many lines of Ferry's form start with `prefix`.
func count(_ prefix: String, in lines: [UInt8]) -> Int {
    let needle = Array(prefix.utf8)
    var result = 0
    var start = 0
    while start < lines.count {
        var end = start
        while end < lines.count && lines[end] != 0x0A { end += 1 }
        if end - start >= needle.count && lines[start..<(start + needle.count)].elementsEqual(needle) { result += 1 }
        start = end + 1
    }
    return result
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let events = Int(arguments[2]), events > 0 else {
    fail("usage: ferry-histories DIR EVENTS [SEED]")
}
let directory = arguments[1]
let seed = arguments.count > 3 ? UInt64(arguments[3]) ?? 2026 : 2026
// A batch holds 1…400 changes (about 200) and a checkpoint.
let configuration = HistoryGenerator.Configuration(
    zones: 6, batches: events / 200, changesPerBatch: 400, zoneChangeChance: 0.003,
    keepsSnapshots: false, hostileFields: true, snapshotAfterEvents: events / 2)
let history = HistoryGenerator.generate(seed: seed, configuration: configuration)
guard let at = history.checkpoints.first(where: { !$0.snapshot.isEmpty && $0.token != history.checkpoints.last?.token }) else {
    fail("no checkpoint kept its state; generate more events")
}
_ = mkdir(directory, 0o755)
write(history.ferryLines, to: directory + "/history.ferry.ndjson")
write(history.cloudKitLines, to: directory + "/history.cloudkit.ndjson")
write(ndjson(history.finalSnapshot), to: directory + "/expected-final.ndjson")
write(ndjson(at.snapshot), to: directory + "/expected-at.ndjson")
write(Array(at.token.utf8), to: directory + "/at-token.txt")
let zoneDeletions = count(#"{"event":"zoneDeleted""#, in: history.ferryLines)
let zonePurges = count(#"{"event":"zonePurged""#, in: history.ferryLines)
let changes = history.created + history.modified + history.deleted
print("{\"events\":\(history.eventCount),\"changes\":\(changes),\"created\":\(history.created),\"modified\":\(history.modified),"
      + "\"deleted\":\(history.deleted),\"zoneDeletions\":\(zoneDeletions),\"zonePurges\":\(zonePurges),"
      + "\"checkpoints\":\(history.checkpoints.count),\"finalRecords\":\(history.finalSnapshot.count),"
      + "\"atToken\":\"\(at.token)\",\"atRecords\":\(at.snapshot.count)}")
