@testable import FerryCLI
import FerryArchive
import FerryIO
import FerryRecords
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Store commands")
struct StoreCommandTests {
    let samples = samplesDirectory()

    /// Every sample through a store and back: the same records, byte for byte, as convert writes them.
    @Test("Every sample round-trips NDJSON → store → NDJSON without loss",
          arguments: ["chat.ndjson", "edge-cases.ndjson", "shopping.ndjson", "query-response.json"])
    func samplesRoundTrip(sample: String) throws {
        let directory = scratchDirectory()
        let direct = directory + "/direct.ndjson", store = directory + "/s.sqlite", back = directory + "/back.ndjson"
        #expect(Ferry.execute(["convert", samples + "/" + sample, direct, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", samples + "/" + sample, store, "--quiet", "--mode", "replace"]) == 0)
        #expect(Ferry.execute(["convert", store, back, "--quiet"]) == 0)
        // A store holds one record per zone and name (the last, with --mode replace), in first-seen order.
        var expected: [String: Record] = [:]
        var order: [String] = []
        for record in try records(at: direct) {
            let key = (record.zoneID?.zoneName ?? "") + "\u{0}" + (record.zoneID?.ownerRecordName ?? "") + "\u{0}" + record.recordName
            if expected[key] == nil { order.append(key) }
            expected[key] = record
        }
        #expect(try records(at: back) == order.map { expected[$0]! })
    }

    @Test("A store input is recognised by content, whatever its name, and filtered through SQL")
    func storeByContent() throws {
        let directory = scratchDirectory()
        let store = directory + "/chat.data"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        try FileManager.default.copyItem(atPath: directory + "/s.sqlite", toPath: store)
        let out = directory + "/m.ndjson"
        #expect(Ferry.execute(["convert", store, out, "--type", "Message", "--where", "count > 10", "--quiet"]) == 0)
        let expected = try records(at: samples + "/chat.ndjson").filter {
            $0.recordType == "Message" && (($0[field: "count"]?.int64Value ?? 0) > 10)
        }
        #expect(try records(at: out) == expected)
    }

