import Testing
import FerryArchive
import FerryCompression
import FerryIO
import FerryRecords
import FerryTestSupport

@Suite("Archive round trips")
struct ArchiveRoundTripTests {
    /// Writes `records` into an archive, with a token for every zone and bytes for every asset.
    static func writeArchive(_ records: [Record], to path: String, database: (Int) -> String = { _ in "private" },
                             threads: Int = 2) throws -> (tokens: [String: String], assets: [String: [UInt8]]) {
        let writer = try ArchiveWriter(path: path, configuration: .init(
            compression: GzipSink.Configuration(level: 6, threads: threads), ferryVersion: "test", createdAt: 1_715_000_000_000))
        var tokens: [String: String] = [:]
        var assets: [String: [UInt8]] = [:]
        for (index, record) in records.enumerated() {
            try writer.add(record, database: database(index))
            let zone = record.zoneID ?? .default
            let key = "\(database(index))/\(zone.zoneName)/\(zone.ownerRecordName ?? "")"
            if tokens[key] == nil {
                tokens[key] = "token-\(tokens.count)"
                try writer.setChangeToken(tokens[key]!, for: zone, database: database(index))
            }
            for entry in record.fields ?? RecordFields() {
                let values = entry.field.value.listValue ?? [entry.field.value]
                for case .asset(let asset) in values {
                    guard let checksum = asset.fileChecksum, !checksum.isEmpty, assets[checksum] == nil else { continue }
                    let bytes = Array("asset \(checksum) of \(record.recordName)".utf8)
                    assets[checksum] = bytes
                    try writer.addAsset(fileChecksum: checksum, bytes: bytes)
                }
            }
        }
        try writer.finish()
        return (tokens, assets)
    }

