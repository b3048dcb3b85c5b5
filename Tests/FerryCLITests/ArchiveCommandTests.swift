@testable import FerryCLI
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryKit
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

@Suite("Archives on the command line")
struct ArchiveCommandTests {
    let samples = samplesDirectory()

    var sampleFiles: [String] {
        ["chat.ndjson", "shopping.ndjson", "edge-cases.ndjson", "query-response.json"].map { samples + "/" + $0 }
    }

    /// Records sorted by zone and name, so orders that differ by zone grouping compare equal.
    func sorted(_ records: [Record]) -> [Record] {
        records.sorted { ($0.zoneName, $0.recordName) < ($1.zoneName, $1.recordName) }
    }

    func archiveRecords(_ path: String) throws -> [ArchiveRecord] {
        let reader = try ArchiveReader(path: path)
        var result: [ArchiveRecord] = []
        while let item = try reader.nextRecord() { result.append(item) }
        return result
    }

    @Test("A failed extraction into a folder it created leaves no folder")
    func failedExtractionRemovesItsFolder() throws {
        let directory = scratchDirectory()
        let archive = directory + "/a.tar.gz"
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", archive, "--quiet"]) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        try bytes.prefix(bytes.count - 40).write(to: URL(fileURLWithPath: directory + "/cut.tar.gz"))
        let (code, _, error) = try runBinary(["extract", directory + "/cut.tar.gz", directory + "/new"])
        #expect(code == 1, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/new"))
        // A folder that was there stays.
        try FileManager.default.createDirectory(atPath: directory + "/old", withIntermediateDirectories: false)
        let (again, _, _) = try runBinary(["extract", directory + "/cut.tar.gz", directory + "/old"])
        #expect(again == 1)
        #expect(FileSystem.isDirectory(directory + "/old") && FileSystem.entries(in: directory + "/old").isEmpty)
    }