    @Test("A SQLite file of another program is refused, and never overwritten")
    func foreignSQLite() throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        var bytes = try InputFile(path: directory + "/s.sqlite").readAll()
        bytes.replaceSubrange(68..<72, with: [0, 0, 0, 1])
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/other.sqlite"))
        let (code, _, error) = try runBinary(["convert", samples + "/chat.ndjson", directory + "/other.sqlite"])
        #expect(code == 1)
        #expect(error.contains("another program"))
        #expect(try InputFile(path: directory + "/other.sqlite").readAll() == bytes)
        let (readCode, _, readError) = try runBinary(["inspect", directory + "/other.sqlite"])
        #expect(readCode == 1)
        #expect(readError.contains("application_id"))
    }

    @Test("query prints a page and a cursor; the next pages continue it; --explain names the index")
    func query() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        var generator = RecordGenerator(seed: 3)
        var lines = ""
        for index in 0..<60 {
            var record = Record(recordName: "m\(index)", recordType: "Message", zoneID: ZoneID(zoneName: "Chats"))
            record.fields = ["sentAt": RecordField(.timestamp(1_700_000_000_000 + Int64((index * 37) % 60)), type: .timestamp),
                             "text": RecordField(.string(generator.string()), type: .string)]
            lines += RecordJSON.encodedString(record) + "\n"
        }
        try write(lines, to: directory + "/in.ndjson")
        #expect(Ferry.execute(["convert", directory + "/in.ndjson", store, "--quiet"]) == 0)
        try write("DEFINE SCHEMA RECORD TYPE Message (sentAt TIMESTAMP QUERYABLE SORTABLE, text STRING SEARCHABLE);", to: directory + "/app.ckdb")
        #expect(Ferry.execute(["index", store, "--schema", directory + "/app.ckdb"]) == 0)

        var names: [String] = []
        var cursor: String?
        repeat {
            var arguments = ["query", store, "--type", "Message", "--sort", "sentAt:desc", "--limit", "25", "--response"]
            if let cursor { arguments += ["--cursor", cursor] }
            let (code, output, _) = try runBinary(arguments)
            #expect(code == 0)
            let response = try JSONValue(parsing: output)
            names += (response["records"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue }
            cursor = response["continuationMarker"]?.stringValue
        } while cursor != nil
        let expected = (0..<60).sorted { a, b in
            let x = (a * 37) % 60, y = (b * 37) % 60
            return x != y ? x > y : a < b
        }.map { "m\($0)" }
        #expect(names == expected)

        let (_, explanation, _) = try runBinary(["query", store, "--type", "Message", "--sort", "sentAt:desc", "--where", "sentAt > %@",
                                                 "--args", "[{\"$date\": 1700000000.01}]", "--explain"])
        #expect(explanation.contains("fx_Message__sentAt"))
        #expect(explanation.contains("sentAt >"))
    }

    @Test("index, query, convert --changes-since and extract print their summaries as JSON; --quiet prints nothing")
    func jsonSummaries() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        try write("DEFINE SCHEMA RECORD TYPE Message (sentAt TIMESTAMP QUERYABLE SORTABLE, text STRING);", to: directory + "/app.ckdb")

        let (quietCode, quietOut, quietErr) = try runBinary(["index", store, "--schema", directory + "/app.ckdb", "--quiet"])
        #expect(quietCode == 0 && quietOut.isEmpty && quietErr.isEmpty)
        let (indexCode, indexOut, _) = try runBinary(["index", store, "--json"])
        #expect(indexCode == 0)
        let indexes = try JSONValue(parsing: indexOut).arrayValue ?? []
        #expect(indexes.count == 1)
        #expect(indexes.first?["fieldName"]?.stringValue == "sentAt" && indexes.first?["recordType"]?.stringValue == "Message")

        let (queryCode, queryOut, queryErr) = try runBinary(["query", store, "--type", "Message", "--limit", "2", "--json"])
        #expect(queryCode == 0)
        #expect(queryOut.split(separator: "\n").count == 2)
        let summary = try JSONValue(parsing: queryErr)
        #expect(summary["records"] == .number(JSONNumber(Int64(2))))
        #expect(summary["cursor"]?.stringValue?.isEmpty == false)
        #expect(summary["unevaluated"] == .number(JSONNumber(Int64(0))))

        let changes = directory + "/changes.ndjson"
        let (changesCode, changesOut, _) = try runBinary(["convert", store, changes, "--changes-since", "0", "--json"])
        #expect(changesCode == 0)
        let exported = try JSONValue(parsing: changesOut)
        let events = try String(contentsOfFile: changes, encoding: .utf8).split(separator: "\n").count
        #expect(exported["events"] == .number(JSONNumber(Int64(events))) && events > 0)
        #expect(exported["token"]?.stringValue?.hasPrefix("fs1.") == true)

        let archive = directory + "/s.tar.gz"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", archive, "--quiet"]) == 0)
        let (extractCode, extractOut, extractErr) = try runBinary(["extract", archive, directory + "/out", "--json"])
        #expect(extractCode == 0 && extractErr.isEmpty)
        let extracted = try JSONValue(parsing: extractOut)
        #expect(extracted["manifest"] == .bool(true))
        #expect(extracted["records"] == .number(JSONNumber(Int64(try records(at: samples + "/chat.ndjson").count))))
        #expect((extracted["members"]?.numberValue?.int64Value ?? 0) >= 2)
    }

    @Test("Reader processes query a store while another process imports into it, without errors")
    func readersDuringImport() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite", input = directory + "/many.ndjson"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        var generator = RecordGenerator(seed: 8)
        try Data(generator.ndjson(count: 40_000)).write(to: URL(fileURLWithPath: input))
        let importer = Process()
        importer.executableURL = URL(fileURLWithPath: try ferryBinary())
        importer.arguments = ["convert", input, store, "--quiet"]
        try importer.run()
        var queries = 0, during = 0
        repeat {
            let running = importer.isRunning
            let (code, output, error) = try runBinary(["query", store, "--type", "Message", "--limit", "3"])
            #expect(code == 0, "\(error)")
            #expect(output.split(separator: "\n").count == 3)
            queries += 1
            if running { during += 1 }
        } while importer.isRunning || queries < 3
        importer.waitUntilExit()
        #expect(importer.terminationStatus == 0)
        #expect(during > 0, "no query ran while the import did")
        #expect(try RecordStore(path: store).recordCount() == 40_005)
    }

    @Test("convert into a store another process writes waits --busy-timeout seconds, then fails saying so, the store unchanged")
    func busyTimeout() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        let holder = try StoreWriter(path: store, configuration: .init(mode: .upsert))
        try holder.write(Record(recordName: "held", recordType: "T"))
        let (code, _, error) = try runBinary(["convert", samples + "/shopping.ndjson", store, "--mode", "upsert", "--busy-timeout", "0.3"])
        #expect(code == 1)
        #expect(error.contains("another process is writing to the store; waited 0.3 s"), "\(error)")
        try holder.finish()
        #expect(try RecordStore(path: store).recordCount() == 6)
        #expect(Ferry.execute(["convert", samples + "/shopping.ndjson", store, "--mode", "upsert", "--busy-timeout", "0.3", "--quiet"]) == 0)
    }

    /// A process that opens a store a second time (as `ferry serve` opens a reader per request)
    /// must keep the locks its first connection holds: were they dropped, another process
    /// reading the store would take itself for the last one, checkpoint and delete the WAL, and
    /// the first connection's later writes would go to a deleted file.
    @Test("A store opened again in one process keeps its WAL while another process reads it")
    func secondConnectionKeepsLocks() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        let writer = try RecordStore(path: store, access: .readWrite)
        _ = try writer.apply([.recordSaved(Record(recordName: "first", recordType: "T"))], database: "private")
        let reader = try RecordStore(path: store)
        #expect(try reader.recordCount() == 6)
        let (code, _, _) = try runBinary(["inspect", store, "--quiet"])
        #expect(code == 0)
        #expect(FileManager.default.fileExists(atPath: store + "-wal"), "another process deleted the WAL of a store open here")
        _ = try writer.apply([.recordSaved(Record(recordName: "second", recordType: "T"))], database: "private")
        let (_, output, _) = try runBinary(["fetch", store, "first", "second", "--zone", "_defaultZone"])
        #expect(output.split(separator: "\n").count == 2, "\(output)")
        withExtendedLifetime(reader) {}
    }

    @Test("fetch prints the records asked for and reports the missing ones")
    func fetch() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        let all = try records(at: samples + "/chat.ndjson")
        let (code, output, error) = try runBinary(["fetch", store, all[1].recordName, "no-such-record", all[0].recordName, "--zone", all[0].zoneName])
        #expect(code == 1)
        #expect(error.contains("not found: no-such-record"))
        let fetched = output.split(separator: "\n").map { try! RecordJSON.decodeRecord(String($0)) }
        #expect(fetched == [all[1], all[0]])
    }

    @Test("Changes still held at the end of a replay into a store are applied in history order, whatever their scope")
    func heldChangesInHistoryOrder() throws {
        let directory = scratchDirectory()
        let history = [
            #"{"event":"checkpoint","syncToken":"db1","moreComing":false}"#,
            #"{"event":"checkpoint","zoneID":{"zoneName":"A"},"syncToken":"A1","moreComing":false}"#,
            #"{"event":"recordSaved","record":{"recordName":"r0","recordType":"T","zoneID":{"zoneName":"A"},"fields":{"v":{"value":1,"type":"INT64"}}}}"#,
            #"{"event":"zoneDeleted","zoneID":{"zoneName":"A"}}"#,
            #"{"event":"recordSaved","record":{"recordName":"r0","recordType":"T","zoneID":{"zoneName":"A"},"fields":{"v":{"value":2,"type":"INT64"}}}}"#,
        ].joined(separator: "\n") + "\n"
        try write(history, to: directory + "/h.ndjson")
        #expect(Ferry.execute(["replay", directory + "/h.ndjson", "--out", directory + "/ref.ndjson", "--quiet"]) == 0)
        // Each run a process of its own: the order of the scopes' held changes must not depend
        // on a process's hashing.
        for run in 0..<6 {
            let store = directory + "/s\(run).sqlite"
            for _ in 0..<2 {
                let (code, _, error) = try runBinary(["replay", directory + "/h.ndjson", "--into", store, "--quiet"])
                #expect(code == 0, "\(error)")
            }
            let (same, out, _) = try runBinary(["diff", store, directory + "/ref.ndjson"])
            #expect(same == 0, "run \(run): \(out)")
        }
    }

    @Test("A store goes into an archive and back with its tokens and its journal")
    func archiveRoundTrip() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite", archive = directory + "/s.tar.gz", restored = directory + "/r.sqlite"
        let history = HistoryGenerator.generate(seed: 21, configuration: .init(batches: 20, keepsSnapshots: false))
        try Data(history.ferryLines).write(to: URL(fileURLWithPath: directory + "/h.ndjson"))
        #expect(Ferry.execute(["replay", directory + "/h.ndjson", "--into", store, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", store, archive, "--quiet"]) == 0)
        #expect(Ferry.execute(["verify", archive, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", archive, restored, "--quiet"]) == 0)
        #expect(Ferry.execute(["verify", restored, "--quiet"]) == 0)

        let a = try RecordStore(path: store), b = try RecordStore(path: restored)
        #expect(b.storeID == a.storeID)
        // Records keep their stored order (the order they were first stored), not the journal's.
        let (_, exported, _) = try runBinary(["convert", store, "-", "--quiet"])
        let (_, restoredExport, _) = try runBinary(["convert", restored, "-", "--quiet"])
        #expect(restoredExport == exported)
        #expect(try b.currentToken() == a.currentToken())
        #expect(try b.zones().map { [$0.zoneID.zoneName, $0.syncToken ?? "-", $0.database] }
                == a.zones().filter { !$0.isDeleted }.map { [$0.zoneID.zoneName, $0.syncToken ?? "-", $0.database] })
        // The journal answers every token alike: changes since each of several tokens.
        for sequence in stride(from: Int64(0), through: try a.currentToken().sequence, by: 97) {
            let token = StoreToken(storeID: a.storeID, sequence: sequence)
            var x: [String] = [], y: [String] = []
            try a.changes(since: token) { x.append("\($0.sequence) \($0.event)") }
            try b.changes(since: token) { y.append("\($0.sequence) \($0.event)") }
            #expect(x.count == y.count && x == y, "since \(token): \(x.count) and \(y.count) changes")
        }
        // And a replay continues from the restored store's tokens: the same history changes nothing.
        let before = try b.journalCount()
        #expect(Ferry.execute(["replay", directory + "/h.ndjson", "--into", restored, "--quiet"]) == 0)
        #expect(try RecordStore(path: restored).journalCount() == before)
    }

    @Test("A store's records go into an archive under the database they are in")
    func archiveKeepsDatabases() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite", archive = directory + "/s.tar.gz", back = directory + "/back.sqlite"
        let line = { (text: String) in #"{"recordName":"r","recordType":"T","zoneID":{"zoneName":"Z","ownerRecordName":"_o"},"fields":{"copy":{"value":"\#(text)","type":"STRING"}}}"# }
        try write(line("private copy") + "\n", to: directory + "/p.ndjson")
        try write(line("shared copy") + "\n", to: directory + "/s.ndjson")
        #expect(Ferry.execute(["convert", directory + "/p.ndjson", store, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", directory + "/s.ndjson", store, "--database", "shared", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", store, archive, "--quiet"]) == 0)
        #expect(Ferry.execute(["verify", archive, "--quiet"]) == 0)
        let reader = try ArchiveReader(source: InputFile(path: archive))
        var placed: [String] = []
        while let entry = try reader.nextRecord() {
            placed.append("\(entry.database ?? "-"): \(entry.record[field: "copy"].map { "\($0)" } ?? "-")")
        }
        #expect(placed.sorted() == ["private: string(\"private copy\")", "shared: string(\"shared copy\")"], "\(placed)")
        // Imported into another store, each record lands in its database again.
        #expect(Ferry.execute(["convert", "/dev/null", back, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", archive, back, "--mode", "upsert", "--quiet"]) == 0)
        let zones = try RecordStore(path: back).zones().map { "\($0.database) \($0.zoneID.zoneName)" }.sorted()
        #expect(zones == ["private Z", "shared Z"])
        #expect(try records(at: { () throws -> String in
            let out = directory + "/back.ndjson"
            _ = Ferry.execute(["convert", back, out, "--quiet"])
            return out
        }()).count == 2)
    }

    @Test("replay --into, inspect, verify and --changes-since work together")
    func replayIntoAndChanges() throws {
        let directory = scratchDirectory()
        let store = directory + "/s.sqlite"
        #expect(Ferry.execute(["replay", samples + "/chat-history.ndjson", "--into", store, "--quiet"]) == 0)
        let (code, output, _) = try runBinary(["inspect", store])
        #expect(code == 0)
        #expect(output.contains("Ferry store"))
        #expect(Ferry.execute(["verify", store, "--quiet"]) == 0)
        let log = directory + "/changes.ndjson"
        #expect(Ferry.execute(["convert", store, log, "--changes-since", "0", "--quiet"]) == 0)
        // The exported change log replays to the same records.
        let state = directory + "/state.ndjson"
        #expect(Ferry.execute(["replay", log, "--out", state, "--quiet"]) == 0)
        let fromStore = directory + "/fromstore.ndjson"
        #expect(Ferry.execute(["convert", store, fromStore, "--quiet"]) == 0)
        #expect(Set(try records(at: state).map(RecordJSON.encodedString)) == Set(try records(at: fromStore).map(RecordJSON.encodedString)))
        let (badCode, _, badError) = try runBinary(["convert", store, log, "--changes-since", "fs1.0000000000000000.1"])
        #expect(badCode == 1)
        #expect(badError.contains("another store"))
    }
}

