@testable import FerryArchive
import FerryCompression
import FerryIO
import FerryJSON
import FerryPipeline
import FerryRecords
import FerryTestSupport
import Testing

@Suite("Archives without a manifest")
struct ArchiveWithoutManifestTests {
    /// Record files of every form in a random folder layout, with the records each holds when
    /// read directly.
    static func generatedFiles(seed: UInt64) throws -> [(name: String, bytes: [UInt8], records: [Record])] {
        var generator = RecordGenerator(seed: seed)
        let folders = ["", "exports/", "exports/2024/", "a/b/c/d/", "Zones with spaces/", "ünïcödé/"]
        var files: [(String, [UInt8], [Record])] = []
        for index in 0..<(1 + generator.random.below(7)) {
            let records = (0..<generator.random.below(40)).map { _ in generator.record() }
            let form = generator.random.pick(RecordFiles.Form.allCases)
            let (suffix, bytes) = try RecordFiles.file(records, form: form)
            let name = generator.random.pick(folders) + "file-\(index)" + suffix
            files.append((name, bytes, try RecordFiles.read(bytes, name: name)))
        }
        return files
    }

    @Test("A tar of record files reads as the records of reading each file directly, in archive order",
          arguments: Array(UInt64(1)...12))
    func sameAsReadingTheFiles(seed: UInt64) throws {
        let files = try Self.generatedFiles(seed: seed)
        let expected = files.flatMap(\.records)
        let entries = [TarBuilder.Entry.directory("exports/")] + files.map { TarBuilder.Entry.file($0.name, $0.bytes) }
        let tar = try TarBuilder.tar(entries)
        for bytes in [tar, try TarBuilder.gzip(tar)] {
            let reader = try ArchiveReader(source: MemorySource(bytes, name: "exports.tar.gz"))
            let items = try readArchive(reader)
            #expect(items.map(\.record) == expected)
            #expect(items.map(\.member) == files.flatMap { file in file.records.map { _ in file.name } })
            #expect(items.allSatisfy { $0.database == nil && $0.zoneID == nil })
            #expect(reader.manifestPlacement == .notRead)
            #expect(reader.memberCount == files.count && reader.recordMemberCount == files.count)
            #expect(reader.skippedMembers.isEmpty)
        }
    }

    @Test("The records reader of a manifest-less archive is a RecordReader with no zone at hand")
    func recordReader() throws {
        let records = [Record(recordName: "a", recordType: "T"), Record(recordName: "b", recordType: "T")]
        let bytes = try TarBuilder.tarGzip([.file("x.ndjson", try RecordFiles.file(records, form: .ndjson).bytes)])
        let reader = ArchiveRecordReader(try ArchiveReader(source: MemorySource(bytes)))
        var read: [Record] = []
        while let record = try reader.next() {
            read.append(record)
            #expect(reader.current == nil)
        }
        #expect(read == records)
        #expect(reader.recordCount == 2 && reader.rejectedCount == 0)
    }

