#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ferry's change log for the shared history `history` (`gen_records.py --changes`), next to it in
/// DATA as `changes.ferry.ndjson`: converted, untimed, by this package's `ferry-bench-changes`
/// when missing or older than the history. ``checkChangeConversion()`` runs first, every time.
@MainActor func ferryChangeLog(for history: String) -> String {
    checkChangeConversion()
    let log = Bench.data + "/changes.ferry.ndjson"
    if fileSize(log) == 0 || modificationTime(log) < modificationTime(history) {
        print("converting \(history) to Ferry's change-log format (untimed) …")
        runOrStop([Bench.helper("ferry-bench-changes"), history, log])
    }
    return log
}

/// Checks `ferry-bench-changes` on four events with a checkpoint every two, untimed: the change log
/// is exactly the expected one (the record given with whitespace compacted, the deletion with its
/// type, one checkpoint per zone touched, named `<zone>@<token>`), and `ferry replay` of it keeps
/// record `a` at change tag 2, ends at the tokens `Chats@2` and `Work@4`, and `--until Chats@2`
/// stops before `b` was saved. A failure stops the benchmark: the replay figures would be of
/// another history.
@MainActor func checkChangeConversion() {
    let directory = Bench.data + "/bench-changes-check"
    _ = mkdir(Bench.data, 0o755)
    _ = mkdir(directory, 0o755)
    let input = directory + "/events.ndjson", log = directory + "/changes.ferry.ndjson"
    let state = directory + "/state.ndjson", until = directory + "/until.ndjson"
    writeText(input, """
        {"token":1,"op":"upsert","recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"timestamp":1,"record":{"recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"recordChangeTag":"1"}}
        {"token":2,"op":"modify","recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"timestamp":2,"record": {"recordName": "a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"recordChangeTag":"2"}}
        {"token":3,"op":"upsert","recordName":"b","recordType":"Chat","zoneID":{"zoneName":"Work","ownerRecordName":"_o"},"timestamp":3,"record":{"recordName":"b","recordType":"Chat","zoneID":{"zoneName":"Work","ownerRecordName":"_o"}}}
        {"token":4,"op":"delete","recordName":"b","recordType":"Chat","zoneID":{"zoneName":"Work","ownerRecordName":"_o"},"timestamp":4}

        """)
    let expectedLog = """
        {"event":"recordSaved","record":{"recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"recordChangeTag":"1"}}
        {"event":"recordSaved","record":{"recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"recordChangeTag":"2"}}
        {"event":"checkpoint","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"syncToken":"Chats@2","moreComing":false}
        {"event":"recordSaved","record":{"recordName":"b","recordType":"Chat","zoneID":{"zoneName":"Work","ownerRecordName":"_o"}}}
        {"event":"recordDeleted","recordName":"b","zoneID":{"zoneName":"Work","ownerRecordName":"_o"},"recordType":"Chat"}
        {"event":"checkpoint","zoneID":{"zoneName":"Work","ownerRecordName":"_o"},"syncToken":"Work@4","moreComing":false}

        """
    let recordA = #"{"recordName":"a","recordType":"Chat","zoneID":{"zoneName":"Chats","ownerRecordName":"_o"},"recordChangeTag":"2"}"# + "\n"
    print("\n== ferry-bench-changes check (untimed)")
    runOrStop([Bench.helper("ferry-bench-changes"), "--checkpoint-every", "2", input, log])
    var failures: [String] = []
    if readText(log, keepingNewlines: true) != expectedLog { failures.append("the change log is not the expected one (\(log))") }
    runOrStop([Bench.ferry, "replay", log, "--out", state, "--quiet"])
    if readText(state, keepingNewlines: true) != recordA { failures.append("the replayed state is not record a at change tag 2") }
    let tokens = readText(state + ".tokens.json") ?? ""
    for token in ["Chats@2", "Work@4"] where !tokens.contains("\"syncToken\":\"\(token)\"") {
        failures.append("the replay does not end at token \(token)")
    }
    runOrStop([Bench.ferry, "replay", log, "--until", "Chats@2", "--out", until, "--quiet"])
    if readText(until, keepingNewlines: true) != recordA { failures.append("--until Chats@2 is not record a at change tag 2") }
    guard failures.isEmpty else { fatal("ferry-bench-changes check failed: " + failures.joined(separator: "; ")) }
    print("  ok: four events convert to the expected change log, which replays to the expected state and tokens")
    for path in [input, log, state, state + ".tokens.json", until, until + ".tokens.json"] { unlink(path) }
    rmdir(directory)
}