    static func check(_ records: [Record], path: String, tokens: [String: String], assets: [String: [UInt8]],
                      database: String? = nil) throws {
        let reader = try ArchiveReader(path: path)
        var assetsRead: [String: [UInt8]] = [:]
        reader.onMember = { member, source in
            if member.kind == .asset, let checksum = member.fileChecksum { assetsRead[checksum] = try source.readAll() }
        }
        let read = try readArchive(reader)
        #expect(canonical(read.map(\.record)) == canonical(records))
        for item in read {
            #expect(item.zoneID?.zoneName == item.record.zoneName)
            #expect(item.zoneID?.ownerRecordName == item.record.zoneID?.ownerRecordName)
            if let database { #expect(item.database == database) }
        }
        var tokensRead: [String: String] = [:]
        for zone in reader.manifest.zones {
            tokensRead["\(zone.database)/\(zone.zoneID.zoneName)/\(zone.zoneID.ownerRecordName ?? "")"] = zone.changeToken
        }
        #expect(tokensRead == tokens)
        #expect(assetsRead == assets)
        #expect(reader.manifest.recordCount == records.count)
        #expect(reader.manifest.ferryVersion == "test")
        #expect(reader.manifest.createdAt == 1_715_000_000_000)
    }

    @Test("Every sample file survives records → archive → records with zones, tokens and assets",
          arguments: ["chat.ndjson", "shopping.ndjson", "edge-cases.ndjson"])
    func samples(name: String) throws {
        let records = try readRecords(path: samplesDirectory() + "/" + name)
        #expect(!records.isEmpty)
        let scratch = try ScratchDirectory()
        let path = scratch.file("store.tar.gz")
        let (tokens, assets) = try Self.writeArchive(records, to: path)
        try Self.check(records, path: path, tokens: tokens, assets: assets, database: "private")
        #expect(scratch.listing() == ["store.tar.gz"]) // no staging left behind
    }

    @Test("Generated records in several databases survive a round trip", arguments: [UInt64(1), 2, 3])
    func generated(seed: UInt64) throws {
        var generator = RecordGenerator(seed: seed)
        let records = (0..<600).map { _ in generator.record() }
        let databases = ["private", "shared", "public"]
        let scratch = try ScratchDirectory()
        let path = scratch.file("generated.tgz")
        let (tokens, assets) = try Self.writeArchive(records, to: path, database: { databases[$0 % 3] }, threads: 1)
        #expect(!assets.isEmpty)
        try Self.check(records, path: path, tokens: tokens, assets: assets)
        let report = try ArchiveVerifier().verify(path: path)
        #expect(report.recordCount == records.count)
    }

    @Test("The manifest counts records per type and infers the field schema")
    func manifestContents() throws {
        let records = [
            Record(recordName: "a", recordType: "Note", zoneID: ZoneID(zoneName: "Z", ownerRecordName: "_o"),
                   fields: ["title": RecordField(.string("x"), type: .string), "n": RecordField(.int64(1))]),
            Record(recordName: "b", recordType: "Note", zoneID: ZoneID(zoneName: "Z", ownerRecordName: "_o"),
                   fields: ["title": RecordField(.list([]), type: .unknownList)]),
            Record(recordName: "c", zoneID: ZoneID(zoneName: "Z", ownerRecordName: "_o"), deleted: true),
            Record(recordName: "d", recordType: "Tag"),
        ]
        let sink = MemorySink(name: "memory.tar.gz")
        let writer = try ArchiveWriter(sink: sink, configuration: .init(ferryVersion: "9.9", createdAt: 0))
        for record in records { try writer.add(record) }
        try writer.addZone(ZoneID(zoneName: "Empty"), database: "private")
        let manifest = try writer.finish()
        #expect(sink.isCommitted)
        #expect(manifest.zones.map(\.path) == ["records/private/Empty.ndjson", "records/private/Z@_o.ndjson",
                                               "records/private/_defaultZone.ndjson"])
        let zone = try #require(manifest.zones.first { $0.zoneID.zoneName == "Z" })
        #expect(zone.recordCount == 3)
        #expect(zone.recordTypeCounts == ["Note": 2])
        #expect(manifest.schema["Note"]?.recordCount == 2)
        #expect(manifest.schema["Note"]?.fields["title"] == ["STRING": 1, "UNKNOWN_LIST": 1])
        #expect(manifest.schema["Note"]?.fields["n"] == ["INT64": 1])
        let reader = try ArchiveReader(source: MemorySource(sink.bytes, name: "memory.tar.gz"))
        #expect(reader.manifest == manifest)
        #expect(canonical(try readArchive(reader).map(\.record)) == canonical(records))
    }

    @Test("The manifest keeps canonically equivalent record types and field names apart, as CloudKit does")
    func manifestExactNames() throws {
        // "é" (U+00E9) and "e" + U+0301: equal as Swift strings, two names to CloudKit.
        let composed = "\u{E9}", decomposed = "e\u{301}"
        let records = [
            Record(recordName: "a", recordType: composed, fields: [composed: RecordField(.int64(1))]),
            Record(recordName: "b", recordType: decomposed, fields: [decomposed: RecordField(.string("x"), type: .string)]),
            Record(recordName: "c", recordType: decomposed, fields: [composed: RecordField(.string("y"), type: .string)]),
        ]
        let sink = MemorySink(name: "memory.tar.gz")
        let writer = try ArchiveWriter(sink: sink, configuration: .init(ferryVersion: "9.9", createdAt: 0))
        for record in records { try writer.add(record) }
        let manifest = try writer.finish()
        let zone = try #require(manifest.zones.first)
        #expect(zone.recordTypeCounts.count == 2)
        #expect(manifest.schema.count == 2)
        #expect(manifest.schema.values.map(\.recordCount).sorted() == [1, 2])
        #expect(manifest.schema.values.map(\.fields.count).sorted() == [1, 2])
        // The JSON written holds each name as its own key, bytes as given.
        let json = manifest.jsonBytes()
        func occurrences(_ key: String) -> Int {
            let needle = Array("\"\(key)\"".utf8)
            return (0...(json.count - needle.count)).filter { json[$0..<($0 + needle.count)].elementsEqual(needle) }.count
        }
        #expect(occurrences(composed) == 4)    // recordTypes, schema, a field of each type
        #expect(occurrences(decomposed) == 3)  // recordTypes, schema, a field of type "e\u{301}"
        // Reading it back keeps them apart, and verify finds the records agree with it.
        let source = MemorySource(sink.bytes, name: "memory.tar.gz")
        let reader = try ArchiveReader(source: source)
        #expect(reader.manifest == manifest)
        #expect(reader.manifest.schema.count == 2)
        #expect(reader.manifest.zones.first?.recordTypeCounts.count == 2)
        let report = try ArchiveVerifier().verify(MemorySource(sink.bytes, name: "memory.tar.gz"))
        #expect(report.recordCount == 3)
    }

    @Test("Extracting writes the documented layout and every member matches the manifest")
    func extraction() throws {
        var generator = RecordGenerator(seed: 9)
        let records = (0..<200).map { _ in generator.record() }
        let scratch = try ScratchDirectory()
        let path = scratch.file("store.tar.gz")
        _ = try Self.writeArchive(records, to: path)
        let target = scratch.file("out")
        let reader = try ArchiveReader(path: path)
        try reader.extract(to: target)
        for member in reader.manifest.members {
            let bytes = try fileBytes(target + "/" + member.path)
            #expect(bytes.count == member.size)
        }
        var fromFiles: [Record] = []
        for zone in reader.manifest.zones { fromFiles += try readRecords(path: target + "/" + zone.path) }
        #expect(canonical(fromFiles) == canonical(records))
        #expect(FileSystem.exists(target + "/manifest.json"))
    }

    @Test("A writer that is abandoned leaves no output and no staging files")
    func abandon() throws {
        let scratch = try ScratchDirectory()
        let writer = try ArchiveWriter(path: scratch.file("never.tar.gz"))
        try writer.add(Record(recordName: "x"))
        try writer.addAsset(fileChecksum: "abc", bytes: [1, 2, 3])
        writer.abandon()
        #expect(scratch.listing().isEmpty)
        #expect(throws: ArchiveError.self) { try writer.add(Record(recordName: "y")) }
    }
}