    @Test("Members that are not record files are skipped, each with its reason")
    func nonRecordMembers() throws {
        let records = [Record(recordName: "kept", recordType: "T")]
        let good = try RecordFiles.file(records, form: .ndjson).bytes
        let appleDouble: [UInt8] = [0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00] + Array("Mac OS X        ".utf8)
        let bytes = try TarBuilder.tarGzip([
            .directory("exports/"),
            .file("exports/README.txt", Array("what these are\n".utf8)),
            .file("exports/.DS_Store", [0, 0, 0, 1, 0x42, 0x75, 0x64, 0x31]),
            .file("exports/._chats.ndjson", appleDouble),
            .file("exports/chats.ndjson", good),
            .file("exports/manifest.json", Array("{\"format\":\"ferry-archive\"}".utf8)),
            .file(".git/config", Array("[core]\n".utf8)),
            .file("exports/photo.jpeg", [0xFF, 0xD8, 0xFF]),
            .file("exports/.json", Array("{}".utf8)),
        ])
        let reader = try ArchiveReader(source: MemorySource(bytes))
        #expect(try readRecords(reader) == records)
        #expect(reader.skippedMembers.map(\.path) == ["exports/README.txt", "exports/.DS_Store", "exports/._chats.ndjson",
                                                       "exports/manifest.json", ".git/config", "exports/photo.jpeg",
                                                       "exports/.json"])
        #expect(reader.skippedMembers[0].reason.contains("not a record file"))
        #expect(reader.skippedMembers[1].reason.contains("hidden"))
        #expect(reader.skippedMembers[3].reason.contains("root"))
        #expect(reader.memberCount == 8 && reader.recordMemberCount == 1)
    }

    @Test("The member rule decides by name", arguments: [
        ("a.ndjson", "records"), ("a.NDJSON", "records"), ("a.jsonl", "records"), ("a.json", "records"),
        ("x/a.ndjson.gz", "records"), ("a.json.GZ", "records"), ("a.gz", "skipped"), ("a.txt", "skipped"),
        ("ndjson", "skipped"), (".ndjson", "skipped"), ("x/.hidden/a.ndjson", "skipped"), ("._a.ndjson", "skipped"),
        ("assets/abc", "asset"), ("assets/x/y", "skipped"), ("changes/log.ndjson", "changes"),
        ("records/private/Chats.ndjson", "records private Chats"), ("records/shared/Z@_o.ndjson", "records shared Z _o"),
        ("records/public/Trips%2F2024.ndjson", "records public Trips/2024"), ("records/x.ndjson", "records"),
        ("sub/manifest.json", "skipped"),
    ])
    func memberRule(path: String, role: String) {
        let found: String
        switch MemberRole.of(path.split(separator: "/").map(String.init)) {
        case .records(let database?, let zoneID?):
            found = (["records", database, zoneID.zoneName] + (zoneID.ownerRecordName.map { [$0] } ?? [])).joined(separator: " ")
        case .records: found = "records"
        case .asset: found = "asset"
        case .changes: found = "changes"
        case .skipped: found = "skipped"
        }
        #expect(found == role)
    }

    @Test("Records under records/<database>/<zone>.ndjson carry that database and zone; loose files carry none")
    func attribution() throws {
        let zone = ZoneID(zoneName: "Chats", ownerRecordName: "_owner")
        let inZone = [Record(recordName: "m1", recordType: "Message", zoneID: zone)]
        let loose = [Record(recordName: "n1", recordType: "Note")]
        let bytes = try TarBuilder.tarGzip([
            .file("records/shared/Chats@_owner.ndjson", try RecordFiles.file(inZone, form: .ndjson).bytes),
            .file("notes.jsonl", try RecordFiles.file(loose, form: .jsonl).bytes),
        ])
        let items = try readArchive(try ArchiveReader(source: MemorySource(bytes)))
        #expect(items.map(\.record) == inZone + loose)
        #expect(items[0].database == "shared" && items[0].zoneID == zone && items[0].member == "records/shared/Chats@_owner.ndjson")
        #expect(items[1].database == nil && items[1].zoneID == nil && items[1].member == "notes.jsonl")
    }

    @Test("Links, devices and FIFOs are refused naming the member, as with a manifest", arguments: [
        TarHeader.TypeFlag.symbolicLink, TarHeader.TypeFlag.hardLink, TarHeader.TypeFlag.characterDevice,
        TarHeader.TypeFlag.blockDevice, TarHeader.TypeFlag.fifo,
    ])
    func linksAndDevices(typeFlag: UInt8) throws {
        let bytes = try TarBuilder.tarGzip([
            .file("a.ndjson", Array("{\"recordName\":\"a\"}\n".utf8)),
            .special("exports/link.ndjson", typeFlag: typeFlag),
        ])
        let reader = try ArchiveReader(source: MemorySource(bytes, name: "links.tgz"))
        let error = try #require(archiveError { _ = try readArchive(reader) })
        #expect(error.code == .unsupportedMemberType)
        #expect(error.member == "exports/link.ndjson")
        #expect(error.offset == 1024)
    }

    @Test("An empty archive holds no records, and is recognized as an archive", arguments: [false, true])
    func emptyArchive(compressed: Bool) throws {
        let tar = try TarBuilder.tar([])
        let bytes = compressed ? try TarBuilder.gzip(tar) : tar
        let detected = try ArchiveDetection.openInput(MemorySource(bytes))
        #expect(detected.isArchive)
        let reader = try ArchiveReader(source: detected.source)
        #expect(try reader.nextRecord() == nil)
        #expect(reader.memberCount == 0 && reader.manifestPlacement == .notRead)
        let error = try #require(archiveError { _ = try ArchiveVerifier().verify(MemorySource(bytes)) })
        #expect(error.code == .missingManifest)
        let report = try ArchiveVerifier(requiresManifest: false).verify(MemorySource(bytes))
        #expect(report.memberCount == 0 && report.recordCount == 0)
    }

    @Test("A bad record fails naming the member and its line")
    func badRecordFails() throws {
        let bytes = try TarBuilder.tarGzip([
            .file("exports/a.ndjson", Array("{\"recordName\":\"a\"}\n".utf8)),
            .file("exports/b.ndjson", Array("{\"recordName\":\"b1\"}\n{\"recordName\":\"b2\"}\n{\"recordName\": 3}\n".utf8)),
        ])
        let reader = try ArchiveReader(source: MemorySource(bytes, name: "bad.tgz"))
        var names: [String] = []
        let error = try #require(archiveError { while let item = try reader.nextRecord() { names.append(item.record.recordName) } })
        #expect(names == ["a", "b1", "b2"])
        #expect(error.code == .invalidRecord)
        #expect(error.member == "exports/b.ndjson")
        #expect(error.line == 3)
        #expect(error.offset == 1536) // the member's data: after a.ndjson's header and block, and b.ndjson's header
        #expect(error.description.hasPrefix("bad.tgz: member exports/b.ndjson, line 3, tar byte 1536: invalid record: "
                                            + "column 16, record 3: expected a string"), "\(error)")
        #expect(error.description.components(separatedBy: "exports/b.ndjson").count == 2) // said once
        #expect((error.underlying as? RecordFormatError)?.line == 3)
    }

    @Test("Under the skip policy a bad record is reported with its member and line, and reading goes on")
    func badRecordSkipped() throws {
        let bytes = try TarBuilder.tarGzip([
            .file("exports/b.ndjson", Array("{\"recordName\":\"b1\"}\nnot json\n{\"recordName\":\"b3\"}\n".utf8)),
            .file("exports/c.json", Array("{\"records\": [\n  {\"recordName\": \"c1\"},\n  {\"recordName\": 5}\n]}\n".utf8)),
        ])
        let rejects = MemorySink()
        let reader = ArchiveRecordReader(try ArchiveReader(source: MemorySource(bytes, name: "skip.tgz"),
                                                           policy: .skip(rejects: rejects)))
        var reported: [any Error] = []
        reader.onReject = { reported.append($0) }
        var names: [String] = []
        while let record = try reader.next() { names.append(record.recordName) }
        #expect(names == ["b1", "b3", "c1"])
        #expect(reader.rejectedCount == 2)
        #expect(reported.count == 2)
        let first = try #require(reported.first as? RecordFormatError)
        #expect(first.line == 2)
        #expect(first.description.hasPrefix("skip.tgz: exports/b.ndjson:2:"))
        #expect(rejects.text.hasPrefix("not json\n"))
    }

    @Test("A gzip member that is not gzip inside, or is truncated, fails naming the member")
    func badCompressedMember() throws {
        let good = try TarBuilder.gzip(Array("{\"recordName\":\"a\"}\n".utf8))
        let bytes = try TarBuilder.tarGzip([.file("x/a.ndjson.gz", Array(good.prefix(good.count - 6)))])
        let error = try #require(archiveError { _ = try readArchive(try ArchiveReader(source: MemorySource(bytes))) })
        #expect(error.code == .decompressionFailed)
        #expect(error.member == "x/a.ndjson.gz")
        #expect((error.underlying as? CompressionError)?.code == .truncated)
    }

    @Test("An archive made by the system tar czf from a folder of exports is read in tar's order")
    func systemTar() throws {
        let scratch = try ScratchDirectory()
        let root = scratch.file("exports")
        _ = try runTool("mkdir", ["-p", root + "/2024/chats", root + "/api"])
        let samples = samplesDirectory()
        _ = try runTool("cp", [samples + "/chat.ndjson", samples + "/shopping.ndjson", root + "/2024/chats/"])
        _ = try runTool("cp", [samples + "/query-response.json", root + "/api/"])
        _ = try runTool("cp", [samples + "/edge-cases.ndjson", root + "/edge.ndjson"])
        #expect(try runTool("gzip", [root + "/edge.ndjson"]).status == 0)
        try writeFile(root + "/README.txt", Array("hand-made\n".utf8))
        let archive = scratch.file("exports.tar.gz")
        let tar = try runTool("tar", ["czf", archive, "exports"], in: scratch.path)
        #expect(tar.status == 0, "\(tar.error)")
        let order = try runTool("tar", ["tzf", archive]).output.split(separator: "\n").map(String.init)
            .filter { !$0.hasSuffix("/") && !$0.hasSuffix("README.txt") }
        #expect(order.count == 4)
        var expected: [Record] = []
        for member in order { expected += try RecordFiles.read(try fileBytes(scratch.file(member))) }
        let reader = try ArchiveReader(path: archive)
        #expect(try readRecords(reader) == expected)
        #expect(reader.skippedMembers.map(\.path) == ["exports/README.txt"])
    }

    @Test("verify reads everything it can and then says what it could not check")
    func verify() throws {
        let records = (0..<5).map { Record(recordName: "r\($0)", recordType: "T") }
        let bytes = try TarBuilder.tarGzip([
            .file("a.ndjson", try RecordFiles.file(Array(records.prefix(2)), form: .ndjson).bytes),
            .file("README.txt", Array("notes".utf8)),
            .file("b/c.json", try RecordFiles.file(Array(records.suffix(3)), form: .prettyResponse).bytes),
        ])
        let error = try #require(archiveError { _ = try ArchiveVerifier().verify(MemorySource(bytes, name: "loose.tgz")) })
        #expect(error.code == .missingManifest)
        #expect(error.member == nil)
        #expect(error.message.contains("no manifest.json among 3 members"))
        #expect(error.message.contains("2 record files hold 5 valid records"))
        #expect(error.message.contains("1 other member skipped: README.txt, not a record file"))
        #expect(error.message.contains("Not checked: member sizes, SHA-256 checksums and record counts"))

        let report = try ArchiveVerifier(requiresManifest: false).verify(MemorySource(bytes))
        #expect(report.recordCount == 5 && report.memberCount == 3 && report.recordMemberCount == 2)
        #expect(report.manifestPlacement == .notRead)
        #expect(report.skippedMembers.map(\.path) == ["README.txt"])

        // A bad record still fails verification, naming the member and line, before the missing manifest.
        let bad = try TarBuilder.tarGzip([.file("a.ndjson", Array("{\"recordName\":\"a\"}\n{]\n".utf8))])
        let failure = try #require(archiveError { _ = try ArchiveVerifier().verify(MemorySource(bad)) })
        #expect(failure.code == .invalidRecord && failure.member == "a.ndjson" && failure.line == 2)
    }

    @Test("extract writes every member of an archive without a manifest once the whole archive was read")
    func extract() throws {
        let scratch = try ScratchDirectory()
        let files: [(String, [UInt8])] = [
            ("exports/a.ndjson", Array("{\"recordName\":\"a\"}\n".utf8)),
            ("exports/README.txt", Array("notes\n".utf8)),
            ("exports/deep/er/b.ndjson.gz", try TarBuilder.gzip(Array("{\"recordName\":\"b\"}\n".utf8))),
        ]
        let tar = try TarBuilder.tar([.directory("exports/")] + files.map { .file($0.0, $0.1) })
        let reader = try ArchiveReader(source: MemorySource(try TarBuilder.gzip(tar)))
        #expect(try reader.extract(to: scratch.file("out")) == 3)
        for (path, bytes) in files { #expect(try fileBytes(scratch.file("out/" + path)) == bytes) }
        #expect(scratch.listing().filter { $0.contains(".ferry") }.isEmpty)
        #expect(!FileSystem.exists(scratch.file("out/manifest.json")))

        // Cut short inside the last member: nothing at all is put in place.
        let cut = try TarBuilder.gzip(Array(tar.prefix(tar.count - 1024 - 100)))
        let error = try #require(archiveError { try ArchiveReader(source: MemorySource(cut)).extract(to: scratch.file("cut")) })
        #expect(error.code == .truncated)
        #expect(scratch.listing().filter { $0.hasPrefix("cut/") }.isEmpty, "\(scratch.listing())")
    }
}
