@testable import FerryArchive
@testable import FerryChangeLog
@testable import FerryCLI
import FerryIO
import FerryKit
import FerryJSON
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes bytes to a file.
private func write(_ bytes: [UInt8], to path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}

/// Canonical JSON of records, for comparing states however they were spelled.
private func canonicalJSON(_ records: [Record]) -> [String] {
    records.map { RecordJSON.encodedString($0) }
}

/// The records of any file Ferry reads (NDJSON, gzip, archive), canonical.
private func stateRecords(_ path: String) throws -> [String] {
    let reader = try InputRecognizer().openReader(path)
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return canonicalJSON(records)
}

private func files(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

@Suite("ferry replay and ferry diff")
struct ReplayCommandTests {
    let history = HistoryGenerator.generate(seed: 501, configuration: .init(batches: 30))

    /// A directory holding the history in Ferry's form (`h.ndjson`) and CloudKit's (`ck.ndjson`).
    private func setUp() -> String {
        let directory = scratchDirectory()
        write(history.ferryLines, to: directory + "/h.ndjson")
        write(history.cloudKitLines, to: directory + "/ck.ndjson")
        return directory
    }

    @Test("Replaying a history writes the final snapshot and its tokens beside it, in Ferry's form and CloudKit's")
    func replaysToSnapshot() throws {
        let dir = setUp()
        for input in ["h.ndjson", "ck.ndjson"] {
            let out = dir + "/state-\(input)"
            #expect(Ferry.execute(["replay", dir + "/" + input, "--out", out, "--quiet"]) == 0)
            #expect(try stateRecords(out) == canonicalJSON(history.finalSnapshot))
            let tokens = try ReplayTokens(contentsOfFile: out + ".tokens.json")
            #expect(tokens.lastCheckpoint?.syncToken == history.checkpoints.last?.token)
            #expect(tokens.recordCount == history.finalSnapshot.count)
        }
    }

    @Test("The sample history replays to the chat sample; --until its first checkpoint keeps the first versions")
    func sampleHistory() throws {
        let dir = scratchDirectory()
        let samples = samplesDirectory()
        #expect(Ferry.execute(["replay", samples + "/chat-history.ndjson", "--out", dir + "/state.ndjson", "--quiet"]) == 0)
        // Replay writes records by zone and name; the sample is in conversation order.
        let expected = try stateRecords(samples + "/chat.ndjson").sorted()
        #expect(try stateRecords(dir + "/state.ndjson").sorted() == expected)
        #expect(Ferry.execute(["diff", dir + "/state.ndjson", samples + "/chat.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", samples + "/chat-history.ndjson", "--out", dir + "/state.xml", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/state.xml").sorted() == expected)
        #expect(Ferry.execute(["replay", samples + "/chat-history.ndjson", "--until", "Chats-1", "--out", dir + "/then.ndjson", "--quiet"]) == 0)
        let then = try stateRecords(dir + "/then.ndjson")
        #expect(then.count == 3)
        #expect(then.contains { $0.contains("Hello, wrold!") && $0.contains("\"t000000\"") })
        #expect(then.contains { $0.contains("draft") })
        #expect(Ferry.execute(["diff", dir + "/then.ndjson", samples + "/chat.ndjson", "--quiet"]) == 1)
    }

    @Test("--until gives the snapshot at a checkpoint; --base with --since, or with its tokens alone, continues to the full state")
    func untilAndSince() throws {
        let dir = setUp()
        let point = history.checkpoints[history.checkpoints.count / 2]
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--until", point.token, "--out", dir + "/at.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/at.ndjson") == canonicalJSON(point.snapshot))
        #expect(Ferry.execute(["replay", dir + "/ck.ndjson", "--base", dir + "/at.ndjson", "--since", point.token,
                               "--out", dir + "/next.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/next.ndjson") == canonicalJSON(history.finalSnapshot))
        // The base's tokens name its last checkpoint: --since may be left out.
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--base", dir + "/at.ndjson", "--out", dir + "/next2.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/next2.ndjson") == canonicalJSON(history.finalSnapshot))
    }

    @Test("The next file of a series continues the base's state: a history without the base's token applies whole, after it")
    func seriesOfFiles() throws {
        let dir = setUp()
        let point = history.checkpoints[history.checkpoints.count / 2]
        let lines = try String(contentsOfFile: dir + "/h.ndjson", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let cut = try #require(lines.firstIndex { $0.contains(#""event":"checkpoint""#) && $0.contains(#""syncToken":"\#(point.token)""#) })
        try (lines[...cut].joined(separator: "\n") + "\n").write(toFile: dir + "/h1.ndjson", atomically: false, encoding: .utf8)
        try lines[(cut + 1)...].joined(separator: "\n").write(toFile: dir + "/h2.ndjson", atomically: false, encoding: .utf8)
        #expect(Ferry.execute(["replay", dir + "/h1.ndjson", "--out", dir + "/s1.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/s1.ndjson") == canonicalJSON(point.snapshot))
        // The next file alone, as Docs/ReplaySemantics.md shows it, and the whole log again: the same state.
        let (code, _, error) = try runBinary(["replay", dir + "/h2.ndjson", "--base", dir + "/s1.ndjson", "--out", dir + "/s2.ndjson"])
        #expect(code == 0, "\(error)")
        #expect(error.contains("holds no checkpoint with --base's last token"), "\(error)")
        #expect(try stateRecords(dir + "/s2.ndjson") == canonicalJSON(history.finalSnapshot))
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--base", dir + "/s1.ndjson", "--out", dir + "/s3.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/s3.ndjson") == canonicalJSON(history.finalSnapshot))
        #expect(try String(contentsOfFile: dir + "/s2.ndjson.tokens.json", encoding: .utf8)
                == String(contentsOfFile: dir + "/s3.ndjson.tokens.json", encoding: .utf8))
        // An explicit --since the history lacks still fails, and so does standard input, which cannot be read again.
        #expect(Ferry.execute(["replay", dir + "/h2.ndjson", "--base", dir + "/s1.ndjson", "--since", point.token,
                               "--out", dir + "/s4.ndjson", "--quiet"]) == 1)
        let (stdinCode, _, stdinError) = try runBinary(["replay", "-", "--base", dir + "/s1.ndjson", "--out", dir + "/s5.ndjson"],
                                                       stdinFile: dir + "/h2.ndjson")
        #expect(stdinCode == 1)
        #expect(stdinError.contains("cannot be read again"), "\(stdinError)")
        // A pipe given as a path (bash's process substitution) cannot be read again either.
        let (pipeCode, _, pipeError) = try runShell("bash -c \"'\(try ferryBinary())' replay <(cat '\(dir)/h2.ndjson') --base '\(dir)/s1.ndjson' --out '\(dir)/s6.ndjson'\"")
        #expect(pipeCode == 1)
        #expect(pipeError.contains("cannot be read again"), "\(pipeError)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/s6.ndjson"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/s4.ndjson") && !FileManager.default.fileExists(atPath: dir + "/s5.ndjson"))
    }

    @Test("--until stops reading at its checkpoint: a line being written after it, in the same file, is never read",
          arguments: ["0", "2"])
    func untilIgnoresLaterBytes(threads: String) throws {
        let dir = scratchDirectory()
        let text = #"{"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{}}}"# + "\n"
            + #"{"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"Z1","moreComing":false}"# + "\n"
            + #"{"event":"recordSaved","record":{"recordNa"#
        try text.write(toFile: dir + "/h.ndjson", atomically: false, encoding: .utf8)
        let (code, _, error) = try runBinary(["replay", dir + "/h.ndjson", "--until", "Z1", "--out", dir + "/s.ndjson", "--threads", threads])
        #expect(code == 0, "\(error)")
        #expect(try stateRecords(dir + "/s.ndjson").count == 1)
        // Without --until the cut line is an error, with its line.
        let (whole, _, message) = try runBinary(["replay", dir + "/h.ndjson", "--out", dir + "/t.ndjson", "--threads", threads])
        #expect(whole == 1)
        #expect(message.contains("h.ndjson:3:"), "\(message)")
    }

    @Test("A bad tokens file is named in the message; a save --log cannot decode is named by record and event")
    func namedFailures() throws {
        let dir = scratchDirectory()
        try #"{"recordName":"a","recordType":"T","fields":{}}"#.write(toFile: dir + "/s.ndjson", atomically: false, encoding: .utf8)
        try #"{"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"Z1"}"#.write(toFile: dir + "/h.ndjson", atomically: false, encoding: .utf8)
        for (tokens, expected) in [(#"{"format":"nope"}"#, #"s.ndjson.tokens.json: expected "format": "ferry-replay-tokens", found "nope""#),
                                   (#"{"format":"ferry-replay-tokens","lastCheckpoint":{}}"#, #"s.ndjson.tokens.json: expected a "syncToken""#)] {
            try tokens.write(toFile: dir + "/s.ndjson.tokens.json", atomically: false, encoding: .utf8)
            let (code, _, error) = try runBinary(["replay", dir + "/h.ndjson", "--base", dir + "/s.ndjson", "--out", dir + "/o.ndjson"])
            #expect(code == 1)
            #expect(error.contains(expected), "\(error)")
        }
        let big = #"{"event":"recordSaved","record":{"recordName":"big","fields":{"n":{"value":99999999999999999999999,"type":"INT64"}}}}"#
        try big.write(toFile: dir + "/big.ndjson", atomically: false, encoding: .utf8)
        let (code, _, error) = try runBinary(["replay", dir + "/big.ndjson", "--out", dir + "/o.ndjson", "--log", dir + "/o.log"])
        #expect(code == 1)
        #expect(error.contains(#"the record "big" of zone "_defaultZone", as event 1 of the history saved it"#), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/o.log") && !FileManager.default.fileExists(atPath: dir + "/o.ndjson"))
    }

    @Test("Members of a tar that are not record files by name are skipped, and replay and convert say so")
    func skippedMembersAreNamed() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/pages", withIntermediateDirectories: true)
        try #"{"records":[{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{}}],"syncToken":"S1"}"#
            .write(toFile: dir + "/pages/1.json", atomically: false, encoding: .utf8)
        try "notes\n".write(toFile: dir + "/pages/README.txt", atomically: false, encoding: .utf8)
        #expect(try runShell("cd '\(dir)' && COPYFILE_DISABLE=1 tar czf pages.tar.gz pages").0 == 0)
        for arguments in [["replay", dir + "/pages.tar.gz", "--out", dir + "/s.ndjson"], ["convert", dir + "/pages.tar.gz", dir + "/c.ndjson"]] {
            let (code, _, error) = try runBinary(arguments)
            #expect(code == 0, "\(error)")
            #expect(error.contains("skipped 1 member (pages/README.txt): not a record file"), "\(error)")
            let (_, _, quiet) = try runBinary(arguments + ["--quiet"])
            #expect(quiet.isEmpty)
        }
    }

    @Test("A folder of response files, gzip-compressed or not, and standard input are histories")
    func foldersGzipAndStdin() throws {
        let dir = setUp()
        let pages = dir + "/pages"
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        let lines = lines(of: history.cloudKitLines)
        for (i, line) in lines.enumerated() { write(line + [0x0A], to: pages + "/" + String(format: "%05d.json", i)) }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c '\(dir)/h.ndjson' > '\(dir)/h.ndjson.gz' && gzip '\(pages)/00003.json'"]
        try gzip.run()
        gzip.waitUntilExit()
        #expect(Ferry.execute(["replay", pages, "--out", dir + "/from-folder.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/from-folder.ndjson") == canonicalJSON(history.finalSnapshot))
        #expect(Ferry.execute(["replay", dir + "/h.ndjson.gz", "--out", dir + "/from-gz.ndjson.gz", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/from-gz.ndjson.gz") == canonicalJSON(history.finalSnapshot))
        let (code, _, _) = try runBinary(["replay", "-", "--out", dir + "/from-stdin.ndjson", "--quiet"],
                                         stdin: String(decoding: history.ferryLines, as: UTF8.self))
        #expect(code == 0)
        #expect(try stateRecords(dir + "/from-stdin.ndjson") == canonicalJSON(history.finalSnapshot))
    }

    @Test("A history file read in place (mapped), redirected to standard input, piped or gzip-compressed gives the same bytes")
    func mappedAndReadAgree() throws {
        let dir = setUp()
        let binary = try ferryBinary()
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", """
            cd '\(dir)' && gzip -c h.ndjson > h.ndjson.gz &&
            '\(binary)' replay h.ndjson --out mapped.ndjson --quiet &&
            '\(binary)' replay - --out redirected.ndjson --quiet < h.ndjson &&
            cat h.ndjson | '\(binary)' replay - --out piped.ndjson --quiet &&
            '\(binary)' replay h.ndjson.gz --out unzipped.ndjson --quiet
            """]
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        let mapped = try #require(FileManager.default.contents(atPath: dir + "/mapped.ndjson"))
        #expect(try stateRecords(dir + "/mapped.ndjson") == canonicalJSON(history.finalSnapshot))
        for other in ["redirected", "piped", "unzipped"] {
            #expect(FileManager.default.contents(atPath: dir + "/\(other).ndjson") == mapped, "\(other)")
        }
    }

    @Test("An empty history, as a file or on standard input, gives an empty state")
    func emptyHistory() throws {
        let dir = scratchDirectory()
        write([], to: dir + "/empty.ndjson")
        #expect(Ferry.execute(["replay", dir + "/empty.ndjson", "--out", dir + "/state.ndjson", "--quiet"]) == 0)
        #expect(FileManager.default.contents(atPath: dir + "/state.ndjson") == Data())
        let (code, _, _) = try runBinary(["replay", "-", "--out", dir + "/piped.ndjson", "--quiet"], stdin: "")
        #expect(code == 0)
        #expect(FileManager.default.contents(atPath: dir + "/piped.ndjson") == Data())
    }

    @Test("An archive state carries the zone tokens in its manifest and serves as a base")
    func archives() throws {
        let dir = setUp()
        let point = history.checkpoints[history.checkpoints.count / 3]
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--until", point.token, "--out", dir + "/at.tar.gz", "--quiet"]) == 0)
        let archive = try ArchiveReader(path: dir + "/at.tar.gz")
        let tokens = Dictionary(archive.manifest.zones.compactMap { zone in zone.changeToken.map { (zone.zoneID.zoneName, $0) } },
                                uniquingKeysWith: { $1 })
        let expected = try Replayer.tokens(of: history.ferryLines, until: point.token)
        for zone in expected.zones where !zone.isDeleted && zone.syncToken != nil {
            #expect(tokens[zone.zoneID.zoneName] == zone.syncToken)
        }
        #expect(!files(in: dir).contains("at.tar.gz.tokens.json"))
        #expect(try stateRecords(dir + "/at.tar.gz").sorted() == canonicalJSON(point.snapshot).sorted())
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--base", dir + "/at.tar.gz", "--since", point.token,
                               "--out", dir + "/end.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/end.ndjson") == canonicalJSON(history.finalSnapshot))
    }

    @Test("--tokens-only prints the latest token of every zone, as text or JSON")
    func tokensOnly() throws {
        let dir = setUp()
        let (code, out, _) = try runBinary(["replay", dir + "/h.ndjson", "--tokens-only"])
        #expect(code == 0)
        for (zone, expected) in history.zoneTokens where expected.token != nil {
            #expect(out.contains("\(zone)\t\(HistoryGenerator.owner)\t\(expected.token!)"))
        }
        let (jsonCode, json, _) = try runBinary(["replay", dir + "/ck.ndjson", "--tokens-only", "--json"])
        #expect(jsonCode == 0)
        let tokens = try ReplayTokens(parsing: json)
        #expect(tokens.recordCount == nil)
        #expect(Set(tokens.zones.compactMap(\.syncToken)) == Set(history.zoneTokens.values.compactMap(\.token)))
    }

    @Test("Anomalies are counted on stderr and listed with --report; --json summarizes on stdout")
    func anomalies() throws {
        let dir = scratchDirectory()
        let text = #"""
        {"event":"recordSaved","record":{"recordName":"a","zoneID":{"zoneName":"Z"},"recordChangeTag":"1","parent":{"recordName":"nobody"}}}
        {"event":"recordDeleted","recordName":"ghost","zoneID":{"zoneName":"Z"}}
        {"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"T1"}
        """#
        write(Array(text.utf8), to: dir + "/h.ndjson")
        let (code, out, err) = try runBinary(["replay", dir + "/h.ndjson", "--out", dir + "/s.ndjson", "--report", dir + "/r.json", "--json"])
        #expect(code == 0)
        #expect(err.contains("2 anomalies: unknownRecordDeleted 1, danglingParent 1"))
        let summary = try JSONValue(parsing: out)
        #expect(summary["events"] == .number(JSONNumber(Int64(3))))
        #expect(summary["records"] == .number(JSONNumber(Int64(1))))
        #expect(summary["lastToken"] == .string("T1"))
        let report = try JSONValue(parsing: String(decoding: FileManager.default.contents(atPath: dir + "/r.json")!, as: UTF8.self))
        #expect(report["total"] == .number(JSONNumber(Int64(2))))
        #expect(report["anomalies"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }.sorted() == ["danglingParent", "unknownRecordDeleted"])
    }

    @Test("Bad input fails with file:line:column and exit 1, leaving no output", arguments: [
        ("{\"event\":\"recordSaved\",\"record\":{\"recordName\":\"a\"}}\n{\"event\":\"recordSaved\",\"record\":{\"recordName\":", "h.ndjson:2:", []),
        ("{\"event\":\"recordSaved\",\"record\":{\"recordName\":\"a\"}}\n\n{\"event\":\"recordRenamed\"}", "h.ndjson:3:", []),
        ("{\"event\":\"checkpoint\",\"syncToken\":\"T1\"}", "\"T9\"", ["--until", "T9"]),
    ] as [(String, String, [String])])
    func badInput(text: String, mentions: String, options: [String]) throws {
        let dir = scratchDirectory()
        write(Array(text.utf8), to: dir + "/h.ndjson")
        let (code, _, err) = try runBinary(["replay", dir + "/h.ndjson", "--out", dir + "/s.ndjson", "--report", dir + "/r.json"] + options)
        #expect(code == 1)
        #expect(err.contains(mentions), "\(err)")
        #expect(files(in: dir) == ["h.ndjson"])
    }

    @Test("Usage errors exit 2", arguments: [
        ["replay"], ["replay", "h.ndjson"], ["replay", "h.ndjson", "--out", "s.ndjson", "--since", "T"],
        ["replay", "h.ndjson", "--tokens-only", "--out", "s.ndjson"], ["replay", "missing.ndjson", "--out", "s.ndjson"],
        ["replay", "h.ndjson", "--out", "s.ndjson", "--base", "s.ndjson"], ["diff", "h.ndjson"], ["diff", "-", "-"],
    ])
    func usage(arguments: [String]) {
        let dir = setUp()
        let absolute = arguments.map { $0.hasSuffix(".ndjson") ? dir + "/" + $0 : $0 }
        #expect(Ferry.execute(absolute) == 2)
    }

    @Test("ferry diff exits 0 for identical states, 1 for different ones naming what differs, 2 for unreadable input")
    func diff() throws {
        let dir = setUp()
        #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--out", dir + "/a.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", dir + "/ck.ndjson", "--out", dir + "/b.tar.gz", "--quiet"]) == 0)
        let (same, sameText, _) = try runBinary(["diff", dir + "/a.ndjson", dir + "/b.tar.gz"])
        #expect(same == 0)
        #expect(sameText.hasPrefix("identical"))
        var changed = history.finalSnapshot
        changed[0].fields = RecordFields([.init(name: "new", field: RecordField(.string("x"), type: .string))])
        let removed = changed.removeLast()
        var out = JSONOutput(capacity: 1 << 16)
        for record in changed {
            RecordJSON.encode(record, into: &out)
            out.append(0x0A)
        }
        write(out.array, to: dir + "/c.ndjson")
        let (different, text, _) = try runBinary(["diff", dir + "/a.ndjson", dir + "/c.ndjson"])
        #expect(different == 1)
        #expect(text.contains("only in A: ") && text.contains(removed.recordName))
        #expect(text.contains("changed: ") && text.contains("fields ") && text.contains("new"))
        let (jsonCode, json, _) = try runBinary(["diff", dir + "/a.ndjson", dir + "/c.ndjson", "--json"])
        #expect(jsonCode == 1)
        let value = try JSONValue(parsing: json)
        #expect(value["identical"] == .bool(false))
        #expect(value["onlyInA"]?.arrayValue?.count == 1)
        #expect(value["changed"]?.arrayValue?.first?["fields"]?.arrayValue?.contains(.string("new")) == true)
        write(Array("{\"recordName\":".utf8), to: dir + "/bad.ndjson")
        let (bad, _, err) = try runBinary(["diff", dir + "/a.ndjson", dir + "/bad.ndjson"])
        #expect(bad == 2)
        #expect(err.contains("bad.ndjson:1:"))
    }

    @Test("ferry diff refuses an input that holds a record twice (exit 2, naming it), instead of comparing its last version",
          arguments: [true, false])
    func diffDuplicates(inFirst: Bool) throws {
        let dir = setUp()
        let sample = samplesDirectory() + "/chat.ndjson", twice = dir + "/twice.ndjson"
        let lines = try String(contentsOfFile: sample, encoding: .utf8)
        try lines.appending(lines).write(toFile: twice, atomically: false, encoding: .utf8)
        let (code, output, error) = try runBinary(["diff"] + (inFirst ? [twice, sample] : [sample, twice]))
        #expect(code == 2)
        #expect(output.isEmpty)
        #expect(error.hasPrefix("ferry: \(twice): "), "\(error)")
        #expect(error.contains(#"record "C0FFEE00-0000-4000-8000-000000000001" in zone "Chats" (owner "_9f4c2a7e1b3d5f60") twice (records 1 and 6)"#), "\(error)")
        #expect(error.contains(" and 2 more records more than once\n"), "\(error)")
        #expect(Ferry.execute(["diff", twice, twice, "--quiet"]) == 2)
    }

    @Test("ferry diff tells a store's databases apart: the same name in two databases is two records, not a duplicate")
    func diffDatabases() throws {
        let dir = setUp()
        let sample = samplesDirectory() + "/chat.ndjson"
        try #"{"recordName":"x","recordType":"T"}"#.appending("\n").write(toFile: dir + "/one.ndjson", atomically: false, encoding: .utf8)
        let both = dir + "/both.sqlite", pub = dir + "/public.sqlite", priv = dir + "/private.sqlite"
        #expect(Ferry.execute(["convert", dir + "/one.ndjson", both, "--database", "public", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", dir + "/one.ndjson", both, "--database", "private", "--quiet"]) == 0)
        let (same, sameText, _) = try runBinary(["diff", both, both])
        #expect(same == 0)
        #expect(sameText.contains("A has 2 records, B 2; 2 identical"))
        // An input without databases cannot say which of the two it means.
        for arguments in [[both, dir + "/one.ndjson"], [dir + "/one.ndjson", both]] {
            let (code, _, error) = try runBinary(["diff"] + arguments)
            #expect(code == 2)
            #expect(error.contains(#"record "x" in zone "_defaultZone" to say its database"#), "\(error)")
        }
        // A record of an input without databases matches the record in any database.
        #expect(Ferry.execute(["convert", sample, pub, "--database", "public", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", sample, priv, "--quiet"]) == 0)
        #expect(Ferry.execute(["diff", pub, sample, "--quiet"]) == 0)
        #expect(Ferry.execute(["diff", sample, priv, "--quiet"]) == 0)
        // Two stores: a record of the public database is not one of the private database.
        let (code, text, _) = try runBinary(["diff", pub, priv])
        #expect(code == 1)
        #expect(text.contains("only in A: public/Chats (_9f4c2a7e1b3d5f60)/C0FFEE00-0000-4000-8000-000000000001 [Chat]"))
        #expect(text.contains("only in B: private/Chats (_9f4c2a7e1b3d5f60)/C0FFEE00-0000-4000-8000-000000000001 [Chat]"))
        let (_, json, _) = try runBinary(["diff", pub, priv, "--json"])
        #expect(try JSONValue(parsing: json)["onlyInA"]?.arrayValue?.first?["database"] == .string("public"))
    }

    @Test("--log writes the changes as applied in Ferry's format, which replays to the same state; --order and --cascade apply")
    func logOrderCascade() throws {
        let dir = setUp()
        #expect(Ferry.execute(["replay", dir + "/ck.ndjson", "--out", dir + "/s.ndjson", "--log", dir + "/log.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", dir + "/log.ndjson", "--out", dir + "/again.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/again.ndjson") == canonicalJSON(history.finalSnapshot))
        let text = #"""
        {"event":"recordSaved","record":{"recordName":"child","zoneID":{"zoneName":"Z"},"parent":{"recordName":"parent"},"fields":{"of":{"value":{"recordName":"parent","action":"DELETE_SELF"},"type":"REFERENCE"}}}}
        {"event":"recordSaved","record":{"recordName":"parent","zoneID":{"zoneName":"Z"}}}
        {"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"T1"}
        {"event":"recordSaved","record":{"recordName":"a-other","zoneID":{"zoneName":"Z"}}}
        {"event":"recordDeleted","recordName":"parent","zoneID":{"zoneName":"Z"}}
        """#
        write(Array(text.utf8), to: dir + "/h2.ndjson")
        #expect(Ferry.execute(["replay", dir + "/h2.ndjson", "--until", "T1", "--order", "--out", dir + "/ordered.ndjson",
                               "--log", dir + "/ordered-log.ndjson", "--quiet"]) == 0)
        let ordered = try stateRecords(dir + "/ordered.ndjson").map { try JSONValue(parsing: $0)["recordName"]?.stringValue }
        #expect(ordered == ["parent", "child"])
        let log = String(decoding: FileManager.default.contents(atPath: dir + "/ordered-log.ndjson")!, as: UTF8.self)
        let parentAt = try #require(log.range(of: #""record":{"recordName":"parent""#))
        let childAt = try #require(log.range(of: #""record":{"recordName":"child""#))
        #expect(parentAt.lowerBound < childAt.lowerBound)
        #expect(Ferry.execute(["replay", dir + "/h2.ndjson", "--cascade", "--out", dir + "/cascaded.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/cascaded.ndjson").count == 1) // only a-other: child went with its parent
        #expect(Ferry.execute(["replay", dir + "/h2.ndjson", "--out", dir + "/plain.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/plain.ndjson").count == 2)
    }

    @Test("--log keeps a delete of a record the state does not hold: the next page of a series, logged alone, still deletes it")
    func logKeepsUnknownDeletes() throws {
        let dir = setUp()
        let first = #"{"zones":[{"zoneID":{"zoneName":"Z"},"syncToken":"t1","records":[{"recordName":"b","recordType":"T"}],"moreComing":false}]}"#
        let second = #"{"zones":[{"zoneID":{"zoneName":"Z"},"syncToken":"t2","records":[{"recordName":"a","recordType":"T"},{"recordName":"b","deleted":true}],"moreComing":false}]}"#
        write(Array((first + "\n").utf8), to: dir + "/p1.json")
        write(Array((second + "\n").utf8), to: dir + "/p2.json")
        #expect(Ferry.execute(["replay", dir + "/p1.json", "--out", dir + "/base.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", dir + "/p2.json", "--out", dir + "/alone.ndjson", "--log", dir + "/p2.log", "--quiet"]) == 0)
        let log = String(decoding: FileManager.default.contents(atPath: dir + "/p2.log")!, as: UTF8.self)
        #expect(log.contains(#""event":"recordDeleted","recordName":"b""#), "\(log)")
        // The page and its log, each after the base, give the same state.
        #expect(Ferry.execute(["replay", dir + "/p2.json", "--base", dir + "/base.ndjson", "--out", dir + "/via-page.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["replay", dir + "/p2.log", "--base", dir + "/base.ndjson", "--out", dir + "/via-log.ndjson", "--quiet"]) == 0)
        #expect(Ferry.execute(["diff", dir + "/via-page.ndjson", dir + "/via-log.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/via-log.ndjson").count == 1)
    }

    @Test("diff reads a folder as its files in order, as convert does, and names the file of a bad record")
    func diffReadsFolders() throws {
        let dir = setUp()
        try FileManager.default.createDirectory(atPath: dir + "/pages", withIntermediateDirectories: true)
        write(Array(#"{"records":[{"recordName":"a","recordType":"T"}]}"#.utf8), to: dir + "/pages/page-1.json")
        write(Array("{\n  \"records\" : [\n    {\"recordName\" : \"b\", \"recordType\" : \"T\"}\n  ]\n}\n".utf8), to: dir + "/pages/page-2.json")
        write(Array("{\"recordName\":\"a\",\"recordType\":\"T\"}\n{\"recordName\":\"b\",\"recordType\":\"T\"}\n".utf8), to: dir + "/all.ndjson")
        let (code, out, error) = try runBinary(["diff", dir + "/pages", dir + "/all.ndjson"])
        #expect(code == 0, "\(error)")
        #expect(out.contains("identical: A has 2 records, B 2"), "\(out)")
        let (other, _, _) = try runBinary(["diff", dir + "/all.ndjson", dir + "/pages", "--quiet"])
        #expect(other == 0)
        write(Array(#"{"records":[{"recordName":"c","recordType":5}]}"#.utf8), to: dir + "/pages/page-3.json")
        let (bad, _, message) = try runBinary(["diff", dir + "/pages", dir + "/all.ndjson"])
        #expect(bad == 2)
        #expect(message.contains("page-3.json:1:"), "\(message)")
    }

    @Test("--report lists every anomaly the summary counts, the final reference check's included, with --out and --log")
    func reportHoldsReferenceAnomalies() throws {
        let dir = setUp()
        let history = #"{"event":"recordSaved","record":{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"r":{"value":{"recordName":"missing","action":"NONE"},"type":"REFERENCE"}}}}"#
            + "\n" + #"{"event":"checkpoint","zoneID":{"zoneName":"Z"},"syncToken":"t1"}"# + "\n"
        write(Array(history.utf8), to: dir + "/h.ndjson")
        for extra in [[], ["--log", dir + "/log.ndjson"]] {
            #expect(Ferry.execute(["replay", dir + "/h.ndjson", "--out", dir + "/s.ndjson", "--report", dir + "/r.json", "--quiet"] + extra) == 0)
            let report = try JSONValue(parsing: String(contentsOfFile: dir + "/r.json", encoding: .utf8))
            #expect(report["counts"]?["danglingReference"] == .number(JSONNumber(Int64(1))), "\(extra)")
        }
    }

    #if os(Linux) // /dev/full
    @Test("A side output that cannot be written (rejects, log, report) fails the run, and the output is not replaced")
    func failedSideOutput() throws {
        let dir = setUp()
        let chat = samplesDirectory() + "/chat.ndjson"
        try "OLD\n".write(toFile: dir + "/out.ndjson", atomically: true, encoding: .utf8)
        try (String(contentsOfFile: chat, encoding: .utf8) + "{bad}\n").write(toFile: dir + "/bad.ndjson", atomically: true, encoding: .utf8)
        let runs: [[String]] = [
            ["convert", dir + "/bad.ndjson", dir + "/out.ndjson", "--on-error", "skip", "--rejects", "/dev/full"],
            ["replay", samplesDirectory() + "/chat-history.ndjson", "--out", dir + "/out.ndjson", "--log", "/dev/full"],
            ["replay", samplesDirectory() + "/chat-history.ndjson", "--out", dir + "/out.ndjson", "--report", "/dev/full"],
        ]
        for arguments in runs {
            let (code, _, error) = try runBinary(arguments + ["--quiet"])
            #expect(code == 1, "\(arguments): \(error)")
            #expect(error.contains("/dev/full"), "\(error)")
            #expect(try String(contentsOfFile: dir + "/out.ndjson", encoding: .utf8) == "OLD\n", "\(arguments)")
            #expect(!FileSystem.exists(dir + "/out.ndjson.tokens.json"), "\(arguments)")
        }
    }
    #endif

    @Test("--help shows examples")
    func help() throws {
        let (code, out, _) = try runBinary(["replay", "--help"])
        #expect(code == 0)
        #expect(out.contains("Examples:") && out.contains("--until") && out.contains("--tokens-only"))
        let (diffCode, diffOut, _) = try runBinary(["diff", "--help"])
        #expect(diffCode == 0 && diffOut.contains("Exit codes"))
    }

    /// A large history in `dir/big.ndjson`: one generated history many times over (replaying it
    /// again changes nothing).
    private static func bigHistory(seed: UInt64, in dir: String) -> (small: HistoryGenerator.History, big: [UInt8]) {
        let small = HistoryGenerator.generate(seed: seed, configuration: .init(batches: 120, changesPerBatch: 20, keepsSnapshots: false))
        var big: [UInt8] = []
        for _ in 0..<60 { big += small.ferryLines }
        write(big, to: dir + "/big.ndjson")
        return (small, big)
    }

    /// Waits (up to 20 s) until `process` has created its temporary `state.ndjson` in `dir`, or ended.
    private static func waitForTemporaryOutput(in dir: String, of process: Process) {
        var waited = 0
        while !hasTemporaryOutput(in: dir, of: process) && waited < 2000 && process.isRunning {
            usleep(10_000)
            waited += 1
        }
    }

    /// Whether the process has its output open: a named temporary beside it, or on Linux an
    /// unnamed file (O_TMPFILE) in `dir` among its descriptors (`/proc/PID/fd/N → DIR/#INODE (deleted)`).
    private static func hasTemporaryOutput(in dir: String, of process: Process) -> Bool {
        if files(in: dir).contains(where: { $0.hasPrefix(".state.ndjson.ferry-") }) { return true }
        #if os(Linux)
        let descriptors = "/proc/\(process.processIdentifier)/fd"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? [] {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name),
               target.hasPrefix(dir + "/#") { return true }
        }
        #endif
        return false
    }

    @Test("A killed replay leaves no file under the output name, and running it again succeeds", arguments: [SIGTERM, SIGKILL])
    func killed(killSignal: Int32) throws {
        let dir = scratchDirectory()
        let (small, big) = Self.bigHistory(seed: 502, in: dir)
        // The history comes through a pipe: half of it is written, so the replay is under way
        // and waits for the rest when it is killed, however fast it runs.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ferryBinary())
        process.arguments = ["replay", "-", "--out", dir + "/state.ndjson", "--quiet"]
        let input = Pipe()
        process.standardInput = input
        signal(SIGPIPE, SIG_IGN) // should the replay end early, writing to it fails instead of ending the tests
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(big[..<(big.count / 2)]))
        Self.waitForTemporaryOutput(in: dir, of: process)
        usleep(200_000)
        #expect(process.isRunning, "the replay ended before it could be killed: make the history larger")
        kill(process.processIdentifier, killSignal)
        process.waitUntilExit()
        try input.fileHandleForWriting.close()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == killSignal)
        #expect(!files(in: dir).contains("state.ndjson"))
        #expect(!files(in: dir).contains("state.ndjson.tokens.json"))
        if killSignal == SIGTERM { #expect(files(in: dir) == ["big.ndjson"]) } // the handler removed the temporary file
        #expect(Ferry.execute(["replay", dir + "/big.ndjson", "--out", dir + "/state.ndjson", "--quiet"]) == 0)
        #expect(try stateRecords(dir + "/state.ndjson") == canonicalJSON(small.finalSnapshot))
        #expect(files(in: dir).filter { !$0.hasPrefix(".") } == ["big.ndjson", "state.ndjson", "state.ndjson.tokens.json"])
    }

    #if os(Linux) // elsewhere SIGBUS is left to its default action
    @Test("A history file truncated while it is read in place ends the replay with exit 1 and a message, leaving nothing")
    func truncatedWhileMapped() throws {
        let dir = scratchDirectory()
        _ = Self.bigHistory(seed: 503, in: dir)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ferryBinary())
        process.arguments = ["replay", dir + "/big.ndjson", "--out", dir + "/state.ndjson"]
        let error = Pipe()
        process.standardError = error
        try process.run()
        Self.waitForTemporaryOutput(in: dir, of: process)
        usleep(100_000)
        #expect(process.isRunning, "the replay ended before the file could be truncated: make the history larger")
        #expect(truncate(dir + "/big.ndjson", 0) == 0)
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 1)
        #expect(message.contains("was truncated or rewritten while Ferry read it"))
        #expect(files(in: dir) == ["big.ndjson"]) // neither the state nor a temporary file
    }
    #endif
}

extension Replayer {
    /// The tokens of a history replayed until `token`.
    static func tokens(of history: [UInt8], until token: String) throws -> ReplayTokens {
        let replayer = Replayer(configuration: .init(until: token))
        try replayer.apply(MemorySource(history))
        try replayer.finish()
        return replayer.tokens
    }
}

@Suite("replay of a failed request saved as a page")
struct ReplayFailedRequestTests {
    @Test("A request-level server error saved in place of a page names the error and exits 1, writing nothing")
    func failedRequestIsNamed() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/pages", withIntermediateDirectories: true)
        try write(ResponseShapeTests.changesPage(0), to: dir + "/pages/000.json")
        try write("""
            {
              "uuid" : "7d2c0b1e",
              "serverErrorCode" : "AUTHENTICATION_REQUIRED",
              "reason" : "request needs authorization",
              "redirectURL" : "https://idmsa.apple.com/"
            }
            """, to: dir + "/pages/001.json")
        let (status, _, error) = try runBinary(["replay", dir + "/pages", "--out", dir + "/state.ndjson"])
        #expect(status == 1)
        #expect(error.contains("001.json:1:1") && error.contains("server error AUTHENTICATION_REQUIRED: request needs authorization"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.ndjson"))
    }
}

@Suite("replay of a record whose field does not decode")
struct ReplayUndecodableRecordTests {
    @Test("Written to an archive or a new store, a state record whose field does not decode is named by zone and recordName; nothing is left",
          arguments: ["state.tar.gz", "state.sqlite", "state.xml"])
    func namedOnWrite(output: String) throws {
        let dir = scratchDirectory()
        try write("""
            {"event":"recordSaved","record":{"recordName":"big-one","recordType":"T","zoneID":{"zoneName":"Notes"},"fields":{"a":{"value":99999999999999999999999,"type":"INT64"}}}}
            {"event":"checkpoint","zoneID":{"zoneName":"Notes"},"syncToken":"n1","moreComing":false}

            """, to: dir + "/h.ndjson")
        let flag = output.hasSuffix(".sqlite") ? "--into" : "--out"
        let (status, _, error) = try runBinary(["replay", dir + "/h.ndjson", flag, dir + "/" + output])
        #expect(status == 1)
        #expect(error.contains("the record \"big-one\" of zone \"Notes\"") && error.contains("64-bit"), "\(error)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0 != "h.ndjson" }
        #expect(left.isEmpty, "\(left)")
    }
}

@Suite("replay and archives")
struct ReplayArchiveTests {
    /// A folder `pages` of saved `changes/zone` pages in `directory`, and their names in order.
    private static func pages(in directory: String, count: Int = 12) throws -> [(name: String, text: String)] {
        try FileManager.default.createDirectory(atPath: directory + "/pages", withIntermediateDirectories: true)
        let pages = (0..<count).map { (name: String(format: "%03d.json", $0), text: ResponseShapeTests.changesPage($0)) }
        for page in pages { try write(page.text, to: directory + "/pages/" + page.name) }
        return pages
    }

    /// A tar of `members` (name, bytes) in the order given, gzip-compressed unless `gzip` is false.
    private static func tar(_ members: [(name: String, bytes: [UInt8])], to path: String, gzip: Bool = true) throws {
        let sink = MemorySink()
        let writer = TarWriter(sink: sink, modificationTime: 0)
        for member in members { try writer.addMember(name: member.name, bytes: member.bytes) }
        try writer.finish()
        let bytes = gzip ? BoundedMemoryTests.gzip(sink.bytes) : sink.bytes
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    private static func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test("A tar of a folder of saved pages replays to the folder's state and tokens, gzipped or not, members gzipped or not, from stdin too")
    func tarOfPagesReplaysAsTheFolder() throws {
        let dir = scratchDirectory()
        let pages = try Self.pages(in: dir)
        let (status, _, error) = try runBinary(["replay", dir + "/pages", "--out", dir + "/folder.ndjson", "--quiet"])
        #expect(status == 0, "\(error)")
        let plain = pages.map { (name: "pages/" + $0.name, bytes: Array($0.text.utf8)) }
        let gzipped = pages.map { (name: "pages/" + $0.name + ".gz", bytes: BoundedMemoryTests.gzip(Array($0.text.utf8))) }
        // A README and a hidden macOS file are skipped, as convert skips them.
        let extras: [(name: String, bytes: [UInt8])] = [("pages/._000.json", [0, 1, 2]), ("README.txt", Array("notes".utf8))]
        try Self.tar(extras + plain, to: dir + "/a.tar.gz")
        try Self.tar(plain, to: dir + "/b.tar", gzip: false)
        try Self.tar(gzipped, to: dir + "/c.tgz")
        for (index, archive) in ["a.tar.gz", "b.tar", "c.tgz"].enumerated() {
            let out = dir + "/state\(index).ndjson"
            let (status, _, error) = try runBinary(["replay", dir + "/" + archive, "--out", out, "--quiet"])
            #expect(status == 0, "\(archive): \(error)")
            #expect(Self.contents(out) == Self.contents(dir + "/folder.ndjson"), "\(archive)")
            #expect(Self.contents(out + ".tokens.json") == Self.contents(dir + "/folder.ndjson.tokens.json"), "\(archive)")
        }
        let (stdinStatus, _, stdinError) = try runShell("'\(try ferryBinary())' replay - --out '\(dir)/stdin.ndjson' --quiet < '\(dir)/a.tar.gz'")
        #expect(stdinStatus == 0, "\(stdinError)")
        #expect(Self.contents(dir + "/stdin.ndjson") == Self.contents(dir + "/folder.ndjson"))
    }

    @Test("Pages out of name order in a tar fail the replay, naming both members, and write nothing")
    func pagesOutOfOrderAreRefused() throws {
        let dir = scratchDirectory()
        var members = try Self.pages(in: dir).map { (name: "pages/" + $0.name, bytes: Array($0.text.utf8)) }
        members.swapAt(3, 7)
        try Self.tar(members, to: dir + "/shuffled.tar.gz")
        let (status, _, error) = try runBinary(["replay", dir + "/shuffled.tar.gz", "--out", dir + "/state.ndjson"])
        #expect(status == 1)
        // Page 7 comes where page 3 belongs: page 4 is the first out of order.
        #expect(error.contains("found `pages/004.json` after `pages/007.json`") && error.contains("--sort=name"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.ndjson"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.ndjson.tokens.json"))
    }

    @Test("An archive of a store replays its journal to the store's records; into a store, archives and files mix in order")
    func storeArchiveReplaysItsJournal() throws {
        let dir = scratchDirectory()
        _ = try Self.pages(in: dir)
        #expect(Ferry.execute(["replay", dir + "/pages", "--into", dir + "/s.sqlite", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", dir + "/s.sqlite", dir + "/s.tar.gz", "--quiet"]) == 0)
        let (status, _, error) = try runBinary(["replay", dir + "/s.tar.gz", "--out", dir + "/state.ndjson", "--quiet"])
        #expect(status == 0, "\(error)")
        #expect(try stateRecords(dir + "/state.ndjson") == stateRecords(dir + "/s.sqlite"))
        // Into a store: the first pages as files, the rest from a tar, then all again (nothing changes).
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/pages").sorted()
        let rest = try names[6...].map { (name: "rest/" + $0, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/pages/" + $0)))) }
        try Self.tar(rest, to: dir + "/rest.tar.gz")
        let first = names[..<6].map { dir + "/pages/" + $0 }
        for _ in 0..<2 {
            let (status, _, error) = try runBinary(["replay"] + first + [dir + "/rest.tar.gz", "--into", dir + "/t.sqlite", "--quiet"])
            #expect(status == 0, "\(error)")
        }
        #expect(try stateRecords(dir + "/t.sqlite") == stateRecords(dir + "/s.sqlite"))
    }

    @Test("An archive holding a state and no change log is refused as history, pointing at --base", arguments: ["--out", "--into"])
    func stateArchiveIsRefused(mode: String) throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", dir + "/a.tar.gz", "--quiet"]) == 0)
        let target = dir + (mode == "--out" ? "/state.ndjson" : "/s.sqlite")
        let (status, _, error) = try runBinary(["replay", dir + "/a.tar.gz", mode, target])
        #expect(status == 1)
        #expect(error.contains("holding a state") && error.contains("--base"), "\(error)")
        if mode == "--out" { #expect(!FileManager.default.fileExists(atPath: target)) }
    }
}