#if os(Linux)
@Suite("A store read by a user who may not write it")
struct ReadOnlyStoreTests {
    @Test("A store nobody may write, in a folder nobody may write, is read, and nothing is left beside it")
    func readOnlyFolder() throws {
        // A folder of its own that another user can enter, with a copy of the binary.
        let directory = try #require(FileSystem.makeTemporaryDirectory(template: FileSystem.temporaryDirectory + "/ferry-ro-XXXXXX"))
        defer {
            _ = chmod(directory + "/store", 0o755)
            try? FileManager.default.removeItem(atPath: directory)
        }
        #expect(chmod(directory, 0o755) == 0)
        try FileManager.default.createDirectory(atPath: directory + "/store", withIntermediateDirectories: false)
        let store = directory + "/store/s.sqlite"
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", store, "--quiet"]) == 0)
        try FileManager.default.copyItem(atPath: try ferryBinary(), toPath: directory + "/ferry")
        #expect(chmod(store, 0o444) == 0 && chmod(directory + "/store", 0o555) == 0)
        // As root, whom permissions do not stop, the reader runs as nobody.
        let command = [directory + "/ferry", "query", store, "--type", "Message", "--quiet"].map { "'" + $0 + "'" }.joined(separator: " ")
        let (status, out, err) = try runShell((getuid() == 0 ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " : "") + command)
        #expect(status == 0, "\(err)")
        #expect(out.split(separator: "\n").count == 3)
        #expect(FileSystem.entries(in: directory + "/store") == ["s.sqlite"])
    }
}
#endif

@Suite("Store round trips of unusual records")
struct StoreUnusualRecordTests {
    @Test("An empty recordName goes NDJSON → store → NDJSON, through every import path")
    func emptyName() throws {
        let directory = scratchDirectory()
        let lines = [#"{"recordName":"","recordType":"T","fields":{}}"#,
                     #"{"recordType":"T","recordName":"","zoneID":{"zoneName":"Z"},"fields":{"a":{"value":1,"type":"INT64"}}}"#]
        try write(lines.joined(separator: "\n") + "\n", to: directory + "/in.ndjson")
        #expect(Ferry.execute(["convert", directory + "/in.ndjson", directory + "/s.sqlite", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", directory + "/s.sqlite", directory + "/out.ndjson", "--quiet"]) == 0)
        let back = try records(at: directory + "/out.ndjson").map(RecordJSON.encodedString)
        let expected = try lines.map { try RecordJSON.encodedString(RecordJSON.decodeRecord($0)) }
        #expect(back == expected)
    }
}

@Suite("Store tombstones")
struct StoreTombstoneTests {
    @Test("A tombstone a store holds survives store → archive → store")
    func tombstoneRoundTrip() throws {
        let directory = scratchDirectory()
        let lines = [#"{"recordName":"t","recordType":"T","deleted":true}"#, #"{"recordName":"u","recordType":"T","fields":{}}"#]
        try write(lines.joined(separator: "\n") + "\n", to: directory + "/in.ndjson")
        let store = directory + "/s.sqlite", archive = directory + "/s.tar.gz", restored = directory + "/r.sqlite"
        #expect(Ferry.execute(["convert", directory + "/in.ndjson", store, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", store, archive, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", archive, restored, "--quiet"]) == 0)
        for (path, name) in [(store, "a.ndjson"), (restored, "b.ndjson")] {
            #expect(Ferry.execute(["convert", path, directory + "/" + name, "--quiet"]) == 0)
        }
        let a = try records(at: directory + "/a.ndjson").map(RecordJSON.encodedString)
        let b = try records(at: directory + "/b.ndjson").map(RecordJSON.encodedString)
        #expect(a.count == 2)
        #expect(b == a)
    }
}

@Suite("Reading a store leaves nothing beside it")
struct StoreReaderCleanupTests {
    let samples = samplesDirectory()

    /// The files of `directory`, sorted.
    static func listing(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test("Every command that reads a store leaves no -wal or -shm file beside it", arguments: [
        ["convert", "STORE", "OUT/o.ndjson", "--quiet"],
        ["inspect", "STORE"],
        ["verify", "STORE", "--quiet"],
        ["query", "STORE", "--type", "Message"],
        ["fetch", "STORE", "nope"],
        ["diff", "STORE", "STORE"],
    ])
    func readersLeaveNoSidecars(command: [String]) throws {
        let directory = scratchDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/in", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
        let store = directory + "/in/s.sqlite"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", store, "--quiet"]) == 0)
        #expect(try Self.listing(directory + "/in") == ["s.sqlite"])
        let arguments = command.map { $0.replacingOccurrences(of: "STORE", with: store).replacingOccurrences(of: "OUT", with: directory + "/out") }
        _ = try runBinary(arguments)
        #expect(try Self.listing(directory + "/in") == ["s.sqlite"], "\(command[0])")
    }

    @Test("A folder holding a store converts the same the second time")
    func folderWithStoreConvertsTwice() throws {
        let directory = scratchDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/in", withIntermediateDirectories: true)
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/in/s.sqlite", "--quiet"]) == 0)
        try FileManager.default.copyItem(atPath: samples + "/shopping.ndjson", toPath: directory + "/in/shopping.ndjson")
        let first = try runBinary(["convert", directory + "/in", directory + "/one.ndjson", "--quiet"])
        let second = try runBinary(["convert", directory + "/in", directory + "/two.ndjson", "--quiet"])
        #expect(first.0 == 0 && second.0 == 0, "\(first.2) \(second.2)")
        #expect(try records(at: directory + "/two.ndjson") == records(at: directory + "/one.ndjson"))
        #expect(try records(at: directory + "/one.ndjson").count == 13)
    }
}
