@testable import FerryCLI
@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryRecords
import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

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

    @Test("An output named .tar.gz is an archive that convert reads back into the same records")
    func roundTrip() throws {
        let dir = scratchDirectory()
        #expect(Ferry.execute(["convert"] + sampleFiles + [dir + "/store.tar.gz", "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", dir + "/store.tar.gz", dir + "/back.ndjson", "--quiet"]) == 0)
        var expected: [Record] = []
        for file in sampleFiles {
            let reader = try openRecordReader(file, options: RecordInputOptions())
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
            let reader = try openRecordReader(dir + "/" + member, options: RecordInputOptions())
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

/// Hostile input far larger than memory, fed to a `ferry` process on standard input as it is
/// generated (never written out), while the child's own peak RSS is sampled (`SpawnedProcess`,
/// Linux `VmHWM`; elsewhere only the limits are checked). A `ferry` process on a small archive
/// peaks at about 25 MiB, so the ceiling of 96 MiB allows it about 64 MiB more.
@Suite("Archive commands in bounded memory on hostile input")
struct ArchiveMemoryTests {
    static let ceilingKiB = 96 << 10
    static let tenGiB = 10 << 30

    /// One gzip member of 64 MiB of zeros (about 64 KiB); repeated, any multiple of 64 MiB.
    static let zerosMember: [UInt8] = {
        let memory = MemorySink()
        do {
            let sink = try GzipSink(wrapping: memory, configuration: .init(level: 9, threads: 1))
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            for _ in 0..<64 { try sink.write(zeros) }
            try sink.commit()
        } catch {
            return []
        }
        return memory.bytes
    }()

    /// The tar headers of a member `name` declaring `size` bytes (a pax `size` record, as every
    /// member over 8 GiB has).
    static func header(name: String, size: Int) throws -> [UInt8] {
        let sink = MemorySink()
        try TarWriter(sink: sink, modificationTime: 0).beginMember(name: name, size: size)
        return sink.bytes
    }

    /// Runs `ferry ARGUMENTS` and sends it `prefix`, then `chunk` until `total` bytes were sent or
    /// it stopped reading; returns its exit status, standard error, the bytes it took and its peak.
    static func feed(_ arguments: [String], prefix: [UInt8] = [], chunk: [UInt8], total: Int,
                     baselineAfter: Int? = nil) throws -> (status: Int32, error: String, sent: Int, peakKiB: Int?, baselineKiB: Int?) {
        let dir = scratchDirectory()
        let child = try SpawnedProcess(try ferryBinary(), arguments, stderrPath: dir + "/stderr.txt")
        var open = child.send(prefix)
        var sent = 0
        var baseline: Int?
        while open && sent < total {
            open = child.send(Array(chunk.prefix(total - sent)))
            if open { sent += min(chunk.count, total - sent) }
            if let after = baselineAfter, baseline == nil, sent >= after { baseline = child.peakKiB }
        }
        let peak = child.peakKiB
        let status = child.wait()
        let error = (try? String(contentsOfFile: dir + "/stderr.txt", encoding: .utf8)) ?? ""
        print("ferry \(arguments.joined(separator: " ")): took \(sent >> 10) KiB, peak RSS "
              + (peak.map { "\($0 >> 10) MiB" } ?? "unknown") + (baseline.map { " (\($0 >> 10) MiB once streaming)" } ?? "")
              + ", exit \(status)")
        return (status, error, sent, peak, baseline)
    }

    @Test("ferry verify --max-bytes stops 10 GiB of gzip-compressed zeros on stdin at the limit, in bounded memory")
    func verifyStopsAtMaxBytes() throws {
        let total = Self.zerosMember.count * (Self.tenGiB >> 26)
        let run = try Self.feed(["verify", "--max-bytes", "512M", "--max-ratio", "0", "-"], chunk: Self.zerosMember, total: total)
        #expect(run.status == 1)
        #expect(run.error.contains("decompression failed") && run.error.contains("maximumOutputBytes"), "\(run.error)")
        #expect(run.sent < total / 8, "ferry took \(run.sent) of \(total) compressed bytes")
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < Self.ceilingKiB, "peak RSS \(peak >> 10) MiB")
        #endif
    }

    @Test("ferry verify stops 10 GiB of gzip-compressed zeros at the default ratio limit soon after the first MiB")
    func verifyStopsAtMaxRatio() throws {
        let total = Self.zerosMember.count * (Self.tenGiB >> 26)
        let run = try Self.feed(["verify", "-"], chunk: Self.zerosMember, total: total)
        #expect(run.status == 1)
        #expect(run.error.contains("maximumRatio"), "\(run.error)")
        #expect(run.sent < 4 << 20)
    }

    @Test("ferry convert refuses a tar member declaring 10 GiB of one endless line at --max-line-bytes, in bounded memory")
    func convertStopsAnEndlessLine() throws {
        let dir = scratchDirectory()
        let header = try Self.header(name: "exports/huge.ndjson", size: Self.tenGiB)
        let line = Array(String(repeating: "{\"recordName\":", count: 1 << 16).utf8)
        let run = try Self.feed(["convert", "-", dir + "/out.ndjson", "--max-line-bytes", String(8 << 20)], prefix: header,
                                chunk: line, total: Self.tenGiB)
        #expect(run.status == 1)
        #expect(run.error.contains("member exports/huge.ndjson") && run.error.contains("invalid record"), "\(run.error)")
        #expect(run.sent < 64 << 20, "ferry took \(run.sent) bytes")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out.ndjson"))
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        #expect(peak < Self.ceilingKiB, "peak RSS \(peak >> 10) MiB")
        #endif
    }

    /// Every byte of a member goes through SHA-256, about 8 MB/s in a debug build: 32 MiB take
    /// about 4 s of CPU.
    @Test("ferry extract streams a member declaring 10 GiB through in pieces: memory does not grow with it")
    func extractStreamsAHugeMember() throws {
        let dir = scratchDirectory()
        let header = try Self.header(name: "assets/huge", size: Self.tenGiB)
        let streamed = 32 << 20
        let run = try Self.feed(["extract", "-", dir + "/out"], prefix: header, chunk: [UInt8](repeating: 7, count: 1 << 20),
                                total: streamed, baselineAfter: 2 << 20)
        #expect(run.status == 1)
        #expect(run.error.contains("member assets/huge") && run.error.contains("truncated"), "\(run.error)")
        #expect(run.sent == streamed)
        let leftovers = (try? FileManager.default.subpathsOfDirectory(atPath: dir + "/out")) ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
        #if os(Linux)
        let peak = try #require(run.peakKiB, "no VmHWM read from /proc")
        let baseline = try #require(run.baselineKiB)
        #expect(peak - baseline < streamed >> 11, "peak RSS grew \((peak - baseline) >> 10) MiB while 30 MiB streamed")
        #endif
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