    @Test("An output named .tar.gz is an archive that convert reads back into the same records")
    func roundTrip() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert"] + sampleFiles + [dir + "/store.tar.gz", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", dir + "/store.tar.gz", dir + "/back.ndjson", "--quiet"]) == 0)
        var expected: [Record] = []
        for file in sampleFiles {
            let reader = try InputRecognizer().openReader(file)
            while let record = try reader.next() { expected.append(record) }
        }
        #expect(sorted(try records(at: dir + "/back.ndjson")) == sorted(expected))
        #expect(try runBinary(["--version"]).0 == 0)
        let (status, _, _) = try runShell("gzip -t '\(dir)/store.tar.gz' && tar tzf '\(dir)/store.tar.gz' | grep -qx manifest.json")
        #expect(status == 0)
    }

    @Test("An archive is recognized by its content whatever its name, also on stdin")
    func detection() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/store.tgz", "--quiet"]) == 0)
        try FileManager.default.copyItem(atPath: dir + "/store.tgz", toPath: dir + "/store.bin")
        #expect(Ferry.execute(["convert", dir + "/store.bin", dir + "/a.ndjson", "--quiet"]) == 0)
        #expect(try records(at: dir + "/a.ndjson").count == 5)
        let (status, out, _) = try runShell("'\(ferryBinary())' convert - - --quiet < '\(dir)/store.bin'")
        #expect(status == 0)
        #expect(out.split(separator: "\n").count == 5)
    }

    @Test("Archive to archive keeps databases, zones without records, change tokens, assets and change logs")
    func archiveToArchive() throws {
        let dir = scratchDirectory()
        let source = dir + "/source.tar.gz"
        let writer = try ArchiveWriter(path: source)
        var generator = RecordGenerator(seed: 11)
        var originals: [(String, Record)] = []
        for i in 0..<40 {
            let record = generator.record()
            let database = i % 3 == 0 ? "shared" : "private"
            try writer.add(record, database: database)
            originals.append((database, record))
        }
        let empty = ZoneID(zoneName: "Empty", ownerRecordName: "_owner")
        try writer.addZone(empty, database: "public")
        try writer.setChangeToken("token-empty", for: empty, database: "public")
        let firstZone = originals[0].1.zoneID ?? .default
        try writer.setChangeToken("token-first", for: firstZone, database: originals[0].0)
        try writer.addAsset(fileChecksum: "c2hhMQ==/+", bytes: Array("asset bytes".utf8))
        try writer.addChangeLog(named: "history/2024.ndjson", from: MemorySource("{\"event\":\"checkpoint\"}\n"))
        let original = try writer.finish()

        #expect(Ferry.execute(["convert", source, dir + "/copy.tar.gz", "--quiet"]) == 0)
        let copy = try ArchiveReader(path: dir + "/copy.tar.gz").manifest
        #expect(Set(copy.zones.map { "\($0.database)/\($0.zoneID.zoneName)/\($0.changeToken ?? "-")/\($0.recordCount)" })
                == Set(original.zones.map { "\($0.database)/\($0.zoneID.zoneName)/\($0.changeToken ?? "-")/\($0.recordCount)" }))
        #expect(Set(copy.members.map { "\($0.path) \($0.sha256)" }) == Set(original.members.map { "\($0.path) \($0.sha256)" }))
        let items = try archiveRecords(dir + "/copy.tar.gz")
        #expect(Set(items.map { "\($0.database ?? "-") \($0.record.recordName)" }) == Set(originals.map { "\($0.0) \($0.1.recordName)" }))
        #expect(sorted(items.map(\.record)) == sorted(originals.map(\.1)))
    }

    @Test("verify accepts an intact archive and names the member of a corrupt one with exit 1")
    func verify() throws {
        let dir = scratchDirectory()
        let path = dir + "/store.tar.gz"
        #expect(Ferry.execute(["convert"] + sampleFiles + [path, "--quiet"]) == 0)
        let (ok, out, _) = try runBinary(["verify", path])
        #expect(ok == 0)
        #expect(out.contains("ok"))

        // Flip one byte inside the first records member, keeping the gzip layer valid.
        let script = """
        import gzip, io, sys, tarfile
        raw = bytearray(gzip.decompress(open(sys.argv[1], 'rb').read()))
        with tarfile.open(fileobj=io.BytesIO(bytes(raw))) as t:
            member = [m for m in t.getmembers() if m.name.startswith('records/')][0]
        raw[member.offset_data + 20] ^= 0x01
        open(sys.argv[2], 'wb').write(gzip.compress(bytes(raw)))
        print(member.name)
        """
        let (status, member, _) = try runShell("python3 -c \"$SCRIPT\" '\(path)' '\(dir)/bad.tar.gz'", environment: ["SCRIPT": script])
        #expect(status == 0)
        let (bad, json, err) = try runBinary(["verify", dir + "/bad.tar.gz", "--json"])
        #expect(bad == 1)
        #expect(err.contains(member.trimmingCharacters(in: .whitespacesAndNewlines)))
        let result = try JSONValue(parsing: json.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(result["ok"] == .bool(false))
        #expect(result["member"]?.stringValue == member.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("verify says plainly what is wrong with an empty file and with a store on standard input")
    func verifyMessages() throws {
        let dir = scratchDirectory()
        try Data().write(to: URL(fileURLWithPath: dir + "/empty.tar"))
        let (code, _, error) = try runBinary(["verify", dir + "/empty.tar"])
        #expect(code == 1)
        #expect(error == "ferry: \(dir)/empty.tar: expected an archive or a store, found an empty file\n", "\(error)")
        let (jsonCode, out, _) = try runBinary(["verify", dir + "/empty.tar", "--json"])
        #expect(jsonCode == 1)
        #expect(!out.contains("CommandFailure"), "\(out)")
        #expect(Ferry.execute(["convert", samplesDirectory() + "/chat.ndjson", dir + "/s.sqlite", "--quiet"]) == 0)
        let (stdinCode, _, stdinError) = try runBinary(["verify", "-"], stdinFile: dir + "/s.sqlite")
        #expect(stdinCode == 1)
        #expect(stdinError.contains("a store is read from its file, not from a stream"), "\(stdinError)")
    }

    @Test("inspect shows an archive's manifest: zones, counts, tokens and schema")
    func inspect() throws {
        let dir = scratchDirectory()
        let path = dir + "/store.tar.gz"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", samples + "/shopping.ndjson", path, "--quiet"]) == 0)
        let (status, text, _) = try runBinary(["inspect", path])
        #expect(status == 0)
        #expect(text.contains("Ferry archive"))
        #expect(text.contains("13 records in 2 zones"))
        #expect(text.contains("Chats"))
        let (jsonStatus, json, _) = try runBinary(["inspect", path, "--json"])
        #expect(jsonStatus == 0)
        let value = try JSONValue(parsing: json.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(value["archives"]?.arrayValue?.first?["manifest"]?["recordCount"] == .number(JSONNumber(Int64(13))))
    }

    @Test("An archive keeps record types and field names that differ only in their bytes (é, e + U+0301) apart")
    func canonicallyEquivalentNames() throws {
        let dir = scratchDirectory()
        let composed = "\u{E9}", decomposed = "e\u{301}"
        let lines = [
            #"{"recordName":"r1","recordType":"\#(composed)","fields":{"\#(composed)":{"value":1,"type":"INT64"}}}"#,
            #"{"recordName":"r2","recordType":"\#(decomposed)","fields":{"\#(decomposed)":{"value":"x","type":"STRING"}}}"#,
        ]
        try write(lines.joined(separator: "\n") + "\n", to: dir + "/in.ndjson")
        #expect(Ferry.execute(["convert", dir + "/in.ndjson", dir + "/a.tar.gz", "--quiet"]) == 0)
        let (verifyStatus, _, verifyError) = try runBinary(["verify", dir + "/a.tar.gz"])
        #expect(verifyStatus == 0, "\(verifyError)")
        // String comparison is canonical equivalence: compare bytes.
        func holds(_ text: String, _ part: String) -> Bool {
            let bytes = Array(text.utf8), needle = Array(part.utf8)
            return bytes.count >= needle.count
                && (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        let (status, text, _) = try runBinary(["inspect", dir + "/a.tar.gz"])
        #expect(status == 0)
        #expect(holds(text, decomposed + " 1, " + composed + " 1"))   // the zone's types, in byte order
        #expect(holds(text, composed + "     " + composed + "      INT64 1"))
        #expect(holds(text, decomposed + "     " + decomposed + "      STRING 1"))
        let (_, json, _) = try runBinary(["inspect", dir + "/a.tar.gz", "--json"])
        let manifest = try JSONValue(parsing: json.trimmingCharacters(in: .whitespacesAndNewlines))["archives"]?.arrayValue?.first?["manifest"]
        #expect(manifest?["schema"]?.objectValue?.members.map { Array($0.key.utf8) } == [Array(decomposed.utf8), Array(composed.utf8)])
    }

    @Test("extract writes every member under the target and verifies it")
    func extract() throws {
        let dir = scratchDirectory()
        let path = dir + "/store.tar.gz"
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", path, "--quiet"]) == 0)
        #expect(Ferry.execute(["extract", path, dir + "/out", "--quiet"]) == 0)
        #expect(FileSystem.exists(dir + "/out/manifest.json"))
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir + "/out").filter { $0.hasSuffix(".ndjson") }
        #expect(files.count == 1)
        #expect(try records(at: dir + "/out/" + files[0]) == records(at: samples + "/chat.ndjson"))
    }

    @Test("--assets puts a folder's files into the archive by checksum, and extract gives them back")
    func assets() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/assets", withIntermediateDirectories: true)
        let files = ["Zm9vYmFyYmF6": "first asset", "cXV1eHF1dXg=": "second", "a%2Fb+c": "slash in its checksum"]
        for (name, text) in files { try write(text, to: dir + "/assets/" + name) }
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/store.tar.gz", "--assets", dir + "/assets", "--quiet"]) == 0)
        let manifest = try ArchiveReader(path: dir + "/store.tar.gz").manifest
        #expect(Set(manifest.members.compactMap(\.fileChecksum)) == ["Zm9vYmFyYmF6", "cXV1eHF1dXg=", "a/b+c"])
        #expect(Ferry.execute(["extract", dir + "/store.tar.gz", dir + "/out", "--quiet"]) == 0)
        for (name, text) in files {
            #expect(try String(contentsOfFile: dir + "/out/assets/" + name, encoding: .utf8) == text)
        }
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", dir + "/x.ndjson", "--assets", dir + "/assets"]) == 2)
    }

    @Test("convert reads a tar.gz made by tar czf from a folder of exports, with no manifest, like the files themselves")
    func convertWithoutManifest() throws {
        let dir = scratchDirectory()
        let (made, _, madeError) = try runShell("""
            set -e; cd '\(dir)'; mkdir -p exports/chats exports/api
            cp '\(samples)/chat.ndjson' '\(samples)/shopping.ndjson' exports/chats/
            cp '\(samples)/edge-cases.ndjson' exports/ && gzip exports/edge-cases.ndjson
            cp '\(samples)/query-response.json' exports/api/ && echo notes > exports/README.txt
            COPYFILE_DISABLE=1 tar czf exports.tar.gz exports
            """)
        #expect(made == 0, "\(madeError)")
        let archive = dir + "/exports.tar.gz"
        let (_, listing, _) = try runShell("tar tzf '\(archive)'")
        var expected: [Record] = []
        for member in listing.split(separator: "\n") where !member.hasSuffix("/") && !member.hasSuffix(".txt") {
            let reader = try InputRecognizer().openReader(dir + "/" + member)
            while let record = try reader.next() { expected.append(record) }
        }
        #expect(expected.count == 19)

        #expect(Ferry.execute(["convert", archive, dir + "/out.ndjson", "--quiet"]) == 0)
        #expect(try records(at: dir + "/out.ndjson") == expected)
        let (status, out, _) = try runShell("'\(try ferryBinary())' convert - - --quiet < '\(archive)'")
        #expect(status == 0)
        #expect(out.split(separator: "\n").count == expected.count)

        // Into an archive: the records go to --database, as from any file without one.
        #expect(Ferry.execute(["convert", archive, dir + "/store.tar.gz", "--database", "public", "--quiet"]) == 0)
        let manifest = try ArchiveReader(path: dir + "/store.tar.gz").manifest
        #expect(manifest.recordCount == expected.count && Set(manifest.zones.map(\.database)) == ["public"])

        // verify checks what it can and says what it cannot: exit 1.
        let (verified, _, verifyError) = try runBinary(["verify", archive])
        #expect(verified == 1)
        #expect(verifyError.contains("no manifest.json among 5 members"), "\(verifyError)")
        #expect(verifyError.contains("4 record files hold 19 valid records"))
        #expect(verifyError.contains("Not checked: member sizes, SHA-256 checksums and record counts"))

        #expect(Ferry.execute(["extract", archive, dir + "/out", "--quiet"]) == 0)
        #expect(FileManager.default.fileExists(atPath: dir + "/out/exports/README.txt"))
        #expect(try records(at: dir + "/out/exports/chats/chat.ndjson") == records(at: samples + "/chat.ndjson"))
    }

    @Test("A truncated archive fails convert with exit 1 and leaves no output")
    func truncated() throws {
        let dir = scratchDirectory()
        let path = dir + "/store.tar.gz"
        #expect(Ferry.execute(["convert"] + sampleFiles + [path, "--quiet"]) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: dir + "/half.tar.gz"))
        let (status, _, err) = try runBinary(["convert", dir + "/half.tar.gz", dir + "/out.ndjson"])
        #expect(status == 1)
        #expect(err.contains("half.tar.gz"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains("ferry-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}

/// Runs `command` with /bin/sh, returning exit code, stdout and stderr.
func runShell(_ command: String, environment: [String: String] = [:]) throws -> (Int32, String, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}
