@testable import FerryCLI
import FerryInternals
import FerryIO
import FerryKit
import FerryJSON
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

func scratchDirectory() -> String { TestScratch.directory() }

func records(at path: String) throws -> [Record] {
    let reader = NDJSONReader(source: try InputFile(path: path))
    var result: [Record] = []
    while let r = try reader.next() { result.append(r) }
    return result
}

func write(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: false, encoding: .utf8)
}

/// The built `ferry` executable (debug, else release).
func ferryBinary() throws -> String {
    let root = samplesDirectory().replacingOccurrences(of: "/Samples", with: "")
    let candidates = [root + "/.build/debug/ferry", root + "/.build/release/ferry"]
    guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw CommandFailure(message: "ferry binary not built at \(candidates)")
    }
    return binary
}

/// Runs the built `ferry` binary with standard input (`stdin`, or the file `stdinFile`), returning
/// exit code, stdout and stderr.
func runBinary(_ arguments: [String], stdin: String = "", stdinFile: String? = nil) throws -> (Int32, String, String) {
    let binary = try ferryBinary()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    let input = Pipe(), output = Pipe(), error = Pipe()
    if let stdinFile {
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdinFile))
    } else {
        process.standardInput = input
    }
    process.standardOutput = output
    process.standardError = error
    try process.run()
    if stdinFile == nil {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
    }
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

@Suite("ferry convert")
struct ConvertCommandTests {
    let samples = samplesDirectory()

    @Test("inspect keeps records without a type apart from a type named (none)")
    func inspectUntyped() throws {
        let dir = scratchDirectory()
        try write(#"{"recordName":"a"}"# + "\n" + #"{"recordName":"b","recordType":"(none)"}"# + "\n" + #"{"recordName":"c"}"# + "\n",
                  to: dir + "/in.ndjson")
        let (code, out, error) = try runBinary(["inspect", dir + "/in.ndjson", "--json"])
        #expect(code == 0, "\(error)")
        let zone = try #require(try JSONValue(parsing: out)["zones"]?.arrayValue?.first)
        #expect(zone["types"]?["(none)"] == .number(JSONNumber(Int64(1))))
        #expect(zone["untyped"] == .number(JSONNumber(Int64(2))))
        let (_, text, _) = try runBinary(["inspect", dir + "/in.ndjson"])
        #expect(text.contains("(no type)") && text.contains("(none)"), "\(text)")
    }

    @Test("Converting a sample writes every record")
    func convertsSample() throws {
        let out = scratchDirectory() + "/out.ndjson"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", out, "--quiet"]) == 0)
        #expect(try records(at: out) == records(at: samples + "/chat.ndjson"))
    }

