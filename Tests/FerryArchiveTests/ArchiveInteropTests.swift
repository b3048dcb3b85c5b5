import Testing
import FerryArchive
import FerryIO
import FerryRecords
import FerryTestSupport

@Suite("Standard tools read Ferry archives and Ferry reads theirs")
struct ArchiveInteropTests {
    static let longZone = String(repeating: "VeryLongZoneName", count: 9) // pushes the path past 100 bytes

    static func ferryArchive(in scratch: ScratchDirectory) throws -> (path: String, records: [Record]) {
        var generator = RecordGenerator(seed: 42)
        var records = (0..<300).map { _ in generator.record() }
        records.append(Record(recordName: "long", recordType: "T", zoneID: ZoneID(zoneName: longZone, ownerRecordName: "_me")))
        let path = scratch.file("store.tar.gz")
        _ = try ArchiveRoundTripTests.writeArchive(records, to: path)
        return (path, records)
    }

    @Test("gzip -t and tar tzf accept Ferry's output, manifest first, long names intact")
    func standardToolsList() throws {
        let scratch = try ScratchDirectory()
        let (path, _) = try Self.ferryArchive(in: scratch)
        #expect(try runTool("gzip", ["-t", path]).status == 0)
        let listing = try runTool("tar", ["tzf", path])
        #expect(listing.status == 0, "\(listing.error)")
        let names = listing.output.split(separator: "\n").map(String.init)
        let manifest = try ArchiveReader(path: path).manifest
        #expect(names == ["manifest.json"] + manifest.members.map(\.path))
        #expect(names.contains { $0.contains(Self.longZone) && $0.utf8.count > 100 })
    }

    @Test("tar xzf extracts files whose SHA-256 matches the manifest")
    func standardToolsExtract() throws {
        let scratch = try ScratchDirectory()
        let (path, _) = try Self.ferryArchive(in: scratch)
        let target = scratch.file("x")
        _ = try runTool("mkdir", [target])
        #expect(try runTool("tar", ["xzf", path, "-C", target]).status == 0)
        let manifest = try ArchiveReader(path: path).manifest
        for member in manifest.members {
            let sum = try runTool("sha256sum", [target + "/" + member.path])
            #expect(String(sum.output.prefix(64)) == member.sha256, "\(member.path)")
        }
    }

    @Test("An archive assembled by hand with tar czf in the documented layout is read", arguments: ["gnu", "pax", "ustar"])
    func handAssembled(format: String) throws {
        let scratch = try ScratchDirectory()
        let root = scratch.file("src")
        let zone = format == "ustar" ? "Chats" : Self.longZone
        let chats = [
            Record(recordName: "m1", recordType: "Message", zoneID: ZoneID(zoneName: zone, ownerRecordName: "_owner"),
                   fields: ["text": RecordField(.string("hi"), type: .string)]),
            Record(recordName: "m2", recordType: "Message", zoneID: ZoneID(zoneName: zone, ownerRecordName: "_owner"),
                   fields: ["photo": RecordField(.asset(Asset(fileChecksum: "AQID", size: 3)), type: .asset)]),
        ]
        let plain = [Record(recordName: "p1", recordType: "Item")]
        let zonePath = "records/shared/\(zone)@_owner.ndjson"
        _ = try runTool("mkdir", ["-p", root + "/records/shared", root + "/records/public", root + "/assets"])
        try writeFile(root + "/" + zonePath, Array(chats.map { RecordJSON.encodedString($0) + "\n" }.joined().utf8))
        try writeFile(root + "/records/public/_defaultZone.ndjson", Array((RecordJSON.encodedString(plain[0]) + "\n").utf8))
        try writeFile(root + "/assets/AQID", [1, 2, 3])
        try runPython(pythonManifestBuilder + "\n" + #"""
zone = sys.argv[1]
path = "records/shared/%s@_owner.ndjson" % zone
zones = [{"database": "shared", "zoneID": {"zoneName": zone, "ownerRecordName": "_owner"}, "path": path,
          "recordCount": 2, "recordTypes": {"Message": 2}, "changeToken": "sync-7"},
         {"database": "public", "zoneID": {"zoneName": "_defaultZone"}, "path": "records/public/_defaultZone.ndjson",
          "recordCount": 1, "recordTypes": {"Item": 1}}]
m = manifest(".", [(path, "records"), ("records/public/_defaultZone.ndjson", "records"), ("assets/AQID", "asset")], zones)
m["members"][2]["fileChecksum"] = "AQID"
json.dump(m, open("manifest.json", "w"), indent=1)
"""#, [zone], in: root)
        let archive = scratch.file("hand.tgz")
        let tar = try runTool("tar", ["--format=\(format)", "-czf", archive, "manifest.json", "records", "assets"], in: root)
        #expect(tar.status == 0, "\(tar.error)")
        let reader = try ArchiveReader(path: archive)
        var assets: [String: [UInt8]] = [:]
        reader.onMember = { member, source in assets[member.fileChecksum ?? "?"] = try source.readAll() }
        let read = try readArchive(reader)
        #expect(canonical(read.map(\.record)) == canonical(chats + plain))
        #expect(Set(read.map(\.database)) == ["shared", "public"])
        #expect(read.first { $0.record.recordName == "m1" }?.zoneID?.ownerRecordName == "_owner")
        #expect(reader.manifest.zones.first?.changeToken == "sync-7")
        #expect(assets == ["AQID": [1, 2, 3]])
        #expect(try ArchiveVerifier().verify(path: archive).recordCount == 3)
    }
}