    @Test("Type and zone filters, projection and limit apply while streaming")
    func filters() throws {
        let dir = scratchDirectory()
        let out = dir + "/m.ndjson"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", samples + "/shopping.ndjson", out,
                               "--type", "Message", "--zone", "Chats", "--keys", "text,count", "--quiet"]) == 0)
        let messages = try records(at: out)
        #expect(messages.count == 3)
        #expect(messages.allSatisfy { $0.recordType == "Message" && $0.zoneName == "Chats" })
        #expect(messages.allSatisfy { Set($0.fields!.entries.map(\.name)).isSubset(of: ["text", "count"]) })
        #expect(messages.allSatisfy { $0.created != nil && $0.parent != nil }) // system fields kept
        let limited = dir + "/l.ndjson"
        #expect(Ferry.execute(["convert", samples + "/shopping.ndjson", limited, "--limit", "2", "--quiet"]) == 0)
        #expect(try records(at: limited).count == 2)
    }

    @Test("Sorting is stable, ascending or descending, and can spill to disk")
    func sorting() throws {
        let dir = scratchDirectory()
        var text = ""
        for i in 0..<200 {
            text += #"{"recordName":"r\#(i)","fields":{"k":{"value":\#(i % 7),"type":"INT64"}}}"# + "\n"
        }
        try write(text, to: dir + "/in.ndjson")
        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/asc.ndjson", "--sort", "k", "--quiet"]) == 0)
        let asc = try records(at: dir + "/asc.ndjson")
        let expected = (0..<200).sorted { ($0 % 7, $0) < ($1 % 7, $1) }.map { "r\($0)" }
        #expect(asc.map(\.recordName) == expected)
        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/desc.ndjson", "--sort", "k:desc", "--quiet"]) == 0)
        let desc = try records(at: dir + "/desc.ndjson")
        #expect(desc.map(\.recordName) == (0..<200).sorted { ($1 % 7, $0) < ($0 % 7, $1) }.map { "r\($0)" })

        // The same through on-disk runs merged.
        let sorter = RecordSorter(key: RecordSortKey(parsing: "k")!, memoryBudget: 2_000, temporaryDirectory: dir)
        for r in try records(at: dir + "/in.ndjson") { try sorter.add(r) }
        var merged: [String] = []
        try sorter.finish { merged.append($0.recordName); return true }
        #expect(merged == expected)
    }

    @Test("Sort runs are Ferry temporaries of this process, gone after the merge; a dead run's runs are removed")
    func sortRunsAreTemporaries() throws {
        let dir = scratchDirectory()
        try write("stale run", to: dir + "/.ferry-sort-999999999-0000001f-0.ndjson")
        try write("not ours", to: dir + "/notes.txt")
        var text = ""
        for i in 0..<200 { text += #"{"recordName":"r\#(i)","fields":{"k":{"value":\#(i % 7),"type":"INT64"}}}"# + "\n" }
        try write(text, to: dir + "/in.ndjson")
        do {
            let sorter = RecordSorter(key: RecordSortKey(parsing: "k")!, memoryBudget: 2_000, temporaryDirectory: dir)
            for r in try records(at: dir + "/in.ndjson") { try sorter.add(r) }
            let runs = FileSystem.entries(in: dir).filter { $0.hasPrefix(".ferry-sort-") }
            #expect(!runs.isEmpty)
            #expect(runs.allSatisfy { FileSystem.temporaryOwner(ofName: $0) == FileSystem.processID })
            var count = 0
            try sorter.finish { _ in count += 1; return true }
            #expect(count == 200)
        }
        #expect(Set(FileSystem.entries(in: dir)) == ["in.ndjson", "notes.txt"])
    }

    @Test("Bad input exits 1 with a positioned message and leaves no output file")
    func dataErrors() throws {
        let dir = scratchDirectory()
        try write("{\"recordName\":\"a\"}\n{\"recordName\":\n{\"recordName\":\"c\"}\n", to: dir + "/bad.ndjson")
        #expect(Ferry.execute(["convert", dir + "/bad.ndjson", dir + "/out.ndjson", "--quiet"]) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["bad.ndjson"])
    }

    @Test("With --on-error skip the rest converts and the rejects file holds exactly the bad lines")
    func skipWithRejects() throws {
        let dir = scratchDirectory()
        let bad = "{\"recordName\":\n"
        try write("{\"recordName\":\"a\"}\n" + bad + "{\"recordName\":\"c\"}\n", to: dir + "/bad.ndjson")
        #expect(Ferry.execute(["convert", dir + "/bad.ndjson", dir + "/out.ndjson", "--on-error", "skip",
                               "--rejects", dir + "/rejects.ndjson", "--quiet"]) == 0)
        #expect(try records(at: dir + "/out.ndjson").map(\.recordName) == ["a", "c"])
        #expect(try String(contentsOfFile: dir + "/rejects.ndjson", encoding: .utf8) == bad)
    }

    @Test("On every core, each kind of bad line fails with exit 1 and no output, or is skipped into the rejects file",
          arguments: ["truncated", "wrong type", "missing recordName", "duplicate keys", "nested arrays", "binary garbage",
                      "invalid UTF-8", "huge line"])
    func parallelBadInput(kind: String) throws {
        let bad: [UInt8]
        switch kind {
        case "truncated": bad = Array(#"{"recordName":"t","fields":{"a":{"value":"#.utf8)
        case "wrong type": bad = Array(#"{"recordName":"w","fields":{"n":{"value":"abc","type":"INT64"}}}"#.utf8)
        case "missing recordName": bad = Array(#"{"recordType":"T","fields":{}}"#.utf8)
        case "duplicate keys": bad = Array(#"{"recordName":"d","recordName":"e"}"#.utf8)
        case "nested arrays":
            bad = Array(#"{"recordName":"n","x":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000)
                + Array(repeating: UInt8(ascii: "]"), count: 100_000) + [UInt8(ascii: "}")]
        case "binary garbage": bad = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }.filter { $0 != 0x0A }
        case "invalid UTF-8": bad = Array(#"{"recordName":"#.utf8) + [0x22, 0xC3, 0x28, 0x22, 0x7D]
        default: bad = Array(#"{"recordName":"big","x":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 3 << 20) + Array("\"}".utf8)
        }
        var generator = RecordGenerator(seed: 8)
        let before = generator.ndjson(count: 3000), after = generator.ndjson(count: 3000)
        let dir = scratchDirectory()
        try Data(before + bad + [0x0A] + after).write(to: URL(fileURLWithPath: dir + "/in.ndjson"))
        let limits = ["--threads", "2", "--max-line-bytes", String(2 << 20), "--quiet"]
        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/out.ndjson"] + limits) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/out.ndjson", "--on-error", "skip",
                               "--rejects", dir + "/rejects.ndjson"] + limits) == 0)
        #expect(try records(at: dir + "/out.ndjson").count == 6000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/rejects.ndjson")) == Data(bad + [0x0A]))
    }

    @Test("Usage errors exit 2", arguments: [
        ["convert"], ["convert", "only-one"], ["convert", "a", "b", "--rejects", "r"], ["convert", "a", "b", "--sort", ":x"],
        ["convert", "/no/such/input.ndjson", "out.ndjson"], ["frobnicate"], ["convert", "a", "b", "--limit", "-3"],
    ])
    func usageErrors(arguments: [String]) {
        #expect(Ferry.execute(arguments) == 2)
    }

    @Test("Standard input to standard output composes in a pipe, with the summary on stderr")
    func pipes() throws {
        let input = try String(contentsOfFile: samples + "/chat.ndjson", encoding: .utf8)
        let (code, out, err) = try runBinary(["convert", "-", "-", "--type", "Reaction"], stdin: input)
        #expect(code == 0)
        #expect(out.split(separator: "\n").count == 1)
        #expect(err.contains("5 records in, 1 out, 0 rejected"))
        let (quietCode, _, quietErr) = try runBinary(["convert", "-", "-", "--quiet"], stdin: input)
        #expect(quietCode == 0 && quietErr.isEmpty)
        let (badCode, _, badErr) = try runBinary(["convert", "-", "-"], stdin: "{\"recordName\": 5}\n")
        #expect(badCode == 1)
        #expect(badErr.contains("-:1:16: record 1: expected a string for \"recordName\""))
        let (helpCode, help, _) = try runBinary(["convert", "--help"])
        #expect(helpCode == 0 && help.contains("Examples:"))
    }

    @Test("The JSON summary reports counts for scripts")
    func jsonSummary() throws {
        let dir = scratchDirectory()
        let (code, out, _) = try runBinary(["convert", samples + "/shopping.ndjson", dir + "/o.ndjson", "--json"])
        #expect(code == 0)
        let summary = try JSONValue(parsing: out)
        #expect(summary["recordsIn"] == .number(JSONNumber(Int64(8))))
        #expect(summary["recordsOut"] == .number(JSONNumber(Int64(8))))
        #expect(summary["rejected"] == .number(JSONNumber(Int64(0))))
    }
}

@Suite("ferry inspect")
struct InspectCommandTests {
    @Test("Names with control characters print escaped in inspect's tables and diff's lines: no line breaks, no terminal codes")
    func controlCharactersEscaped() throws {
        let dir = scratchDirectory()
        let line = #"{"recordName":"a\u001b[2J","recordType":"T\nX","zoneID":{"zoneName":"Z\tq"},"fields":{"f\u2028":{"value":1,"type":"INT64"}}}"#
        try (line + "\n").write(toFile: dir + "/a.ndjson", atomically: false, encoding: .utf8)
        try "".write(toFile: dir + "/b.ndjson", atomically: false, encoding: .utf8)
        let (code, out, _) = try runBinary(["inspect", dir + "/a.ndjson"])
        #expect(code == 0)
        #expect(out.contains(#"Z\tq"#) && out.contains(#"T\nX"#) && out.contains(#"f\u2028"#), "\(out)")
        let (diffCode, diffOut, _) = try runBinary(["diff", dir + "/a.ndjson", dir + "/b.ndjson"])
        #expect(diffCode == 1)
        #expect(diffOut.contains(#"only in A: Z\tq/a\u001b[2J [T\nX]"#), "\(diffOut)")
        for text in [out, diffOut] {
            #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x09 || $0.value == 0x2028 })
        }
    }

    @Test("Inspect tells zones apart by name and owner, and names by their bytes")
    func zonesByOwner() throws {
        var summary = DatasetSummary()
        let lines = [#"{"recordName":"A","recordType":"Note","zoneID":{"zoneName":"Shared","ownerRecordName":"_alice"}}"#,
                     #"{"recordName":"A","recordType":"Note","zoneID":{"zoneName":"Shared","ownerRecordName":"_bob"}}"#,
                     #"{"recordName":"B","recordType":"\u00e9","fields":{"\u00e9":{"value":1,"type":"INT64"}}}"#,
                     #"{"recordName":"C","recordType":"e\u0301","fields":{"e\u0301":{"value":1,"type":"INT64"}}}"#]
        for line in lines { summary.add(try RecordJSON.decodeRecord(line)) }
        #expect(summary.zoneTypes.count == 3)
        #expect(summary.fields.count == 2)
        let json = try JSONValue(parsing: summary.json)
        guard case .array(let zones)? = json["zones"] else { Issue.record("no zones"); return }
        let owners = zones.compactMap { $0["ownerRecordName"] }
        #expect(owners == [.string("_alice"), .string("_bob"), .null])
        #expect(summary.text.contains("OWNER"))
        #expect(summary.text.contains("_alice") && summary.text.contains("_bob"))
    }

    @Test("Inspect counts zones, types and fields with their types and time span")
    func summary() throws {
        var summary = DatasetSummary()
        for record in try records(at: samplesDirectory() + "/chat.ndjson") { summary.add(record) }
        #expect(summary.records == 5)
        let chats = ZoneKey(ZoneID(zoneName: "Chats", ownerRecordName: "_9f4c2a7e1b3d5f60"))
        #expect(summary.zoneTypes[chats]?[ExactName("Message")] == 3)
        #expect(summary.fields[ExactName("relatedRecords")]?.types == ["REFERENCE_LIST": 2])
        #expect(summary.created == 1_700_000_000_000...1_700_000_300_000)
        let json = try JSONValue(parsing: summary.json)
        #expect(json["records"] == .number(JSONNumber(Int64(5))))
        #expect(ISO8601.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.format(milliseconds: 1_700_000_000_123) == "2023-11-14T22:13:20.123Z")
        #expect(ISO8601.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test("Inspect exits 0 on samples and 1 on bad input")
    func exitCodes() throws {
        let (code, out, _) = try runBinary(["inspect", samplesDirectory() + "/shopping.ndjson", "--json"])
        #expect(code == 0)
        #expect(try JSONValue(parsing: out)["records"] == .number(JSONNumber(Int64(8))))
        let (bad, _, err) = try runBinary(["inspect", "-"], stdin: "not json\n")
        #expect(bad == 1)
        #expect(err.contains("-:1:1: record 1:"))
    }
}

@Suite("Folder inputs")
struct FolderInputTests {
    let samples = samplesDirectory()

    @Test("A folder input reads the files in its subfolders, and says on stderr what it skipped")
    func folderDescendsAndCountsSkipped() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/in/day1/morning", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: samples + "/chat.ndjson", toPath: dir + "/in/day1/morning/chat.ndjson")
        try FileManager.default.copyItem(atPath: samples + "/shopping.ndjson", toPath: dir + "/in/shopping.ndjson")
        try FileManager.default.copyItem(atPath: samples + "/chat.ndjson", toPath: dir + "/in/.hidden.ndjson")
        let (status, _, error) = try runBinary(["convert", dir + "/in", dir + "/out.ndjson"])
        #expect(status == 0, "\(error)")
        #expect(try records(at: dir + "/out.ndjson")
            == records(at: samples + "/chat.ndjson") + records(at: samples + "/shopping.ndjson"))
        #expect(error.contains("skipped 1 entry") && error.contains(".hidden.ndjson"), "\(error)")
        let (quietStatus, _, quietError) = try runBinary(["convert", dir + "/in", dir + "/out2.ndjson", "--quiet"])
        #expect(quietStatus == 0 && quietError.isEmpty, "\(quietError)")
    }
}
